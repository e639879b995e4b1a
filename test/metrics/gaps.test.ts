/**
 * Every gap between tokens (src/metrics/gaps.ts): which gaps count against the window, the ITL
 * quantiles and max, the longest gap's request, time and multiple, the binned counts, and a cell's
 * figures, SLO and budgets that take them.
 */
import { describe, expect, test } from 'vitest';
import { cellGaps, GAP_EDGES_MS, gapHistogram, longGap, sumGapHistograms } from '../../src/metrics/gaps.js';
import { computeCellFigures } from '../../src/metrics/figures.js';
import { medianFigures } from '../../src/metrics/repeat-figures.js';
import { parseSloText } from '../../src/slo/slo.js';
import { sloVerdict } from '../../src/judge/slo-verdict.js';
import { cellFigureValue } from '../../src/judge/thresholds.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import type { CellResult } from '../../src/shapes/result.js';

function timeline(id: string, chunkMs: number[], chunkTokens = chunkMs.map(() => 1)): RequestTimeline {
  return { id, sendMs: chunkMs[0]! - 100, firstTokenMs: chunkMs[0]!, chunkMs, chunkTokens, tokenSource: 'chunks', end: { kind: 'done', atMs: chunkMs[chunkMs.length - 1]! } } as RequestTimeline;
}

/** a stream: `n` tokens every `everyMs` from `fromMs`, with one pause of `pauseMs` after token `pauseAfter` */
function pausing(id: string, fromMs: number, n: number, everyMs: number, pauseAfter: number, pauseMs: number): RequestTimeline {
  const at: number[] = [];
  let t = fromMs;
  for (let i = 0; i < n; i++) {
    at.push(t);
    t += i + 1 === pauseAfter ? pauseMs : everyMs;
  }
  return timeline(id, at);
}

