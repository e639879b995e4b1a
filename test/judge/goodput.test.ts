import { describe, expect, test } from 'vitest';
import type { RequestEnd, RequestTimeline } from '../../src/shapes/timeline.js';
import { computeCellFigures } from '../../src/metrics/figures.js';
import type { Goodput } from '../../src/shapes/result.js';
import { computeGoodput, sumGoodput, type GoodputInput } from '../../src/judge/goodput.js';
import { requestTbtP99Ms } from '../../src/metrics/request.js';
import { parseSloText } from '../../src/slo/slo.js';

/** A request: sent at `sendMs`, its token chunks [ms, tokens]; the first token is the first chunk unless given. */
function tl(
  id: string,
  sendMs: number,
  chunks: Array<[ms: number, tokens: number]>,
  extra: { end?: RequestEnd; firstTokenMs?: number; sentHeadersMs?: number } = {},
): RequestTimeline {
  const t: RequestTimeline = {
    id,
    sendMs,
    chunkMs: chunks.map((c) => c[0]),
    chunkTokens: chunks.map((c) => c[1]),
    tokenSource: 'chunks',
    reasoningTokens: 0,
  };
  const first = extra.firstTokenMs ?? chunks[0]?.[0];
  if (first !== undefined) t.firstTokenMs = first;
  if (extra.end) t.end = extra.end;
  if (extra.sentHeadersMs !== undefined) t.sentHeadersMs = extra.sentHeadersMs;
  return t;
}

/** `n` one-token chunks every `everyMs` from `fromMs` */
function steady(fromMs: number, everyMs: number, n: number): Array<[number, number]> {
  return Array.from({ length: n }, (_, i) => [fromMs + i * everyMs, 1] as [number, number]);
}

const WS = 1000;
const WE = 2000;

function goodput(timelines: RequestTimeline[], slo: string, extra: Partial<GoodputInput> = {}): Goodput {
  return computeGoodput({ timelines, windowStartMs: WS, windowEndMs: WE, ttftFrom: 'send', slo: parseSloText(slo), ...extra });
}

describe('requestTbtP99Ms', () => {
  test('one token per chunk: the p99 of the gaps inside the window', () => {
    // gaps 10 × 98, then one of 100: p99 of 99 gaps (sorted) at h = 98 × 0.99 = 97.02 → between 10 and 100
    const chunks = [...steady(1000, 10, 99), [2080, 1] as [number, number]];
    const t = tl('a', 0, chunks);
    const gaps = [...Array<number>(98).fill(10), 100].sort((a, b) => a - b);
    const h = (gaps.length - 1) * 0.99;
    const want = gaps[Math.floor(h)]! + (h - Math.floor(h)) * (gaps[Math.floor(h) + 1]! - gaps[Math.floor(h)]!);
    expect(requestTbtP99Ms(t, 0, 3000)).toBeCloseTo(want, 9);
    expect(requestTbtP99Ms(t, 0, 3000)).toBeGreaterThan(10);
  });

  test('all gaps equal: that gap', () => {
    expect(requestTbtP99Ms(tl('a', 0, steady(1000, 25, 20)), WS, WE)).toBe(25);
  });

  test('a k-token chunk counts k gaps, each gap / k', () => {
    // gaps: 100 ms for 4 tokens → 4 × 25; then 10 ms for 1 token → 10
    const t = tl('a', 0, [[1000, 1], [1100, 4], [1110, 1]]);
    // sorted gaps [10, 25, 25, 25, 25]: p99 at h = 3.96 → 25
    expect(requestTbtP99Ms(t, WS, WE)).toBe(25);
    // one 4-token chunk after 400 ms: four gaps of 100, so p99 is 100 (not 400)
    expect(requestTbtP99Ms(tl('b', 0, [[1000, 1], [1400, 4]]), WS, WE)).toBe(100);
  });

  test('the first chunk in the window starts the gaps; chunks outside the window and empty chunks are ignored', () => {
    // 500 (before the window) → 1000 would be a 500 ms gap; 2000 → 2500 (after) too
    const t = tl('a', 0, [[500, 1], [1000, 1], [1010, 0], [1020, 1], [1040, 1], [2500, 1]]);
    // inside: 1000, 1020, 1040 (the 0-token chunk at 1010 does not split the gap)
    expect(requestTbtP99Ms(t, WS, WE)).toBe(20);
  });

  test('fewer than two chunks in the window: undefined', () => {
    expect(requestTbtP99Ms(tl('a', 0, [[1500, 5]]), WS, WE)).toBeUndefined();
    expect(requestTbtP99Ms(tl('b', 0, [[500, 1], [2500, 1]]), WS, WE)).toBeUndefined();
    expect(requestTbtP99Ms(tl('c', 0, []), WS, WE)).toBeUndefined();
  });

  test('window bounds are inclusive', () => {
    expect(requestTbtP99Ms(tl('a', 0, [[1000, 1], [2000, 1]]), WS, WE)).toBe(1000);
  });
});

