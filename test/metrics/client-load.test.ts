/**
 * The client's own running and waiting counts (metrics/client-load.ts clientLoad) and the client-side
 * Requests queued rule (status.ts clientQueued), on hand-made timelines and on closed loops built
 * here: C workers, each sending its next request when the last one ended, on a server with S
 * slots (S ≥ C: it runs all at once) that admits in order, spends `prefillMs` before a request's
 * first token and then one token per `stepMs`.
 */
import { describe, expect, test } from 'vitest';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { CLIENT_PEAK_MIN_SHARE, CLIENT_WAIT_MIN_MS, clientLoad, waitThresholdMs } from '../../src/metrics/client-load.js';
import { computeCellFigures } from '../../src/metrics/figures.js';
import { cellStatuses, clientQueued } from '../../src/judge/status.js';

function request(id: string, sendMs: number, firstMs: number | undefined, tokenMs: number[], endMs: number, kind: 'done' | 'error' = 'done'): RequestTimeline {
  const t: RequestTimeline = { id, sendMs, sentHeadersMs: sendMs, chunkMs: tokenMs, chunkTokens: tokenMs.map(() => 1), tokenSource: 'usage', reasoningTokens: 0 };
  if (firstMs !== undefined) t.firstTokenMs = firstMs;
  t.end = kind === 'done' ? { kind, atMs: endMs } : { kind, atMs: endMs, code: 'http-status', message: '500' };
  return t;
}

interface Loop {
  concurrency: number;
  slots: number;
  prefillMs: number;
  stepMs: number;
  tokens: number;
  /** ms between a request's end and its worker's next send */
  gapMs?: number;
  untilMs: number;
}

/** the index of the smallest of `times` (the first of equal ones) */
function earliest(times: readonly number[]): number {
  let w = 0;
  for (let i = 1; i < times.length; i++) if (times[i]! < times[w]!) w = i;
  return w;
}

/** A closed loop on a server with `slots` slots (FIFO), as timelines. */
function closedLoop(o: Loop): RequestTimeline[] {
  const out: RequestTimeline[] = [];
  const slotFree = new Array<number>(o.slots).fill(0);
  const next = new Array<number>(o.concurrency).fill(0).map((_, w) => w * 0.1);
  let seq = 0;
  for (;;) {
    // the earliest send goes next (FIFO admission), to the slot free first
    const w = earliest(next);
    const send = next[w]!;
    if (send >= o.untilMs) break;
    const s = earliest(slotFree);
    const start = Math.max(send, slotFree[s]!);
    const first = start + o.prefillMs;
    const chunks = Array.from({ length: o.tokens }, (_, k) => first + k * o.stepMs);
    const end = chunks[chunks.length - 1]! + 0.5;
    slotFree[s] = chunks[chunks.length - 1]!;
    out.push(request(`w${w}-r${seq++}`, send, first, chunks, end));
    next[w] = end + (o.gapMs ?? 1);
  }
  return out;
}

const WINDOW = { start: 2_000, end: 6_000 };
const judge = (timelines: RequestTimeline[], concurrency: number) =>
  cellStatuses({
    concurrency,
    figures: { failedRequests: 0, clientActiveRequests: concurrency, activeRequestsDisagree: false },
    timelines,
    samples: [],
    windowStartMs: WINDOW.start,
    windowEndMs: WINDOW.end,
    loopDelayBoundMs: Infinity,
  });

describe('clientLoad on hand-made timelines', () => {
  test('waiting from the headers to the first token, running from the first to the last token, clipped to the window', () => {
    const a = request('a', 0, 100, [100, 400, 700], 750); // waits 0–100, runs 100–700
    const b = request('b', 200, 600, [600, 900], 1_100); // waits 200–600, runs 600–900
    const c = request('c', 800, undefined, [], 950, 'error'); // waits 800–950, never runs
    const load = clientLoad([a, b, c], 0, 1_000);
    expect(load.meanRunning).toBeCloseTo((600 + 300) / 1_000, 9);
    expect(load.meanWaiting).toBeCloseTo((100 + 400 + 150) / 1_000, 9);
    expect(load.maxWaiting).toBe(1);
    expect(load.peakRunning).toBe(2); // 600–700: both running, 10 % of the window
    // at ≥ 2 running with someone waiting: never
    expect(load.heldAtPeakShare).toBe(0);
  });

  test('a hand-over at one instant is not an overlap; one shorter than the minimum share is not the peak', () => {
    const a = request('a', 0, 10, [10, 500], 500);
    const b = request('b', 0, 500, [500, 1_000], 1_000);
    expect(clientLoad([a, b], 0, 1_000).peakRunning).toBe(1);
    // b's first token read 2 ms before a's last (0.2 % of the window < CLIENT_PEAK_MIN_SHARE)
    expect(CLIENT_PEAK_MIN_SHARE).toBeGreaterThan(0.002);
    const early = request('b', 0, 498, [498, 1_000], 1_000);
    const load = clientLoad([a, early], 0, 1_000);
    expect(load.peakRunning).toBe(1);
    expect(load.heldAtPeakShare).toBeCloseTo(0.49, 2); // b waited 10–498 while a ran
  });

  test('computeCellFigures stores the client-side figures, and names the running source', () => {
    const timelines = closedLoop({ concurrency: 2, slots: 1, prefillMs: 5, stepMs: 10, tokens: 64, untilMs: WINDOW.end });
    const f = computeCellFigures({ timelines, windowStartMs: WINDOW.start, windowEndMs: WINDOW.end, metricsSamples: [], ttftFrom: 'sent-headers' });
    expect(f.runningFrom).toBe('client');
    expect(f.averageActiveRequestsSource).toBe('client');
    expect(f.clientRunningRequests!).toBeGreaterThan(0.95);
    expect(f.clientRunningRequests!).toBeLessThanOrEqual(1);
    expect(f.clientWaitingRequests!).toBeGreaterThan(0.95);
    // in the hand-over the next request waits for its first token while the ended one's worker has sent again
    expect(f.clientMaxWaitingRequests).toBe(2);
    const withServer = computeCellFigures({ timelines, windowStartMs: WINDOW.start, windowEndMs: WINDOW.end, metricsSamples: [{ atMs: 3_000, running: 1 }] });
    expect(withServer.runningFrom).toBe('samples');
    const waitingOnly = computeCellFigures({ timelines, windowStartMs: WINDOW.start, windowEndMs: WINDOW.end, metricsSamples: [{ atMs: 3_000, waiting: 1 }] });
    expect(waitingOnly.runningFrom).toBeUndefined();
  });
});