describe('which gaps count', () => {
  test("a gap counts when its later chunk is inside the window, so one straddling the window's start counts; the first token's wait is no gap", () => {
    // window 1000–2000: chunks at 900 (before), 1050, 1100 (in), 2100 (after)
    const g = cellGaps([timeline('a', [900, 1050, 1100, 2100])], 1000, 2000)!;
    expect(g.interTokenLatencyMs.gaps).toBe(2); // 900→1050 (straddles), 1050→1100; 1100→2100 ends outside
    expect(g.interTokenLatencyMs.max).toBe(150);
    // its next chunk (2,100) is after the window: from 1,100 to the window's end it was silent, longer than any closed gap
    expect(g.longestGap).toEqual({ requestId: 'a', atS: 1, ms: 900, medianGaps: 900 / 100, open: true });
    // ended before the window closed, no silence of its own runs at the end: the longest gap is the closed one
    const ended = { ...timeline('b', [900, 1050, 1100]), end: { kind: 'done' as const, atMs: 1100.1 } };
    expect(cellGaps([ended], 1000, 2000)!.longestGap).toEqual({ requestId: 'b', atS: 0.05, ms: 150, medianGaps: 150 / 100 });
  });

  test('a chunk of several tokens is one gap (as vLLM counts ITL); chunks without tokens are not chunks', () => {
    const t = timeline('a', [0, 10, 15, 30, 50], [1, 4, 0, 1, 2]);
    const g = cellGaps([t], 0, 100)!;
    // gaps 10 (0→10), 20 (10→30: the 0-token chunk at 15 is skipped), 20 (30→50)
    expect(g.interTokenLatencyMs).toEqual({ median: 20, p90: 20, p95: 20, p99: 20, max: 20, gaps: 3 });
  });

  test('no request with two token chunks, the later inside the window: no gaps (not zeros)', () => {
    expect(cellGaps([timeline('a', [500])], 0, 1000)).toBeUndefined();
    expect(cellGaps([timeline('a', [100, 1500])], 0, 1000)).toBeUndefined();
    expect(gapHistogram([timeline('a', [500])], 0, 1000)).toBeUndefined();
  });

  test('quantiles are type 7 over every gap of every request, the longest gap named by its request', () => {
    // 4 requests of 31 tokens 10 ms apart, one pausing 3 s after its 15th token
    const ts = [0, 1, 2, 3].map((i) => pausing(`r${i}`, i * 2.5, 31, 10, 15, i === 2 ? 3000 : 10));
    const g = cellGaps(ts, 0, 10_000)!;
    expect(g.interTokenLatencyMs.gaps).toBe(4 * 30);
    expect(g.interTokenLatencyMs.median).toBeCloseTo(10, 5);
    expect(g.interTokenLatencyMs.max).toBe(3000);
    // 120 gaps: p99 at h = 119 × 0.99 = 117.81, between the 118th (10) and the 119th (10) sorted gap
    expect(g.interTokenLatencyMs.p99).toBeCloseTo(10, 5);
    expect(g.longestGap.requestId).toBe('r2');
    expect(g.longestGap.atS).toBeCloseTo((2 * 2.5 + 14 * 10 + 3000) / 1000, 9);
    expect(g.longestGap.medianGaps).toBeCloseTo(300, 3);
    expect(longGap(g.longestGap)).toBe(true);
    // as many median gaps, but short: a 12 ms hiccup of a server streaming a token a millisecond (a real llama.cpp on a busy 2-core machine) is no stall worth a note
    expect(longGap({ ...g.longestGap, ms: 12.6, medianGaps: 12 })).toBe(false);
    expect(longGap({ ...g.longestGap, ms: 100, medianGaps: 10 })).toBe(true);
  });

  test('a silence still running when the window closes is the longest gap (open) where it is longer than every closed one; ITL keeps only closed gaps', () => {
    // window 0–10,000: 'frozen' streams 10 ms gaps until 5,000, then nothing; it is aborted at the window's end
    const frozen = timeline('frozen', Array.from({ length: 101 }, (_, i) => 4000 + i * 10));
    frozen.end = { kind: 'aborted', atMs: 10_000 };
    // 'done' ended at 3,000, long before the window's end: no silence of its own after that
    const done = timeline('done', Array.from({ length: 51 }, (_, i) => 2500 + i * 10));
    const g = cellGaps([frozen, done], 0, 10_000)!;
    expect(g.interTokenLatencyMs.max).toBeCloseTo(10, 9);
    expect(g.longestGap).toEqual({ requestId: 'frozen', atS: 10, ms: 5000, medianGaps: expect.closeTo(500, 3), open: true });
    const f = computeCellFigures({ timelines: [frozen, done], windowStartMs: 0, windowEndMs: 10_000, metricsSamples: [], stallLimit: 60_000 });
    const cell = { context: 0, contextLabel: '0', concurrency: 2, status: 'valid', statuses: ['valid'], evidence: {}, figures: f, finishedAt: '' } as CellResult;
    expect(sloVerdict(cell, parseSloText('maxGapMs<=2000')).binding?.detail).toBe('longest gap 5,000.0 ms > 2,000.0 ms');
    expect(cellFigureValue(cell, 'maxGapMs')).toBe(5000);
    // a request still waiting for its first token is not silent
    const waiting = { ...timeline('w', [1]), chunkMs: [], chunkTokens: [], firstTokenMs: undefined, end: undefined } as unknown as RequestTimeline;
    expect(cellGaps([done, waiting], 0, 10_000)!.longestGap.open).toBeUndefined();
  });

  test('the histogram counts every gap once, in bins of GAP_EDGES_MS (below the first, at or above the last)', () => {
    const ts = [timeline('a', [0, 0.05, 10.05, 3010.05, 203_010.05])];
    const h = gapHistogram(ts, 0, 1e9)!;
    expect(h.edgesMs).toEqual(GAP_EDGES_MS);
    expect(h.counts.length).toBe(GAP_EDGES_MS.length + 1);
    expect(h.counts.reduce((a, b) => a + b, 0)).toBe(4);
    expect(h.counts[0]).toBe(1); // 0.05 ms < 0.1
    expect(h.counts[GAP_EDGES_MS.indexOf(10) + 1]).toBe(1); // 10 ms in [10, 20)
    expect(h.counts[GAP_EDGES_MS.indexOf(2000) + 1]).toBe(1); // 3,000 ms in [2,000, 5,000)
    expect(h.counts[GAP_EDGES_MS.length]).toBe(1); // 200 s ≥ 100 s
  });

  test("a repeated cell's histogram holds every repeat's gaps: the bins summed, a stall in one repeat kept", () => {
    const first = gapHistogram([pausing('a', 0, 50, 10, 20, 3000)], 0, 1e9)!;
    const second = gapHistogram([timeline('b', [0, 10, 20, 30])], 0, 1e9)!;
    const both = sumGapHistograms([first, undefined, second])!;
    expect(both).toEqual(gapHistogram([pausing('a', 0, 50, 10, 20, 3000), timeline('b', [0, 10, 20, 30])], 0, 1e9));
    expect(both.counts[GAP_EDGES_MS.indexOf(2000) + 1]).toBe(1);
    expect(both.counts.reduce((a, b) => a + b, 0)).toBe(49 + 3);
    expect(sumGapHistograms([undefined])).toBeUndefined();
  });

  test('two million gaps: one Float32 sort, exact max, no call-argument limit', () => {
    const n = 2_000_001;
    const chunkMs = new Float64Array(n);
    for (let i = 0; i < n; i++) chunkMs[i] = i * 10 + (i === 1_000_000 ? 2500 : 0) + (i > 1_000_000 ? 2500 : 0);
    const t = { id: 'big', sendMs: -5, firstTokenMs: 0, chunkMs, chunkTokens: new Uint16Array(n).fill(1), tokenSource: 'chunks' } as RequestTimeline;
    const g = cellGaps([t], 0, 1e12)!;
    expect(g.interTokenLatencyMs.gaps).toBe(n - 1);
    expect(g.interTokenLatencyMs.max).toBe(2510);
    expect(g.interTokenLatencyMs.p99).toBeCloseTo(10, 3);
  });
});