describe('computeGoodput: per-request judgments', () => {
  // fast: 20 ms between tokens (50 tok/s), TTFT 200 ms (sent 800, first token 1000)
  const fast = tl('fast', 800, steady(1000, 20, 50));
  // slow: 100 ms between tokens (10 tok/s), TTFT 200 ms
  const slow = tl('slow', 800, steady(1000, 100, 10));

  test('a fast request meets perRequest, a slow one misses it', () => {
    const g = goodput([fast, slow], 'perRequest>=20');
    expect(g.requests).toEqual({ met: 1, judged: 2, share: 0.5 });
    expect(g.tokens).toEqual({ met: 50, total: 60, share: 50 / 60 });
  });

  test('the bound is inclusive: exactly perRequest tok/s meets', () => {
    expect(goodput([slow], 'perRequest>=10').requests.met).toBe(1);
    expect(goodput([slow], 'perRequest>=10.01').requests.met).toBe(0);
  });

  test('each request gets the same tok/s as the cell figure computes for it', () => {
    // a one-request cell: the cell's per-request median is the request's own tok/s
    const multi = tl('m', 800, [[1000, 1], [1100, 3], [1400, 2]]); // span 400 ms for 5 tokens after the first: 12.5 tok/s
    const f = computeCellFigures({ timelines: [multi], windowStartMs: WS, windowEndMs: WE, metricsSamples: [] });
    expect(f.perRequestTokensPerSecond).toBeCloseTo(12.5, 9);
    expect(goodput([multi], 'perRequest>=12.5').requests.met).toBe(1);
    expect(goodput([multi], 'perRequest>=12.6').requests.met).toBe(0);
  });

  test('TTFT is judged per request', () => {
    const late = tl('late', 0, steady(1000, 20, 50)); // TTFT 1000 ms
    expect(goodput([fast, late], 'ttft<=500').requests).toEqual({ met: 1, judged: 2, share: 0.5 });
    expect(goodput([fast, late], 'ttft<=1000').requests.met).toBe(2);
    // a first token before the window: still judged on its TTFT
    const early = tl('early', 0, [[900, 1], ...steady(1000, 20, 10)]);
    expect(goodput([early], 'ttft<=900').requests).toEqual({ met: 1, judged: 1, share: 1 });
    expect(goodput([early], 'ttft<=899').requests).toEqual({ met: 0, judged: 1, share: 0 });
  });

  test("TTFT starts where the cell's does: 'send' or 'sent-headers' (falling back to send)", () => {
    // handed to undici at 0, headers written at 700 (the client's own queueing), first token at 1000
    const queued = tl('q', 0, steady(1000, 20, 20), { sentHeadersMs: 700 });
    const noHeaders = tl('n', 600, steady(1000, 20, 20));
    expect(goodput([queued], 'ttft<=500', { ttftFrom: 'send' }).requests.met).toBe(0);
    expect(goodput([queued], 'ttft<=500', { ttftFrom: 'sent-headers' }).requests.met).toBe(1);
    expect(goodput([queued], 'ttft<=299', { ttftFrom: 'sent-headers' }).requests.met).toBe(0);
    // no sentHeadersMs: 'sent-headers' falls back to the send time (TTFT 400)
    expect(goodput([noHeaders], 'ttft<=400', { ttftFrom: 'sent-headers' }).requests.met).toBe(1);
    expect(goodput([noHeaders], 'ttft<=399', { ttftFrom: 'sent-headers' }).requests.met).toBe(0);
    // the cell's TTFT figure from the same start agrees
    for (const from of ['send', 'sent-headers'] as const) {
      const f = computeCellFigures({ timelines: [queued], windowStartMs: WS, windowEndMs: WE, metricsSamples: [], ttftFrom: from });
      expect(goodput([queued], `ttft<=${f.ttftMs!.median}`, { ttftFrom: from }).requests.met).toBe(1);
      expect(goodput([queued], `ttft<=${f.ttftMs!.median - 1}`, { ttftFrom: from }).requests.met).toBe(0);
    }
  });

  test('TBT is judged on the p99 of the request’s own gaps, not its mean', () => {
    // 48 gaps of 10 ms and one of 500 (1480 → 1980): mean 20 ms (50 tok/s), p99 264.8 ms
    const spiky = tl('s', 800, [...steady(1000, 10, 49), [1980, 1]]);
    const even = tl('e', 800, steady(1000, 10, 50));
    expect(requestTbtP99Ms(spiky, WS, WE)).toBeGreaterThan(100);
    expect(goodput([spiky], 'tbt<=100').requests).toEqual({ met: 0, judged: 1, share: 0 });
    expect(goodput([spiky], 'perRequest>=20').requests.met).toBe(1); // its mean is fine
    expect(requestTbtP99Ms(spiky, WS, WE)).toBeCloseTo(264.8, 9);
    expect(goodput([even, fast], 'tbtP99<=20').requests.met).toBe(2);
    expect(goodput([spiky, even, fast], 'tbtP99<=20').requests).toEqual({ met: 2, judged: 3, share: 2 / 3 });
    expect(goodput([fast], 'tbt<=19.99').requests.met).toBe(0);
  });

  test('TBT of multi-token chunks: a 4-token chunk after 100 ms is four gaps of 25 ms', () => {
    const chunky = tl('c', 800, [[1000, 1], [1100, 4], [1200, 4], [1300, 4]]);
    expect(goodput([chunky], 'tbt<=25').requests.met).toBe(1);
    expect(goodput([chunky], 'tbt<=24.9').requests.met).toBe(0);
  });

  test('every per-request constraint must hold', () => {
    const slo = 'perRequest>=20,ttft<=500,tbtP99<=50';
    const late = tl('late', 0, steady(1000, 20, 50)); // TTFT 1000
    expect(goodput([fast, slow, late], slo).requests).toEqual({ met: 1, judged: 3, share: 1 / 3 });
    expect(goodput([fast, slow, late], slo).tokens).toEqual({ met: 50, total: 110, share: 50 / 110 });
  });

  test('only cell-level constraints (errors, goodput): every unfailed judged request meets', () => {
    const g = goodput([fast, slow], 'errors=0,goodput>=90%');
    expect(g.requests).toEqual({ met: 2, judged: 2, share: 1 });
    expect(g.tokens.share).toBe(1);
  });
});

