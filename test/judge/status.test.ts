import { describe, expect, it, test } from 'vitest';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import type { MetricsSample } from '../../src/shapes/engine.js';
import { cellStatuses, decodeTurnover, queuedRunningBound, overCapacity, timingErrorEstimateMs, type CellStatusInput } from '../../src/judge/status.js';
import { slotsRunningForQueue } from '../../src/metrics/server-load.js';

type Figs = CellStatusInput['figures'];
const okFigures: Figs = { failedRequests: 0, serverActiveRequests: 8, clientActiveRequests: 8, maxWaitingRequests: 0, activeRequestsDisagree: false };

function input(over: Partial<CellStatusInput> = {}): CellStatusInput {
  return { concurrency: 8, figures: okFigures, loopDelayMs: { p99: 2 }, loopDelayBoundMs: 20, ...over };
}

function failed(id: string, atMs: number, code: 'stall' | 'http-status', message: string): RequestTimeline {
  return { id, sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0, end: { kind: 'error', atMs, code, message } };
}

describe('cellStatuses', () => {
  it('is valid when nothing applies', () => {
    expect(cellStatuses(input())).toEqual({ status: 'valid', statuses: ['valid'], evidence: {} });
  });

  it('orders statuses by precedence: client-limited > warmup-timed-out > errors > requests-queued', () => {
    const all = input({
      loopDelayMs: { p99: 50 },
      gateTimedOut: true,
      gateWaitedMs: 60_000,
      drainTimedOut: true,
      drainWaitedMs: 5_000,
      timelines: [failed('a', 20, 'stall', 'no bytes'), failed('b', 10, 'http-status', 'HTTP 500'), failed('c', 30, 'stall', 'x')],
      figures: { failedRequests: 3, serverActiveRequests: 6, clientActiveRequests: 8, maxWaitingRequests: 2, activeRequestsDisagree: true },
    });
    const r = cellStatuses(all);
    expect(r.status).toBe('client-limited');
    expect(r.statuses).toEqual(['client-limited', 'warmup-timed-out', 'errors', 'requests-queued']);
    expect(r.evidence).toEqual({
      clientLimited: { eventLoopDelayP99Ms: 50, boundMs: 20 },
      warmupTimedOut: { phase: 'gate', waitedMs: 60_000 },
      errors: { count: 3, byCode: { stall: 2, 'http-status': 1 }, firstMessage: 'HTTP 500' },
      queued: { concurrency: 8, maxWaiting: 2, meanRunning: 6 },
      activeDisagreement: { server: 6, client: 8 },
    });
    const calm = { loopDelayMs: { p99: 1 } };
    expect(cellStatuses({ ...all, ...calm }).status).toBe('warmup-timed-out');
    expect(cellStatuses({ ...all, ...calm, gateTimedOut: false, drainTimedOut: false }).status).toBe('errors');
    expect(cellStatuses({ ...all, ...calm, gateTimedOut: false, drainTimedOut: false, figures: { ...all.figures, failedRequests: 0 } }).status).toBe(
      'requests-queued',
    );
  });

  it('errors without timelines: the count only', () => {
    const r = cellStatuses(input({ figures: { ...okFigures, failedRequests: 2 } }));
    expect(r.status).toBe('errors');
    expect(r.evidence.errors).toEqual({ count: 2, byCode: {} });
  });

  it('client-limited only above the bound', () => {
    expect(cellStatuses(input({ loopDelayMs: { p99: 20 } })).status).toBe('valid');
    expect(cellStatuses(input({ loopDelayMs: { p99: 20.1 } })).status).toBe('client-limited');
    expect(cellStatuses(input({ loopDelayMs: undefined })).status).toBe('valid');
  });

  it('the timing error estimate combines loop delay and read lag as the root of their squares, so one stall seen by both is not counted twice', () => {
    // 64 streams on one thread against the tick server (docs/accuracy.md): true p99 1.86 ms, loop delay 2.18, read lag 3.20
    expect(timingErrorEstimateMs({ loopDelayMs: { p99: 2.18 }, arrivalLagMs: { p99: 3.2 } })).toBeCloseTo(3.872, 3);
    expect(timingErrorEstimateMs({ loopDelayMs: { p99: 3 }, arrivalLagMs: { p99: 4 } })).toBe(5);
    expect(timingErrorEstimateMs({ loopDelayMs: { p99: 7 } })).toBe(7);
    expect(timingErrorEstimateMs({ arrivalLagMs: { p99: 6 } })).toBe(6);
    expect(timingErrorEstimateMs({})).toBeUndefined();
    const at = (loop: number, lag: number) => cellStatuses(input({ loopDelayBoundMs: 5, loopDelayMs: { p99: loop }, arrivalLagMs: { p99: lag } }));
    // the sum (5.38) marked this cell; the estimate (3.9) does not
    expect(at(2.18, 3.2).status).toBe('valid');
    // 512 streams on one thread against the simulator, true p99 6.24 ms: marked, the evidence carries the estimate
    const over = at(4.84, 3.7);
    expect(over.status).toBe('client-limited');
    expect(over.evidence.clientLimited?.timingErrorP99Ms).toBeCloseTo(Math.hypot(4.84, 3.7), 9);
    expect(at(3, 4).status).toBe('valid'); // exactly the bound is not over it
    expect(at(3, 4.01).status).toBe('client-limited');
  });

  it('with client threads, a thread whose reads do not queue does not hide one that is over', () => {
    // thread 1: a late loop (6.02 ms) but one read a turn (not its own load); thread 2: over by its own load (5.66 ms)
    const threads = [
      { loopDelayMs: { p99: 6 }, arrivalLagMs: { p99: 0.5 }, cpuCores: 0.2 },
      { loopDelayMs: { p99: 4 }, arrivalLagMs: { p99: 4 }, cpuCores: 0.3 },
    ];
    const r = cellStatuses(input({ loopDelayBoundMs: 5, clientThreads: threads }));
    expect(r.status).toBe('client-limited');
    expect(r.evidence.clientLimited).toMatchObject({ thread: 2, threads: 2, eventLoopDelayP99Ms: 4, arrivalLagP99Ms: 4 });
    expect(r.evidence.clientLimited?.timingErrorP99Ms).toBeCloseTo(Math.hypot(4, 4), 9);
    // the first alone is not over
    expect(cellStatuses(input({ loopDelayBoundMs: 5, clientThreads: [threads[0]!] })).status).toBe('valid');
  });

  it('warmup-timed-out from the drain barrier', () => {
    const r = cellStatuses(input({ drainTimedOut: true, drainWaitedMs: 1234, gateTimedOut: false, gateWaitedMs: 10 }));
    expect(r.status).toBe('warmup-timed-out');
    expect(r.evidence.warmupTimedOut).toEqual({ phase: 'drain', waitedMs: 1234 });
  });

  it('requests-queued from figures: waiting > 0, or mean running < 0.95 × C; only with samples', () => {
    const f = (serverActiveRequests: number | undefined, maxWaitingRequests: number | undefined): CellStatusInput =>
      input({ figures: { failedRequests: 0, serverActiveRequests, maxWaitingRequests, clientActiveRequests: 8, activeRequestsDisagree: false } });
    expect(cellStatuses(f(8, 1)).status).toBe('requests-queued');
    expect(cellStatuses(f(7.6, 0)).status).toBe('valid'); // exactly 0.95 × 8
    expect(cellStatuses(f(7.59, 0)).status).toBe('requests-queued');
    expect(cellStatuses(f(undefined, undefined)).status).toBe('valid');
    expect(cellStatuses(f(undefined, 3)).evidence.queued).toEqual({ concurrency: 8, maxWaiting: 3 });
  });

  it('requests-queued from samples when they are given', () => {
    const samples = (rows: Array<[number | undefined, number | undefined]>): MetricsSample[] =>
      rows.map(([running, waiting], i) => ({ atMs: i, ...(running !== undefined ? { running } : {}), ...(waiting !== undefined ? { waiting } : {}) }));
    expect(cellStatuses(input({ samples: samples([[8, 0], [8, 1], [8, 0]]) })).evidence.queued).toEqual({ concurrency: 8, maxWaiting: 1, meanRunning: 8 });
    // mean running 7.6 = 0.95 × 8: not queued; both samples one request short: queued
    expect(cellStatuses(input({ samples: samples([[8, 0], [7.2, 0]]) })).status).toBe('valid');
    expect(cellStatuses(input({ samples: samples([[7, 0], [7, 0]]) })).status).toBe('requests-queued');
    // with 20 samples the bound at C = 8 is METHOD.md's 0.95 × 8 = 7.6: a mean of 7.7 is valid, 7.55 queued
    const twenty = (eights: number): Array<[number, number]> => [...Array<[number, number]>(eights).fill([8, 0]), ...Array<[number, number]>(20 - eights).fill([7, 0])];
    expect(cellStatuses(input({ samples: samples(twenty(14)) })).status).toBe('valid');
    expect(cellStatuses(input({ samples: samples(twenty(11)) })).status).toBe('requests-queued');
    // no running/waiting in the samples, or no samples: not judged
    expect(cellStatuses(input({ samples: samples([[undefined, undefined]]) })).status).toBe('valid');
    expect(cellStatuses(input({ samples: [] })).status).toBe('valid');
  });
});