describe('a cell with a 3 s pause in every stream', () => {
  // 10 ms between tokens, 30 tokens, a 3 s pause after the 15th: each stream 3.29 s; 4 streams at a time, back to back
  const streams = (windowEndMs: number): RequestTimeline[] => {
    const out: RequestTimeline[] = [];
    for (let w = 0; w < 4; w++) for (let start = w * 3; start < windowEndMs; start += 3300) out.push(pausing(`w${w}-${start}`, start, 30, 10, 15, 3000));
    return out;
  };

  for (const windowS of [6, 15]) {
    test(`${windowS} s window: ITL p99 and max show the pause, the mean per request hides most of it; itlP99 and maxGapMs SLOs fail it`, () => {
      const ts = streams(1000 + windowS * 1000);
      const f = computeCellFigures({ timelines: ts, windowStartMs: 1000, windowEndMs: 1000 + windowS * 1000, metricsSamples: [], stallLimit: undefined });
      expect(f.interTokenLatencyMs!.max).toBe(3000);
      expect(f.interTokenLatencyMs!.p99).toBeGreaterThan(1000);
      expect(f.interTokenLatencyMs!.median).toBeCloseTo(10, 5);
      // each request's mean over its window span spreads the pause over its 29 gaps
      expect(f.timeBetweenTokensMs!.p99).toBeLessThan(300);
      expect(f.longestGap!.ms).toBe(3000);
      expect(f.longestGap!.medianGaps).toBeCloseTo(300, 3);
      const cell = { context: 0, contextLabel: '0', concurrency: 4, status: 'valid', statuses: ['valid'], evidence: {}, figures: f, finishedAt: '' } as CellResult;
      const itl = sloVerdict(cell, parseSloText('itlP99<=100'));
      expect(itl.meets).toBe(false);
      expect(itl.binding?.constraint).toBe('interTokenLatencyMs');
      expect(itl.binding?.detail).toMatch(/^ITL p99 [\d,]+\.\d ms > 100\.0 ms$/);
      const gap = sloVerdict(cell, parseSloText('maxGapMs<=2000'));
      expect(gap.binding?.detail).toBe('longest gap 3,000.0 ms > 2,000.0 ms');
      expect(sloVerdict(cell, parseSloText('itlP50<=20,maxGapMs<=5000')).meets).toBe(true);
      expect(cellFigureValue(cell, 'itlP99Ms')).toBe(f.interTokenLatencyMs!.p99);
      expect(cellFigureValue(cell, 'maxGapMs')).toBe(3000);
    });
  }

  test('over repeats: quantiles are medians, the max and the longest gap the largest', () => {
    const a = computeCellFigures({ timelines: streams(7000), windowStartMs: 1000, windowEndMs: 7000, metricsSamples: [], stallLimit: undefined });
    const b = computeCellFigures({ timelines: [timeline('calm', Array.from({ length: 100 }, (_, i) => 1000 + i * 10))], windowStartMs: 1000, windowEndMs: 7000, metricsSamples: [], stallLimit: undefined });
    const m = medianFigures([a, b]);
    expect(m.interTokenLatencyMs!.max).toBe(3000);
    expect(m.longestGap).toEqual(a.longestGap);
    expect(m.interTokenLatencyMs!.p99).toBeCloseTo((a.interTokenLatencyMs!.p99 + b.interTokenLatencyMs!.p99) / 2, 6);
  });
});

describe('the SLO text', () => {
  test('itl[P50|P90|P95|P99] and maxGapMs parse, print back, and refuse >= or twice', () => {
    expect(parseSloText('itlP95<=150,maxGapMs<=2000').text).toBe('itlP95<=150,maxGapMs<=2000');
    expect(parseSloText('itl<=20').interTokenLatencyMs).toEqual({ stat: 'median', max: 20 });
    expect(() => parseSloText('itlP99>=5')).toThrow(/itlP99 takes <= \(it is a maximum\)/);
    expect(() => parseSloText('itlP99<=5,itl<=9')).toThrow(/inter-token latency is given twice/);
    expect(() => parseSloText('maxGap<=0')).toThrow(/longest-gap maximum must be above 0/);
    expect(() => parseSloText('itlP42<=5')).toThrow(/not an SLO figure; use .*itlP95/);
  });
});
