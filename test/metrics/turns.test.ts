/**
 * Per-turn figures (metrics/turns.ts) on hand-made timelines: the cell's window rules, split by
 * turn, so the turns' TTFT samples are the cell's.
 */
import { describe, expect, test } from 'vitest';
import type { RequestEnd, RequestTimeline } from '../../src/shapes/timeline.js';
import { computeTurnFigures } from '../../src/metrics/turns.js';
import { computeCellFigures } from '../../src/metrics/figures.js';

function tl(id: string, sendMs: number, firstTokenMs: number | undefined, end: RequestEnd | undefined, promptTokens?: number, sentHeadersMs?: number): RequestTimeline {
  const t: RequestTimeline = { id, sendMs, chunkMs: firstTokenMs === undefined ? [] : [firstTokenMs, firstTokenMs + 10], chunkTokens: firstTokenMs === undefined ? [] : [1, 1], tokenSource: 'usage', reasoningTokens: 0 };
  if (firstTokenMs !== undefined) t.firstTokenMs = firstTokenMs;
  if (end) t.end = end;
  if (promptTokens !== undefined) t.promptTokens = promptTokens;
  if (sentHeadersMs !== undefined) t.sentHeadersMs = sentHeadersMs;
  return t;
}
const done = (atMs: number): RequestEnd => ({ kind: 'done', atMs });
const W = { windowStartMs: 1000, windowEndMs: 2000 };

// turn 1: a (before the window, TTFT 300, ended before the window), b (inside, TTFT 200, done inside)
// turn 2: c (TTFT 50, done inside), d (TTFT 70, aborted at the end: no usage)
// turn 3: e (sent at the end, no token: no figure), f (first token after the window: none)
// s: a scout, not in turnOf
const timelines = [
  tl('a', 100, 400, done(900), 2600),
  tl('b', 1100, 1300, done(1500), 2610),
  tl('c', 1200, 1250, done(1400), 3300, 1210),
  tl('d', 1800, 1870, { kind: 'aborted', atMs: 2000 }),
  tl('e', 1990, undefined, { kind: 'aborted', atMs: 2000 }),
  tl('f', 1950, 2050, { kind: 'aborted', atMs: 2060 }),
  tl('s', 0, 50, done(60), 10),
];
const turnOf = new Map(
  Object.entries({ a: 1, b: 1, c: 2, d: 2, e: 3, f: 3 }).map(([id, turn]) => [id, { turn, conversation: 0 }] as const),
);

describe('computeTurnFigures', () => {
  const figures = computeTurnFigures({ timelines, ...W, turnOf });

  test('one entry per turn with a request in the figures, turn 1 first', () => {
    expect(figures.map((f) => f.turn)).toEqual([1, 2]);
  });

  test("TTFT by the cell's rule (first token by the window's end), requests = completed inside the window", () => {
    expect(figures[0]).toEqual({ turn: 1, requests: 1, ttftMs: { median: 250, p90: 290, p99: 299, samples: 2 }, promptTokensMean: 2605 });
    expect(figures[1]!.requests).toBe(1);
    expect(figures[1]!.ttftMs).toMatchObject({ median: 60, samples: 2 });
    // the mean prompt tokens of the turn's requests that report usage (d has none)
    expect(figures[1]!.promptTokensMean).toBe(3300);
  });

  test("the turns' TTFT samples are the cell's TTFT samples, split by turn", () => {
    const workers = timelines.filter((t) => t.id !== 's');
    const cell = computeCellFigures({ timelines: workers, ...W, metricsSamples: [] });
    expect(figures.reduce((n, f) => n + (f.ttftMs?.samples ?? 0), 0)).toBe(cell.ttftMs!.samples);
    expect(figures.reduce((n, f) => n + f.requests, 0)).toBe(cell.completedRequests);
  });

  test('the TTFT start is the given one (the matrix: the headers written)', () => {
    const fromHeaders = computeTurnFigures({ timelines, ...W, turnOf, ttftFrom: 'sent-headers' });
    // c's headers were written 10 ms after its send: 40 ms instead of 50 ms
    expect(fromHeaders[1]!.ttftMs).toMatchObject({ median: 55, samples: 2 });
  });

  test('a window that does not end after it starts is an error', () => {
    expect(() => computeTurnFigures({ timelines, windowStartMs: 5, windowEndMs: 5, turnOf })).toThrow(/must be finite and after windowStartMs/);
  });
});
