/**
 * The schedule follower (load/schedule-follower.ts) on its own: each request sent at its due time
 * from a source of due requests, and what an abort leaves behind counted by the source's rule
 * (a client thread counts what it held due before the window's end, rate-threads.ts).
 */
import { expect, test } from 'vitest';
import { monoMs } from '../../src/clock.js';
import { followSchedule, type DueRequest } from '../../src/load/schedule-follower.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';

const timeline = (id: string): RequestTimeline => ({ id, sendMs: monoMs(), chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0, end: { kind: 'done', atMs: monoMs() } });

function source(offsetsMs: number[]) {
  const start = monoMs() + 5;
  const queue: DueRequest[] = offsetsMs.map((o, index) => ({ index, dueMs: start + o, request: { prompt: `p${index}`, maxTokens: 1 } }));
  return { start, queue, next: () => queue.shift(), remaining: () => queue.length };
}

test('sends each at its due time, then an abort while one waits for its time counts what the source says is unsent', async () => {
  const s = source([0, 20, 400, 450]);
  const controller = new AbortController();
  const sentAt: number[] = [];
  const seen: Array<DueRequest | undefined> = [];
  setTimeout(() => controller.abort(), 150);
  const out = await followSchedule({
    next: s.next,
    remaining: s.remaining,
    lanes: 4,
    send: async (d) => {
      sentAt.push(monoMs() - d.dueMs);
      return timeline(`q${d.index}`);
    },
    signal: controller.signal,
    // as a client thread counts: what it holds due before the window's end (here: before +420 ms)
    unsentAtAbort: (d) => {
      seen.push(d);
      const end = s.start + 420;
      return (d !== undefined && d.dueMs < end ? 1 : 0) + s.queue.filter((q) => q.dueMs < end).length;
    },
  });
  expect(out.requests.map((r) => r.timeline.id)).toEqual(['q0', 'q1']);
  for (const late of sentAt) expect(late).toBeGreaterThanOrEqual(-0.001);
  // the abort came while q2 (due at +400) waited: q2 counts, q3 (+450) is after the window
  expect(seen.map((d) => d?.index)).toEqual([2]);
  expect(out.unsent).toBe(1);
  expect(out.waited).toBe(0);
  expect(out.peak).toBe(1);
});

test('without the rule an abort during the wait for a due time leaves nothing unsent (the cell\'s own thread)', async () => {
  const s = source([0, 300]);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const out = await followSchedule({ next: s.next, remaining: s.remaining, lanes: 1, send: async (d) => timeline(`q${d.index}`), signal: controller.signal });
  expect(out.requests).toHaveLength(1);
  expect(out.unsent).toBe(0);
});
