import { describe, expect, it, test } from 'vitest';
import type { RequestEnd, RequestTimeline, TokenSource } from '../../src/shapes/timeline.js';
import type { MetricsSample } from '../../src/shapes/engine.js';
import { cellFailures, longestSilenceMs, stallLimitMs, errorSummary } from '../../src/metrics/failures.js';
import { decodeCounterRunning, samplesLoad } from '../../src/metrics/server-load.js';
import { clientBusy } from '../../src/metrics/client-load.js';
import { activeRequestsDisagree, computeCellFigures, weakestTokenSource } from '../../src/metrics/figures.js';
import { requestTimeBetweenTokensMs } from '../../src/metrics/request.js';
import { streamEndings } from '../../src/metrics/stream-endings.js';

function tl(
  id: string,
  sendMs: number,
  chunks: Array<[ms: number, tokens: number]>,
  extra: { end?: RequestEnd; source?: TokenSource; promptTokens?: number; firstTokenMs?: number; sentHeadersMs?: number } = {},
): RequestTimeline {
  const t: RequestTimeline = {
    id,
    sendMs,
    chunkMs: chunks.map((c) => c[0]),
    chunkTokens: chunks.map((c) => c[1]),
    tokenSource: extra.source ?? 'chunks',
    reasoningTokens: 0,
  };
  const first = extra.firstTokenMs ?? chunks[0]?.[0];
  if (first !== undefined) t.firstTokenMs = first;
  if (extra.end) t.end = extra.end;
  if (extra.promptTokens !== undefined) t.promptTokens = extra.promptTokens;
  if (extra.sentHeadersMs !== undefined) t.sentHeadersMs = extra.sentHeadersMs;
  return t;
}

const W = { windowStartMs: 1000, windowEndMs: 2000 };

// A: sent before the window, spans both edges, one token per chunk
const A = tl('A', 0, [[500, 1], [1000, 1], [1250, 1], [1500, 1], [1750, 1], [2000, 1], [2100, 1]], {
  end: { kind: 'aborted', atMs: 2100 },
  promptTokens: 100,
});
// B: starts inside the window, multi-token chunks (continuous usage), completes inside
const B = tl('B', 1200, [[1300, 3], [1400, 2], [1600, 4]], { end: { kind: 'done', atMs: 1600 }, source: 'usage', promptTokens: 110 });
// C: failed inside the window, its only token before the window
const C = tl('C', 100, [[300, 1]], { end: { kind: 'error', atMs: 1500, code: 'stall', message: 'no bytes' } });
// D: sent near the end, no token yet, still in flight
const D = tl('D', 1900, []);

const samples: MetricsSample[] = [
  { atMs: 900, running: 10, waiting: 5 }, // before the window: ignored
  { atMs: 1000, running: 2, waiting: 0 },
  { atMs: 1500, running: 3, waiting: 1 },
  { atMs: 2000, running: 2 },
  { atMs: 2500, running: 10, waiting: 9 }, // after: ignored
];