describe('computeGoodput: failed requests are judged and never meet', () => {
  const fast = tl('fast', 800, steady(1000, 20, 50));

  test('an error up to the window’s end fails; one after it does not count', () => {
    // fast tokens, then an error inside the window
    const broke = tl('b', 800, steady(1000, 20, 10), { end: { kind: 'error', atMs: 1500, code: 'socket', message: 'reset' } });
    // an error after the window: judged on its figures (it meets)
    const brokeLater = tl('l', 800, steady(1000, 20, 20), { end: { kind: 'error', atMs: 2500, code: 'socket', message: 'reset' } });
    const g = goodput([fast, broke, brokeLater], 'perRequest>=20');
    expect(g.requests).toEqual({ met: 2, judged: 3, share: 2 / 3 });
    expect(g.tokens).toEqual({ met: 70, total: 80, share: 70 / 80 });
  });

  test('a request that failed without any token is judged too (it would not be otherwise)', () => {
    const refused = tl('r', 1200, [], { end: { kind: 'error', atMs: 1300, code: 'http-status', message: '503', httpStatus: 503 } });
    expect(goodput([fast, refused], 'ttft<=1000').requests).toEqual({ met: 1, judged: 2, share: 0.5 });
    // the same request without the error: not judged (no first token)
    expect(goodput([fast, tl('r', 1200, [])], 'ttft<=1000').requests).toEqual({ met: 1, judged: 1, share: 1 });
  });

  test('an error fails a request whatever its constraints (even with only cell-level ones)', () => {
    const broke = tl('b', 800, steady(1000, 20, 10), { end: { kind: 'error', atMs: 1500, code: 'no-done', message: 'closed' } });
    expect(goodput([fast, broke], 'goodput>=50%').requests).toEqual({ met: 1, judged: 2, share: 0.5 });
  });

  test('a silence of the stall limit after the first token is a failure; a shorter one is not', () => {
    // 10 tokens, then silent from 1180 to the window's end (820 ms), still in flight
    const stalled = tl('s', 800, steady(1000, 20, 10));
    expect(goodput([fast, stalled], 'ttft<=1000', { stallLimitMs: 800 }).requests).toEqual({ met: 1, judged: 2, share: 0.5 });
    // exactly at the limit: stalled (≥)
    expect(goodput([stalled], 'ttft<=1000', { stallLimitMs: 820 }).requests.met).toBe(0);
    expect(goodput([stalled], 'ttft<=1000', { stallLimitMs: 821 }).requests).toEqual({ met: 1, judged: 1, share: 1 });
    // no stall limit: no stall detection
    expect(goodput([stalled], 'ttft<=1000').requests.met).toBe(1);
  });

  test('silence before the first token is waiting, not a stall', () => {
    const waited = tl('w', 0, steady(1900, 10, 10)); // first token at 1900: 900 ms of waiting inside the window
    expect(goodput([waited], 'perRequest>=50', { stallLimitMs: 500 }).requests).toEqual({ met: 1, judged: 1, share: 1 });
  });

  test('the failed count in goodput matches the cell figure failedRequests', () => {
    const broke = tl('b', 800, steady(1000, 20, 10), { end: { kind: 'error', atMs: 1500, code: 'socket', message: 'reset' } });
    const stalled = tl('s', 800, steady(1000, 20, 10));
    // failed before the window: counted by the cell's failedRequests, so judged (and missed) here too
    const early = tl('e', 0, [[100, 1], [120, 1]], { end: { kind: 'error', atMs: 500, code: 'socket', message: 'reset' } });
    const timelines = [fast, broke, stalled, early];
    const f = computeCellFigures({ timelines, windowStartMs: WS, windowEndMs: WE, metricsSamples: [], stallLimit: 700 });
    expect(f.failedRequests).toBe(3);
    const g = goodput(timelines, 'ttft<=10000', { stallLimitMs: 700 });
    expect(g.requests.judged - g.requests.met).toBe(f.failedRequests);
    expect(g.requests).toEqual({ met: 1, judged: 4, share: 0.25 });
  });
});