describe('cellStatuses streamEndings evidence', () => {
  it('is set when a completed stream ended otherwise than by a complete [DONE], and is no status', () => {
    const r = cellStatuses(input({ streamEndings: { done: 30, closeAfterFinish: 12, unterminatedLast: 3 } }));
    expect(r.statuses).toEqual(['valid']);
    expect(r.evidence).toEqual({ streamEndings: { done: 30, closeAfterFinish: 12, unterminatedLast: 3 } });
    expect(cellStatuses(input({ streamEndings: { done: 0, closeAfterFinish: 0, unterminatedLast: 1 } })).evidence.streamEndings).toEqual({
      done: 0,
      closeAfterFinish: 0,
      unterminatedLast: 1,
    });
  });
  it('is absent when every stream ended with [DONE] (or its final chunk), or none was given', () => {
    expect(cellStatuses(input({ streamEndings: { done: 40, closeAfterFinish: 0, unterminatedLast: 0 } })).evidence).toEqual({});
    expect(cellStatuses(input()).evidence.streamEndings).toBeUndefined();
  });
});

describe('queuedRunningBound: one request missing in one sample never decides alone', () => {
  const samples = (running: number[]): MetricsSample[] => running.map((r, i) => ({ atMs: i, running: r, waiting: 0, clientInFlight: 1 }));
  const at1 = (running: number[]) => cellStatuses(input({ concurrency: 1, samples: samples(running) })).status;
  it('C = 1, 8 samples: one sample in the gap between two requests is valid, two are queued', () => {
    expect(queuedRunningBound(1, 8)).toBe(0.875);
    expect(at1([1, 1, 1, 1, 0, 1, 1, 1])).toBe('valid');
    expect(at1([1, 1, 0, 1, 0, 1, 1, 1])).toBe('requests-queued');
  });
  it("holds for llama.cpp's /slots busy slots read raw (samples without their slot count): 4 samples, one in a hand-over", () => {
    const slots = (running: number[]): MetricsSample[] => samples(running).map((s) => ({ ...s, runningFrom: 'slots' as const }));
    const at = (running: number[]) => cellStatuses(input({ concurrency: 1, samples: slots(running) }));
    expect(at([1, 0, 1, 1]).status).toBe('valid');
    expect(at([1, 0, 1, 0]).evidence.queued).toMatchObject({ concurrency: 1, meanRunning: 0.5 });
    // 30 samples: METHOD.md's 0.95 × C again, 2 of 30 in a hand-over is 0.933 and queued
    expect(at(Array.from({ length: 30 }, (_, i) => (i % 15 === 0 ? 0 : 1))).status).toBe('requests-queued');
  });
  it('is METHOD.md\'s 0.95 × offered when that is lower (30 samples, or C ≥ 1 / (0.05 × samples))', () => {
    expect(queuedRunningBound(8, 30)).toBe(0.95 * 8);
    expect(queuedRunningBound(1, 30)).toBe(0.95);
    expect(queuedRunningBound(8, undefined)).toBe(0.95 * 8);
    expect(queuedRunningBound(2, 8)).toBe(1.875);
  });
});