describe('computeCellFigures on a hand-made cell', () => {
  const f = computeCellFigures({ timelines: [A, B, C, D], ...W, metricsSamples: samples });

  it('counts only tokens that arrived inside the window', () => {
    expect(f.outputTokens).toBe(5 + 9);
    expect(f.measuredForS).toBe(1);
    expect(f.totalTokensPerSecond).toBe(14);
  });

  it('computes time between tokens per request from in-window chunks only', () => {
    // A: (2000 − 1000) / (5 − 1) = 250; B: (1600 − 1300) / (9 − 3) = 50
    expect(f.timeBetweenTokensMs).toEqual({ median: 150, p90: 230, p99: 248, samples: 2 });
    // median of 1000/250 = 4 and 1000/50 = 20
    expect(f.perRequestTokensPerSecond).toBe(12);
  });

  it('computes TTFT over all worker requests with a first token, even before the window', () => {
    // A 500, B 100, C 200
    expect(f.ttftMs!.samples).toBe(3);
    expect(f.ttftMs!.median).toBe(200);
    expect(f.ttftMs!.p90).toBeCloseTo(440, 10);
    expect(f.ttftMs!.p99).toBeCloseTo(494, 10);
  });

  it('counts completed, failed and started requests', () => {
    expect(f.completedRequests).toBe(1);
    expect(f.failedRequests).toBe(1);
    expect(f.startedRequests).toBe(4);
  });

  it('computes client and server active requests and flags their disagreement', () => {
    // A 1000 + B 400 + C 500 + D 100 = 2000 ms busy over 1000 ms
    expect(f.clientActiveRequests).toBe(2);
    expect(f.serverActiveRequests).toBeCloseTo(7 / 3, 12);
    expect(f.averageActiveRequests).toBeCloseTo(7 / 3, 12);
    expect(f.averageActiveRequestsSource).toBe('server');
    expect(f.activeRequestsDisagree).toBe(true); // |2.33 − 2| > 0.2
    expect(f.maxWaitingRequests).toBe(1);
  });

  it("a disagreement the client's own count at the sample times explains is not flagged; one it does not explain is", () => {
    // the same samples, each with the client's in-flight count when it was taken: 2, 3, 2 (mean 7/3, as the server's)
    const atSamples = samples.map((s, i) => ({ ...s, clientInFlight: [0, 2, 3, 2, 0][i]! }));
    const g = computeCellFigures({ timelines: [A, B, C, D], ...W, metricsSamples: atSamples });
    expect(g.serverActiveRequests).toBeCloseTo(7 / 3, 12);
    expect(g.clientActiveRequests).toBe(2);
    expect(g.activeRequestsDisagree).toBe(false);
    // the client had fewer in flight at those instants than the server ran (another client's traffic): flagged
    const other = samples.map((s, i) => ({ ...s, clientInFlight: [0, 2, 2, 2, 0][i]! }));
    expect(computeCellFigures({ timelines: [A, B, C, D], ...W, metricsSamples: other }).activeRequestsDisagree).toBe(true);
    // time-weighted agreement is never overturned by the instants
    const agree = samples.map((s, i) => ({ ...s, running: 2, clientInFlight: [0, 5, 5, 5, 0][i]! }));
    expect(computeCellFigures({ timelines: [A, B, C, D], ...W, metricsSamples: agree }).activeRequestsDisagree).toBe(false);
  });

  it('takes the weakest token source and the median prompt tokens', () => {
    expect(f.tokenSource).toBe('chunks');
    expect(f.promptTokens).toBe(105);
  });
});