describe('computeGoodput: which requests are judged', () => {
  test('no first token by the window’s end: not judged, whatever its TTFT would be', () => {
    const pending = tl('p', 1500, []); // in flight, no token
    const afterWindow = tl('a', 1500, [[2100, 1], [2120, 1]]); // first token after the window
    const g = goodput([pending, afterWindow], 'ttft<=100');
    expect(g.requests).toEqual({ met: 0, judged: 0, share: 0 });
    expect(g.tokens).toEqual({ met: 0, total: 0, share: 0 });
  });

  test('a speed constraint needs two chunks in the window; TTFT alone does not', () => {
    const oneChunk = tl('o', 1800, [[1990, 1]]); // TTFT 190, one token in the window
    expect(goodput([oneChunk], 'perRequest>=1').requests.judged).toBe(0);
    expect(goodput([oneChunk], 'tbt<=1000').requests.judged).toBe(0);
    expect(goodput([oneChunk], 'ttft<=200').requests).toEqual({ met: 1, judged: 1, share: 1 });
    expect(goodput([oneChunk], 'ttft<=200').tokens).toEqual({ met: 1, total: 1, share: 1 });
  });

  test('a request done before the window, with nothing in it, is not judged; one ending inside the window is', () => {
    const before = tl('b', 0, steady(100, 10, 10), { end: { kind: 'done', atMs: 200 } });
    expect(goodput([before], 'ttft<=1000').requests.judged).toBe(0);
    // its tokens all before the window, but it ends (done) inside it
    const endsInside = tl('e', 0, steady(100, 10, 10), { end: { kind: 'done', atMs: 1000 } });
    expect(goodput([endsInside], 'ttft<=1000').requests).toEqual({ met: 1, judged: 1, share: 1 });
    expect(goodput([endsInside], 'ttft<=1000').tokens.total).toBe(0);
  });

  test('tokens of unjudged requests still count in the token total', () => {
    const judged = tl('j', 800, steady(1000, 20, 10));
    const oneChunk = tl('o', 1800, [[1990, 3]]); // not judged with a speed constraint, 3 tokens in the window
    const g = goodput([judged, oneChunk], 'perRequest>=10');
    expect(g.requests).toEqual({ met: 1, judged: 1, share: 1 });
    expect(g.tokens).toEqual({ met: 10, total: 13, share: 10 / 13 });
  });

  test('only tokens inside the window count', () => {
    const spans = tl('s', 0, [[500, 4], ...steady(1000, 20, 5), [2500, 7]]);
    const g = goodput([spans], 'perRequest>=1');
    expect(g.tokens).toEqual({ met: 5, total: 5, share: 1 });
  });

  test('no timelines: zero shares, not NaN', () => {
    expect(goodput([], 'perRequest>=1')).toEqual({ requests: { met: 0, judged: 0, share: 0 }, tokens: { met: 0, total: 0, share: 0 } });
  });
});

