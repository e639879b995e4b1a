import { describe, expect, test } from 'vitest';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { streamBunching } from '../../src/metrics/bunching.js';
import { isBuffered } from '../../src/judge/buffered.js';

function timeline(chunks: Array<[number, number]>): RequestTimeline {
  return { id: 'r', sendMs: 0, chunkMs: chunks.map((c) => c[0]), chunkTokens: chunks.map((c) => c[1]), tokenSource: 'chunks', reasoningTokens: 0 };
}

/** a request streaming `tokens` chunks every `gapMs`, from `startMs`, k tokens each */
const steady = (startMs: number, tokens: number, gapMs: number, k = 1): RequestTimeline =>
  timeline(Array.from({ length: tokens }, (_, i) => [startMs + i * gapMs, k] as [number, number]));

/** chunks released in bursts of `size` at once every `everyMs` (a buffering proxy) */
const bunched = (startMs: number, bursts: number, size: number, everyMs: number): RequestTimeline =>
  timeline(Array.from({ length: bursts * size }, (_, i) => [startMs + Math.floor(i / size) * everyMs, 1] as [number, number]));

describe('streams bunched on the way', () => {
  test('an engine stream (one chunk per step, several tokens per chunk too) is not buffered', () => {
    for (const t of [[steady(10, 200, 10)], [steady(10, 200, 3, 4)], [steady(5, 50, 16.8), steady(7, 50, 16.8)]]) {
      const b = streamBunching(t, 0, 5_000)!;
      expect(isBuffered(b)).toBe(false);
      expect(b.zeroGapShare).toBe(0);
    }
  });

  test('a buffering proxy (bursts of 40 chunks every 400 ms) is buffered, with the burst sizes', () => {
    const b = streamBunching([bunched(100, 10, 40, 400), bunched(120, 10, 40, 400)], 0, 5_000)!;
    expect(isBuffered(b)).toBe(true);
    expect(b.zeroGapShare).toBeGreaterThan(0.9);
    expect(b.burstTokens.median).toBe(40);
    expect(b.burstTokens.max).toBe(40);
    expect(b.requests).toBe(2);
  });

  test('a request delivered whole (one read, no gap at all) is buffered through its burst size', () => {
    const whole = timeline([[900, 60]]);
    const b = streamBunching([whole, timeline([[950, 60]])], 0, 5_000)!;
    expect(b.gaps).toBe(0);
    expect(b.oneBurstRequests).toBe(2);
    expect(isBuffered(b)).toBe(true);
  });

  test('a few coalesced reads (a client hiccup) do not make a stream buffered; only the window counts', () => {
    const chunks: Array<[number, number]> = Array.from({ length: 100 }, (_, i) => [i * 10, 1]);
    chunks[50] = [chunks[49]![0], 1];
    expect(isBuffered(streamBunching([timeline(chunks)], 0, 5_000)!)).toBe(false);
    expect(streamBunching([bunched(10_000, 5, 40, 400)], 0, 5_000)).toBeUndefined();
  });
});

describe('the status and the reasons on the cell', () => {
  const figures = { failedRequests: 0, clientActiveRequests: 2, activeRequestsDisagree: false } as const;
  test('bunched timelines make the cell Stream buffered, with the evidence; clean ones do not', async () => {
    const { cellStatuses } = await import('../../src/judge/status.js');
    const bunchedCell = cellStatuses({
      concurrency: 2,
      figures,
      timelines: [bunched(100, 10, 40, 400), bunched(120, 10, 40, 400)],
      windowStartMs: 0,
      windowEndMs: 5_000,
      loopDelayBoundMs: 50,
    });
    expect(bunchedCell.statuses).toContain('stream-buffered');
    expect(bunchedCell.evidence.streamBuffered?.burstTokens.median).toBe(40);
    expect(bunchedCell.evidence.streamBuffered).not.toHaveProperty('buffered');
    const clean = cellStatuses({ concurrency: 2, figures, timelines: [steady(10, 200, 10), steady(15, 200, 10)], windowStartMs: 0, windowEndMs: 5_000, loopDelayBoundMs: 50 });
    expect(clean.statuses).not.toContain('stream-buffered');
  });

  test('a figure that cannot be computed says why', async () => {
    const { whyNotComputed } = await import('../../src/metrics/figures.js');
    expect(whyNotComputed([timeline([[900, 60]])], 0, 5_000, true, false)?.timeBetweenTokensMs).toMatch(/arrived at one instant/);
    expect(whyNotComputed([timeline([[9_000, 1]])], 0, 5_000, true, true)).toEqual({ timeBetweenTokensMs: 'no token arrived inside the window', ttftMs: "no request's first token arrived by the window's end" });
    expect(whyNotComputed([steady(10, 5, 10)], 0, 5_000, false, false)).toBeUndefined();
  });
});