describe('client-side Requests queued on closed loops', () => {
  // sglang-h200-like: about 90 ms to the first token, 17 ms a token, 64 tokens
  const healthy = { prefillMs: 90, stepMs: 17, tokens: 64, untilMs: WINDOW.end };

  for (const c of [1, 2, 4, 8]) {
    test(`a server that runs all ${c} at once is Valid (peak = C)`, () => {
      const timelines = closedLoop({ ...healthy, concurrency: c, slots: 64 });
      const r = judge(timelines, c);
      expect(clientLoad(timelines, WINDOW.start, WINDOW.end).peakRunning).toBe(c);
      expect(r.statuses).toEqual(['valid']);
    });
  }

  test('…even with a first token that takes as long as the stream (TTFT half of each request) at C = 2', () => {
    const timelines = closedLoop({ prefillMs: 600, stepMs: 10, tokens: 64, untilMs: WINDOW.end, concurrency: 2, slots: 64 });
    expect(judge(timelines, 2).statuses).toEqual(['valid']);
  });

  for (const [c, slots] of [[2, 1], [4, 1], [8, 4], [8, 7]] as const) {
    test(`${slots} slot(s), ${c} streams: Requests queued, client-side evidence`, () => {
      const timelines = closedLoop({ ...healthy, prefillMs: 5, concurrency: c, slots });
      const r = judge(timelines, c);
      expect(r.statuses).toEqual(['requests-queued']);
      expect(r.evidence.queued).toMatchObject({ source: 'client', concurrency: c, peakRunning: slots });
      expect(r.evidence.queued!.heldAtPeakShare!).toBeGreaterThan(0.9);
      expect(r.evidence.queued!.meanWaiting!).toBeGreaterThan(c - slots - 0.1);
    });
  }

  test('a worker waiting out its backoff after failures is the client holding back, not a queue', () => {
    // 3 healthy workers on a server with room, one whose requests fail at once and back off 500 ms
    const healthyLoop = closedLoop({ ...healthy, concurrency: 3, slots: 64 });
    const failing: RequestTimeline[] = [];
    for (let t = 0, i = 0; t < WINDOW.end; t += 502, i++) failing.push(request(`f${i}`, t, undefined, [], t + 2, 'error'));
    const r = cellStatuses({
      concurrency: 4,
      figures: { failedRequests: failing.length, clientActiveRequests: 3, activeRequestsDisagree: false },
      timelines: [...healthyLoop, ...failing],
      samples: [],
      windowStartMs: WINDOW.start,
      windowEndMs: WINDOW.end,
      loopDelayBoundMs: Infinity,
    });
    expect(r.statuses).toEqual(['errors']);
  });

  test('server figures, when there are any, decide; the client-side rule is not asked', () => {
    const timelines = closedLoop({ ...healthy, prefillMs: 5, concurrency: 2, slots: 1 });
    const r = cellStatuses({
      concurrency: 2,
      figures: { failedRequests: 0, clientActiveRequests: 2, activeRequestsDisagree: false },
      timelines,
      samples: [{ atMs: 3_000, running: 2, waiting: 0 }],
      windowStartMs: WINDOW.start,
      windowEndMs: WINDOW.end,
      loopDelayBoundMs: Infinity,
    });
    expect(r.statuses).toEqual(['valid']);
  });

  test('clientQueued: never at C = 1, never without a running request', () => {
    expect(clientQueued({ peakRunning: 1, heldAtPeakShare: 1 }, 1)).toBe(false);
    expect(clientQueued({ peakRunning: 0, heldAtPeakShare: 1 }, 4)).toBe(false);
    expect(clientQueued({ peakRunning: 3, heldAtPeakShare: 0.49 }, 4)).toBe(false);
    expect(clientQueued({ peakRunning: 3, heldAtPeakShare: 0.5 }, 4)).toBe(true);
  });
});