describe("llama.cpp's /slots: a sample with an idle slot shows no request waiting for one", () => {
  // busy slots of 4 (or of 1) with what the client had in flight at each sample
  const slots = (total: number, inFlight: number, busy: number[]): MetricsSample[] =>
    busy.map((b, i) => ({ atMs: i * 1000, running: b, runningFrom: 'slots' as const, slotsTotal: total, clientInFlight: inFlight }));
  const at = (concurrency: number, samples: MetricsSample[]) => cellStatuses(input({ concurrency, samples }));
  it('one stream on 4 slots whose samples met its prompt before a slot took it (the 2026 build at 32K/1: 0.5 busy) is Valid', () => {
    expect(slotsRunningForQueue(slots(4, 1, [0])[0]!)).toBe(1);
    expect(at(1, slots(4, 1, [1, 0, 0, 1])).status).toBe('valid');
    // 4 streams on 4 slots, a slot handed over at most samples: no slot was ever short of a request
    expect(at(4, slots(4, 4, [3, 3, 4, 3, 3, 3, 4, 3])).status).toBe('valid');
  });
  it('more streams than slots is Requests queued, the idle slot of a hand-over read as the slots, not the streams', () => {
    expect(at(8, slots(4, 8, [4, 4, 3, 4])).evidence.queued).toMatchObject({ concurrency: 8, meanRunning: 4 });
    expect(at(2, slots(1, 2, [1, 0, 1, 1])).evidence.queued).toMatchObject({ concurrency: 2, meanRunning: 1 });
    // one stream over the slots, on a window of one sample: no one-request allowance on top (it
    // would read 4 of 5 as within 5 − 1/1)
    expect(at(5, slots(4, 5, [4])).status).toBe('requests-queued');
    expect(at(2, slots(1, 2, [0])).status).toBe('requests-queued');
  });
  it('reads the busy slots where it lacks the slot count or the client\'s count (as before)', () => {
    const bare = slots(4, 1, [1, 0, 0, 1]).map(({ slotsTotal: _t, ...s }) => s);
    expect(at(1, bare).evidence.queued).toMatchObject({ meanRunning: 0.5 });
    expect(slotsRunningForQueue({ atMs: 0, running: 0, runningFrom: 'slots', slotsTotal: 4 })).toBe(0);
  });
});