describe('sumGoodput', () => {
  const a: Goodput = { requests: { met: 3, judged: 4, share: 0.75 }, tokens: { met: 300, total: 400, share: 0.75 } };
  const b: Goodput = { requests: { met: 1, judged: 6, share: 1 / 6 }, tokens: { met: 50, total: 600, share: 50 / 600 } };

  test('sums the counts and recomputes the shares (not the mean of the shares)', () => {
    const s = sumGoodput([a, b]);
    expect(s).toEqual({ requests: { met: 4, judged: 10, share: 0.4 }, tokens: { met: 350, total: 1000, share: 0.35 } });
    expect(s.requests.share).not.toBeCloseTo((a.requests.share + b.requests.share) / 2, 3);
  });

  test('one part is itself; no parts, or nothing judged, give zero shares', () => {
    expect(sumGoodput([a])).toEqual(a);
    expect(sumGoodput([])).toEqual({ requests: { met: 0, judged: 0, share: 0 }, tokens: { met: 0, total: 0, share: 0 } });
    const none: Goodput = { requests: { met: 0, judged: 0, share: 0 }, tokens: { met: 0, total: 0, share: 0 } };
    expect(sumGoodput([none, none])).toEqual(none);
  });

  test('summing the goodput of two halves of a cell equals the goodput of the whole', () => {
    const slo = 'perRequest>=20,ttft<=500';
    const ts = [
      tl('1', 800, steady(1000, 20, 50)),
      tl('2', 800, steady(1000, 100, 10)),
      tl('3', 0, steady(1000, 20, 30)),
      tl('4', 900, steady(1000, 40, 25)),
    ];
    const whole = goodput(ts, slo);
    const halves = sumGoodput([goodput(ts.slice(0, 2), slo), goodput(ts.slice(2), slo)]);
    expect(halves).toEqual(whole);
    expect(whole.requests).toEqual({ met: 2, judged: 4, share: 0.5 });
  });
});