/**
 * A polled server (issue 60): its HTTP layer polls the engine every 20 ms and sends what it found,
 * so a stream's first chunk is its backlog (sent 100 ms after the request), then a chunk a poll.
 * `byTurns`: the engine runs one stream at a time; the others get their first chunk and then
 * nothing until their turn. `stallAt`: every stream stalls for 300 ms from that moment (a long
 * prompt's prefill, all streams at once).
 */
function polledLoop(o: { concurrency: number; byTurns: boolean; stallAt?: number; untilMs: number }): RequestTimeline[] {
  const out: RequestTimeline[] = [];
  const next = new Array<number>(o.concurrency).fill(0).map((_, w) => w * 7);
  let free = 0;
  let seq = 0;
  for (;;) {
    const w = earliest(next);
    const send = next[w]!;
    if (send >= o.untilMs) break;
    const first = send + 100;
    const turn = o.byTurns ? Math.max(first, free) : first;
    const chunks = [first];
    for (let at = turn + 20; chunks.length < 16; at += 20) {
      const stalled = o.stallAt !== undefined && at >= o.stallAt && at < o.stallAt + 300;
      if (!stalled) chunks.push(at);
    }
    const t = request(`w${w}-r${seq++}`, send, first, chunks, chunks[chunks.length - 1]! + 0.5);
    t.chunkTokens = chunks.map((_, i) => (i === 0 ? 25 : 3));
    out.push(t);
    if (o.byTurns) free = chunks[chunks.length - 1]!;
    next[w] = chunks[chunks.length - 1]! + 1;
  }
  return out;
}

describe('client-side Requests queued on a polled server (issue 60)', () => {
  test('streams taken by turns, each sent its backlog chunk at once: Requests queued, the silence after it counted as waiting', () => {
    const timelines = polledLoop({ concurrency: 4, byTurns: true, untilMs: WINDOW.end });
    const load = clientLoad(timelines, WINDOW.start, WINDOW.end);
    expect(load.peakRunning).toBe(1);
    const r = judge(timelines, 4);
    expect(r.statuses).toEqual(['requests-queued']);
    expect(r.evidence.queued).toMatchObject({ source: 'client', concurrency: 4, peakRunning: 1 });
    expect(r.evidence.queued!.meanWaiting!).toBeGreaterThan(2);
  });

  test('the same polls with every stream generating at once: Valid, also through a 300 ms stall of all of them', () => {
    for (const stallAt of [undefined, 3_000]) {
      const timelines = polledLoop({ concurrency: 4, byTurns: false, untilMs: WINDOW.end, ...(stallAt !== undefined ? { stallAt } : {}) });
      expect(clientLoad(timelines, WINDOW.start, WINDOW.end).peakRunning).toBe(4);
      expect(judge(timelines, 4).statuses).toEqual(['valid']);
    }
  });

  test('a client that stalls (a loaded machine) stamps every stream late at once: no silence is a wait, the running count stays the server\'s', () => {
    // 8 streams, a token every 10 ms; the client's loop is held up 150 ms every second, and the
    // chunks that came meanwhile are read at its end, each stream's a few microseconds apart
    const timelines = Array.from({ length: 8 }, (_, k) => {
      const chunkMs: number[] = [];
      for (let at = k; at < 6_000; at += 10) {
        const inStall = at % 1_000 >= 500 && at % 1_000 < 650;
        chunkMs.push(inStall ? at - (at % 1_000) + 650 + k * 0.003 : at);
      }
      return request(`s${k}`, 0, chunkMs[0]!, chunkMs, 6_001);
    });
    const load = clientLoad(timelines, WINDOW.start, WINDOW.end);
    // every stream runs to its last token before the window's end (at most 10 ms short)
    expect(load.meanRunning).toBeGreaterThan(7.95);
    expect(load.meanWaiting).toBe(0);
  });

  test('waitThresholdMs: 8 × the usual gap, at least 50 ms; none for a stream of bunches or of fewer than two gaps', () => {
    const polled = request('p', 0, 100, [100, 400, 420, 440, 460, 480], 500);
    expect(waitThresholdMs(polled)).toBe(160);
    expect(waitThresholdMs(request('s', 0, 10, [10, 13, 16, 19], 20))).toBe(CLIENT_WAIT_MIN_MS);
    // bursts of tokens 1 ms apart every 400 ms: the silences are how a buffering proxy sends them
    const bursts = [0, 1, 2, 3, 400, 401, 402, 403, 800, 801, 802, 803];
    expect(waitThresholdMs(request('b', 0, 0, bursts, 810))).toBe(Infinity);
    expect(waitThresholdMs(request('two', 0, 0, [0, 300], 310))).toBe(Infinity);
  });
});