describe('computeCellFigures, degenerate input', () => {
  it('no requests, no samples', () => {
    const f = computeCellFigures({ timelines: [], ...W, metricsSamples: [] });
    expect(f.outputTokens).toBe(0);
    expect(f.totalTokensPerSecond).toBe(0);
    expect(f.timeBetweenTokensMs).toBeUndefined();
    expect(f.perRequestTokensPerSecond).toBeUndefined();
    expect(f.ttftMs).toBeUndefined();
    expect(f.serverActiveRequests).toBeUndefined();
    expect(f.maxWaitingRequests).toBeUndefined();
    expect(f.promptTokens).toBeUndefined();
    expect(f.clientActiveRequests).toBe(0);
    expect(f.averageActiveRequests).toBe(0);
    expect(f.averageActiveRequestsSource).toBe('client');
    expect(f.activeRequestsDisagree).toBe(false);
    expect(f.tokenSource).toBe('chunks');
    expect(f.startedRequests).toBe(0);
  });

  it('one token: counted, but no time between tokens', () => {
    const f = computeCellFigures({ timelines: [tl('x', 1000, [[1100, 1]])], ...W, metricsSamples: [] });
    expect(f.outputTokens).toBe(1);
    expect(f.timeBetweenTokensMs).toBeUndefined();
    expect(f.ttftMs).toEqual({ median: 100, p90: 100, p99: 100, samples: 1 });
    expect(f.clientActiveRequests).toBe(1); // never ended: in flight to the window's end
  });

  it('one chunk carrying several tokens: no time between tokens', () => {
    const f = computeCellFigures({ timelines: [tl('x', 1000, [[1100, 5]], { source: 'usage' })], ...W, metricsSamples: [] });
    expect(f.outputTokens).toBe(5);
    expect(f.timeBetweenTokensMs).toBeUndefined();
    expect(f.tokenSource).toBe('usage');
  });

  it('a request with only one chunk inside the window gets no time between tokens', () => {
    const t = tl('x', 0, [[800, 1], [900, 1], [1950, 1], [2050, 1]]);
    const f = computeCellFigures({ timelines: [t], ...W, metricsSamples: [] });
    expect(f.outputTokens).toBe(1);
    expect(f.timeBetweenTokensMs).toBeUndefined();
  });

  it('tokens at exactly the window edges count', () => {
    const t = tl('x', 0, [[1000, 2], [2000, 3]]);
    const f = computeCellFigures({ timelines: [t], ...W, metricsSamples: [] });
    expect(f.outputTokens).toBe(5);
    expect(f.timeBetweenTokensMs!.median).toBeCloseTo(1000 / 3, 10);
  });

  it('empty samples: the client count is shown', () => {
    const f = computeCellFigures({ timelines: [A, B], ...W, metricsSamples: [] });
    expect(f.serverActiveRequests).toBeUndefined();
    expect(f.averageActiveRequestsSource).toBe('client');
    expect(f.averageActiveRequests).toBe(f.clientActiveRequests);
    expect(f.activeRequestsDisagree).toBe(false);
  });

  it('samples without running/waiting fields give no server figures', () => {
    const f = computeCellFigures({ timelines: [A], ...W, metricsSamples: [{ atMs: 1500, kvUsage: 0.5 }] });
    expect(f.serverActiveRequests).toBeUndefined();
    expect(f.maxWaitingRequests).toBeUndefined();
  });

  it('TTFT can start at the request headers being written', () => {
    const t = tl('x', 1000, [[1100, 1]], { sentHeadersMs: 1040 });
    const u = tl('y', 1000, [[1200, 1]]); // no sentHeadersMs: falls back to send time
    const f = computeCellFigures({ timelines: [t, u], ...W, metricsSamples: [], ttftFrom: 'sent-headers' });
    expect(f.ttftMs!.median).toBe((60 + 200) / 2);
  });

  it('a done request outside the window is not completed; an error after the window is not failed', () => {
    const early = tl('e', 0, [[500, 1]], { end: { kind: 'done', atMs: 900 } });
    const late = tl('l', 1500, [[1600, 1]], { end: { kind: 'error', atMs: 2500, code: 'socket', message: 'x' } });
    const f = computeCellFigures({ timelines: [early, late], ...W, metricsSamples: [] });
    expect(f.completedRequests).toBe(0);
    expect(f.failedRequests).toBe(0);
  });

  it('rejects an empty or inverted window', () => {
    expect(() => computeCellFigures({ timelines: [], windowStartMs: 5, windowEndMs: 5, metricsSamples: [] })).toThrow(RangeError);
  });
});

describe('requestTimeBetweenTokensMs', () => {
  it('spreads the span over the tokens after the first chunk (multi-token chunks)', () => {
    // chunks of 3, 1, 1 tokens at 0, 10, 20 ms: 20 ms / 2 tokens = 10 ms (METHOD's (n−1) would say 5)
    const t = tl('x', 0, [[0, 3], [10, 1], [20, 1]]);
    expect(requestTimeBetweenTokensMs(t, 0, 100)).toBe(10);
  });
  it('agrees with (last − first) / (tokens − 1) for one token per chunk', () => {
    const t = tl('x', 0, [[0, 1], [10, 1], [30, 1]]);
    expect(requestTimeBetweenTokensMs(t, 0, 100)).toBe(15);
  });
  it('is undefined when all chunks share one arrival time', () => {
    const t = tl('x', 0, [[10, 1], [10, 1]]);
    expect(requestTimeBetweenTokensMs(t, 0, 100)).toBeUndefined();
  });
  it('skips zero-token entries', () => {
    const t = tl('x', 0, [[10, 1], [15, 0], [20, 1]]);
    expect(requestTimeBetweenTokensMs(t, 0, 100)).toBe(10);
  });
});