describe("llama.cpp's decode counters: a closed loop's turnover is no queue", () => {
  // busy slots per decode call from the first to the last sample: (B₂·D₂ − B₁·D₁) / (D₂ − D₁) = 1.88
  const counters = (): MetricsSample[] => [
    { atMs: 0, running: 2, waiting: 0, clientInFlight: 2, decodeCallsTotal: 1000, busySlotsPerDecode: 1.9 },
    { atMs: 4000, running: 2, waiting: 0, clientInFlight: 2, decodeCallsTotal: 2000, busySlotsPerDecode: 1.89 },
  ];
  // the real llama.cpp b4748 cell 0/2 with 32-token requests: 80 done in 4 s, steps of 2.95 ms
  const real = { ...okFigures, runningFrom: 'decode-counters' as const, completedRequests: 80, timeBetweenTokensMs: { median: 2.95, p90: 3, p99: 3.2, samples: 80 }, measuredForS: 4 };
  it('each completed request costs about one step of one slot', () => {
    expect(decodeTurnover(real)).toBeCloseTo(0.059, 3);
    expect(decodeTurnover({ ...real, timeBetweenTokensMs: undefined })).toBe(0);
    expect(decodeTurnover({ ...real, measuredForS: 0 })).toBe(0);
  });
  it('2 streams on 4 slots reading 1.88 running are Valid; with few completions (no allowance to speak of), or from sampled gauges, they are Requests queued', () => {
    const at = (figures: Figs, samples = counters()) => cellStatuses(input({ concurrency: 2, figures, samples }));
    expect(at(real).status).toBe('valid');
    // fewer, longer requests: no allowance to speak of, and 1.88 < 0.95 × 2
    expect(at({ ...real, completedRequests: 4 }).status).toBe('requests-queued');
    // a real queue is still one: 1.5 running of 2
    const queued = counters();
    queued[1] = { ...queued[1]!, busySlotsPerDecode: 1.7 };
    expect(at(real, queued).evidence.queued).toMatchObject({ concurrency: 2, meanRunning: 1.5 });
    // the same 1.88 from 25 samples of a running gauge: the allowance is the decode counters' only,
    // as the samples the rule reads say (not the figures', which may come from other samples)
    const sampled: MetricsSample[] = Array.from({ length: 25 }, (_, i) => ({ atMs: i * 160, running: i < 3 ? 1 : 2, waiting: 0, clientInFlight: 2 }));
    expect(at(real, sampled).evidence.queued).toMatchObject({ concurrency: 2, meanRunning: 1.88 });
  });
});