describe('helpers', () => {
  it('weakestTokenSource', () => {
    expect(weakestTokenSource(['usage', 'chunk-token-ids'])).toBe('chunk-token-ids');
    expect(weakestTokenSource(['usage'])).toBe('usage');
    expect(weakestTokenSource(['usage', 'chunks', 'chunk-token-ids'])).toBe('chunks');
    expect(weakestTokenSource([])).toBe('chunks');
  });
  it('activeRequestsDisagree: more than 10 % of max(client, 1)', () => {
    expect(activeRequestsDisagree(110, 100)).toBe(false); // exactly 10 %
    expect(activeRequestsDisagree(110.01, 100)).toBe(true);
    expect(activeRequestsDisagree(89.99, 100)).toBe(true);
    expect(activeRequestsDisagree(0.9, 0.5)).toBe(true); // 0.4 > 0.1
    expect(activeRequestsDisagree(0.55, 0.5)).toBe(false);
  });
  it('errorSummary groups failures by code up to the window end', () => {
    const s = errorSummary(
      [
        tl('a', 0, [], { end: { kind: 'error', atMs: 30, code: 'stall', message: 'second' } }),
        tl('b', 0, [], { end: { kind: 'error', atMs: 10, code: 'http-status', message: 'first', httpStatus: 500 } }),
        tl('c', 0, [], { end: { kind: 'error', atMs: 20, code: 'stall', message: 'x' } }),
        tl('d', 0, [], { end: { kind: 'error', atMs: 99, code: 'socket', message: 'late' } }),
        tl('e', 0, [], { end: { kind: 'done', atMs: 5 } }),
      ],
      50,
    );
    expect(s).toEqual({ count: 3, byCode: { stall: 2, 'http-status': 1 }, firstMessage: 'first' });
  });
});

describe('decodeCounterRunning and samplesLoad (llama.cpp decode counters)', () => {
  const at = (atMs: number, decodes: number, busySum: number, running?: number): MetricsSample => ({
    atMs,
    decodeCallsTotal: decodes,
    // printed as the server prints it: 6 significant digits
    busySlotsPerDecode: Number((busySum / decodes).toPrecision(6)),
    ...(running !== undefined ? { running } : {}),
  });

  it('gives the mean busy slots per decode call between two samples, whatever the samples read', () => {
    // 10,000 decodes at 2.5 busy before; then 2,000 decodes with 4 busy
    const first = at(0, 10_000, 25_000, 3);
    const last = at(1000, 12_000, 33_000, 3);
    expect(decodeCounterRunning(first, last)).toBeCloseTo(4, 2);
    // the instantaneous reads said 3; the counters win
    const load = samplesLoad([first, at(500, 11_000, 29_000, 3), last]);
    expect(load.meanRunning).toBeCloseTo(4, 2);
    expect(load.runningFrom).toBe('decode-counters');
    expect(load.runningSamples).toBe(3);
  });

  it('is undefined without decodes in between, or when the rounding of a long-lived server’s mean is too coarse', () => {
    expect(decodeCounterRunning(at(0, 500, 1000), at(1, 500, 1000))).toBeUndefined();
    // 10⁸ decodes before, 100 in the window: ±5e-6 × 2 × 2·10⁸ / 100 = ±20 requests
    expect(decodeCounterRunning(at(0, 1e8, 2e8), at(1, 1e8 + 100, 2e8 + 400))).toBeUndefined();
    // 1.2·10⁶ decodes at 1 busy before, 1,500 at 4 in the window: B's rounding alone (±0.008) would
    // pass; D is printed to 6 digits too (±5 decodes at each end), which puts it past ±0.02
    expect(decodeCounterRunning(at(0, 1.2e6, 1.2e6), at(1, 1.2e6 + 1500, 1.2e6 + 6000))).toBeUndefined();
    const load = samplesLoad([at(0, 1e8, 2e8, 3), at(1, 1e8 + 100, 2e8 + 400, 4)]);
    expect(load).toMatchObject({ meanRunning: 3.5, runningFrom: 'samples', runningSamples: 2 });
  });

  it('samples without counters: the mean of their running counts', () => {
    expect(samplesLoad([{ atMs: 0, running: 2, waiting: 1 }, { atMs: 1, running: 4, waiting: 0 }])).toEqual({
      meanRunning: 3,
      maxWaiting: 1,
      runningFrom: 'samples',
      runningSamples: 2,
    });
    expect(samplesLoad([])).toEqual({ runningSamples: 0 });
  });
});

describe("samplesLoad over llama.cpp's GET /slots (its metrics off): slotsRunning", () => {
  const slots = (running: number, clientInFlight: number, slotsTotal = 4): MetricsSample => ({ atMs: 0, running, runningFrom: 'slots', slotsTotal, clientInFlight });

  it('more streams than slots: every slot read busy, however few a scrape saw (it waits for an HTTP thread, served at a hand-over)', () => {
    // a real llama.cpp b4748, 4 slots, 0/8, 2 cores: the busy slots its six in-cell scrapes read,
    // while a keep-alive poller at 40 Hz saw 3.85 on average
    const load = samplesLoad([0, 2, 4, 2, 2, 2].map((busy) => slots(busy, 8)));
    expect(load).toEqual({ meanRunning: 4, runningFrom: 'slots', runningSamples: 6 });
  });

  it('streams at or under the slots: the busy slots as sampled', () => {
    // 0/4 on 4 slots: a scrape finds a free HTTP thread, and a hand-over it lands in is real idle time
    expect(samplesLoad([4, 3, 4, 4].map((busy) => slots(busy, 4))).meanRunning).toBe(3.75);
    expect(samplesLoad([3, 2, 3].map((busy) => slots(busy, 3))).meanRunning).toBeCloseTo(8 / 3, 9);
  });

  it('one stream over the slots is over them: every slot', () => {
    expect(samplesLoad([3, 4, 2].map((busy) => slots(busy, 5))).meanRunning).toBe(4);
  });

  it("only /slots samples: a running metric's sample is read as it is, whatever the client had in flight", () => {
    const metric: MetricsSample = { atMs: 0, running: 2, slotsTotal: 4, clientInFlight: 8 };
    expect(samplesLoad([metric, { ...metric, running: 3 }])).toEqual({ meanRunning: 2.5, runningFrom: 'samples', runningSamples: 2 });
  });

  it('a sample without its slot count or the client count reads its busy slots', () => {
    const bare: MetricsSample = { atMs: 0, running: 2, runningFrom: 'slots' };
    expect(samplesLoad([bare, { ...bare, clientInFlight: 8 }, { ...bare, slotsTotal: 4 }]).meanRunning).toBe(2);
  });

  it('Average active requests takes that reading, and the ⚠ still shows the client had more in flight', () => {
    const A = tl('a', 0, [[10, 1], [990, 1]], { end: { kind: 'done', atMs: 1000 } });
    const eight = Array.from({ length: 8 }, (_, i) => ({ ...A, id: `r${i}` }));
    const f = computeCellFigures({ timelines: eight, windowStartMs: 0, windowEndMs: 1000, metricsSamples: [0, 2, 4, 2].map((busy, i) => ({ ...slots(busy, 8), atMs: 100 + i * 250 })) });
    expect(f.averageActiveRequests).toBe(4);
    expect(f.averageActiveRequestsSource).toBe('server');
    expect(f.runningFrom).toBe('slots');
    expect(f.activeRequestsDisagree).toBe(true);
  });
});