describe('overCapacity', () => {
  it('is over only when C × (context + max output) exceeds the capacity (equal is not over)', () => {
    // 4 × (1000 + 24) = 4096
    expect(overCapacity(1000, 4, 24, 4096)).toBeUndefined();
    expect(overCapacity(1000, 4, 24, 4095)).toEqual({ requiredTokens: 4096, kvCapacityTokens: 4095, requestTokens: 1024 });
  });
  it('runs when the capacity is unknown', () => {
    expect(overCapacity(131072, 128, 1024, undefined)).toBeUndefined();
  });
  it('always runs context-0 cells within max running requests', () => {
    expect(overCapacity(0, 8, 4096, 1000, 8)).toBeUndefined();
    expect(overCapacity(0, 9, 4096, 1000, 8)).toEqual({ requiredTokens: 9 * 4096, kvCapacityTokens: 1000, requestTokens: 4096 });
    // max running unknown: the capacity rule applies
    expect(overCapacity(0, 8, 4096, 1000)).toEqual({ requiredTokens: 8 * 4096, kvCapacityTokens: 1000, requestTokens: 4096 });
    // a workload's own request size (a file row: its nominal context 0 keeps the exemption)
    expect(overCapacity(0, 8, 4096, 1000, 8, 600)).toBeUndefined();
    expect(overCapacity(0, 9, 4096, 1000, 8, 600)).toEqual({ requiredTokens: 9 * 600, kvCapacityTokens: 1000, requestTokens: 600 });
    // context > 0 gets no exemption
    expect(overCapacity(1, 1, 4096, 1000, 8)).toBeDefined();
  });
});

describe('the Errors evidence agrees with the failed-requests figure', () => {
  test('an error after the window is in neither; a stall is in both', async () => {
    const { computeCellFigures } = await import('../../src/metrics/figures.js');
    const { cellFailures } = await import('../../src/metrics/failures.js');
    const t = (id: string, chunks: number[], end?: RequestTimeline['end']): RequestTimeline => ({
      id,
      sendMs: 0,
      chunkMs: chunks,
      chunkTokens: chunks.map(() => 1),
      tokenSource: 'chunks',
      reasoningTokens: 0,
      ...(chunks.length > 0 ? { firstTokenMs: chunks[0]! } : {}),
      ...(end ? { end } : {}),
    });
    const timelines = [
      t('inside', [100, 1100], { kind: 'error', atMs: 1200, code: 'http-status', message: 'in' }),
      t('after', [100, 1100, 1500, 1900], { kind: 'error', atMs: 2500, code: 'socket', message: 'after' }),
      t('stalled', [100, 1050], { kind: 'aborted', atMs: 2000 }),
    ];
    const window = { windowStartMs: 1000, windowEndMs: 2000 };
    const figures = computeCellFigures({ timelines, ...window, metricsSamples: [], stallLimit: 800 });
    const failures = cellFailures(timelines, window.windowStartMs, window.windowEndMs, figures.stallLimitMs);
    const verdict = cellStatuses(input({ figures: { ...figures }, timelines, failures }));
    expect(figures.failedRequests).toBe(2);
    expect(verdict.evidence.errors).toMatchObject({ count: 2, byCode: { 'http-status': 1, stall: 1 } });
    const total = Object.values(verdict.evidence.errors!.byCode).reduce((a: number, b) => a + (b ?? 0), 0);
    expect(total).toBe(verdict.evidence.errors!.count);
  });
});