describe('active requests from decode counters against the client (a count per decode call sees no idle time)', () => {
  const sample = (atMs: number, decodes: number, busySum: number): MetricsSample => ({ atMs, decodeCallsTotal: decodes, busySlotsPerDecode: Number((busySum / decodes).toPrecision(6)) });
  // window 0–1000: one request in flight 0–250 and 500–750 (a think time between): 0.5 in flight
  // on average, 1 whenever anything is; the server decoded 1 slot per call
  const timelines = [tl('a', 0, [[10, 1], [20, 1], [240, 1]], { end: { kind: 'done', atMs: 250 } }), tl('b', 500, [[510, 1], [740, 1]], { end: { kind: 'done', atMs: 750 } })];
  it('clientBusy: the in-flight count over the busy time only, and the busy share of the window', () => {
    const busy = clientBusy(timelines, 0, 1000);
    expect(busy.whileBusy).toBeCloseTo(1, 9);
    expect(busy.busyShare).toBeCloseTo(0.5, 9);
    expect(clientBusy([], 0, 1000)).toEqual({ whileBusy: 0, busyShare: 0 });
    // two requests overlapping 100–200: busy 0–300 (0.3), 1.33 in flight while busy
    const overlap = [tl('c', 0, [[50, 1]], { end: { kind: 'done', atMs: 200 } }), tl('d', 100, [[150, 1]], { end: { kind: 'done', atMs: 300 } })];
    expect(clientBusy(overlap, 0, 1000).busyShare).toBeCloseTo(0.3, 9);
    expect(clientBusy(overlap, 0, 1000).whileBusy).toBeCloseTo(400 / 300, 9);
  });
  it('a think time is no disagreement with busy slots per decode, and the average over the window counts it idle; with running samples it still is compared with the whole window', () => {
    const f = computeCellFigures({ timelines, windowStartMs: 0, windowEndMs: 1000, metricsSamples: [sample(0, 1000, 1000), sample(1000, 1500, 1500)] });
    expect(f.clientActiveRequests).toBeCloseTo(0.5, 9);
    // 1 busy slot per decode call, over the half of the window with a request in flight
    expect(f.averageActiveRequests).toBeCloseTo(0.5, 3);
    expect(f.serverActiveRequests).toBeCloseTo(0.5, 3);
    expect(f.averageActiveRequestsSource).toBe('server');
    expect(f.runningFrom).toBe('decode-counters');
    expect(f.activeRequestsDisagree).toBe(false);
    // a server that ran 2 slots per call where the client had 1 in flight: flagged, at 1.0 against 0.5
    const busier = computeCellFigures({ timelines, windowStartMs: 0, windowEndMs: 1000, metricsSamples: [sample(0, 1000, 1000), sample(1000, 1500, 2000)] });
    expect(busier.averageActiveRequests).toBeCloseTo(1, 3);
    expect(busier.activeRequestsDisagree).toBe(true);
    const g = computeCellFigures({ timelines, windowStartMs: 0, windowEndMs: 1000, metricsSamples: [{ atMs: 100, running: 1 }, { atMs: 900, running: 1 }] });
    expect(g.activeRequestsDisagree).toBe(true);
  });
});

describe('stalls: longestSilenceMs, stallLimitMs, cellFailures', () => {
  // window 1000–2000
  const flowing = tl('flow', 0, [[500, 1], [1100, 1], [1300, 1], [1500, 1], [1700, 1], [1900, 1]], { end: { kind: 'aborted', atMs: 2000 } });
  // tokens until 1200, then silent to the window's end
  const stalled = tl('stall', 0, [[500, 1], [900, 1], [1200, 1]], { end: { kind: 'aborted', atMs: 2000 } });
  // waiting in a queue: no first token at all (not a stall)
  const queued = tl('queued', 800, [], { end: { kind: 'aborted', atMs: 2000 } });
  // done at 1300 after a long gap before the window (the gap is clipped to the window)
  const doneEarly = tl('done', 0, [[100, 1], [1300, 1]], { end: { kind: 'done', atMs: 1300 } });

  test('longestSilenceMs: gaps after the first token, clipped to the window; none before the first token', () => {
    expect(longestSilenceMs(flowing, 1000, 2000)).toBe(200);
    expect(longestSilenceMs(stalled, 1000, 2000)).toBe(800);
    expect(longestSilenceMs(queued, 1000, 2000)).toBeUndefined();
    expect(longestSilenceMs(doneEarly, 1000, 2000)).toBe(300);
  });
  test('stallLimitMs: max(5 s, 50 × median TBT), at most the window; a configured limit wins', () => {
    expect(stallLimitMs(20, 30_000)).toBe(5_000);
    expect(stallLimitMs(200, 30_000)).toBe(10_000);
    expect(stallLimitMs(200, 3_000)).toBe(3_000);
    expect(stallLimitMs(undefined, 30_000)).toBe(5_000);
    expect(stallLimitMs(20, 30_000, 1_234)).toBe(1_234);
  });
  test('cellFailures: a stall counts once, as code stall; errors after the window do not count', () => {
    // streaming through the window, failing after it
    const late = tl('late', 0, [[500, 1], [1100, 1], [1500, 1], [1900, 1]], { end: { kind: 'error', atMs: 2500, code: 'http-status', message: 'late' } });
    const f = cellFailures([flowing, stalled, queued, doneEarly, late], 1000, 2000, 700);
    expect(f.count).toBe(1);
    expect(f.byCode).toEqual({ stall: 1 });
    expect(f.firstMessage).toMatch(/^stalled: no token for 0\.8 s after the first, inside the window \(stall limit 0\.7 s\)$/);
    // the failed-requests figure counts it too, with the limit it used
    const fig = computeCellFigures({ timelines: [flowing, stalled, queued], windowStartMs: 1000, windowEndMs: 2000, metricsSamples: [], stallLimit: 700 });
    expect(fig.failedRequests).toBe(1);
    expect(fig.stallLimitMs).toBe(700);
    // without stall detection it is not a failure
    expect(computeCellFigures({ timelines: [flowing, stalled], windowStartMs: 1000, windowEndMs: 2000, metricsSamples: [] }).failedRequests).toBe(0);
  });
});

describe('streamEndings', () => {
  const done = (id: string, atMs: number, ending?: RequestTimeline['ending']): RequestTimeline => {
    const t = tl(id, 0, [[atMs - 10, 1]], { end: { kind: 'done', atMs } });
    if (ending !== undefined) t.ending = ending;
    return t;
  };
  test('counts the completed requests of the window by ending; final-chunk and no ending count as done', () => {
    const timelines = [
      done('a', 1100, 'done'),
      done('b', 1200, 'final-chunk'),
      done('c', 1300),
      done('d', 1400, 'close-after-finish'),
      done('e', 1500, 'close-after-finish'),
      done('f', 2000, 'unterminated-last'), // at the window's end: inside
      done('g', 999, 'unterminated-last'), // before the window
      done('h', 2001, 'close-after-finish'), // after it
      A, // aborted
      C, // failed
      D, // in flight
    ];
    expect(streamEndings(timelines, W.windowStartMs, W.windowEndMs)).toEqual({ done: 3, closeAfterFinish: 2, unterminatedLast: 1 });
    // the total is the window's completed requests, as the figure counts them
    const figures = computeCellFigures({ timelines, ...W, metricsSamples: [] });
    expect(figures.completedRequests).toBe(6);
  });
  test('an empty cell has no endings', () => {
    expect(streamEndings([], 0, 1000)).toEqual({ done: 0, closeAfterFinish: 0, unterminatedLast: 0 });
  });
});
