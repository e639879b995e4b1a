/**
 * The rate cell's decisions (judge/judge-rate.ts): which status, with which evidence; Over capacity
 * by Little's law; which statuses fail the test.
 */
import { describe, expect, test } from 'vitest';
import { emptyWindowReason, judgeRateCell, judgeRateStatus, RATE_DISPATCH_BOUND_MS, rateOverCapacity, type RateStatusInput } from '../../src/judge/judge-rate.js';
import type { RateCellResult, RateFigures } from '../../src/shapes/result.js';
import { rateSelfCheckInput } from '../../src/matrix/rate-test.js';
import { asBaseline } from '../../src/compare/baseline.js';
import { rateResult } from '../results/fixtures/rate-cells.js';

const dist = (median: number, p99 = median) => ({ median, p90: median, p99, samples: 10 });
function figures(over: Partial<RateFigures> = {}): RateFigures {
  return {
    offeredRate: 10, sentRate: 10, completedRate: 10, totalTokensPerSecond: 320, outputTokens: 3200,
    scheduled: 100, sent: 100, completed: 100, failedRequests: 0, unsent: 0, ceilingWaited: 0,
    inSystem: { mean: 4, max: 7 }, dispatchDelayMs: dispatch(0.2, 0.8), ...over,
  };
}
function dispatch(median: number, p99: number) {
  return dist(median, p99);
}
/** requests in the system: steady at 4 (1 s requests, 4/s, from 5 s before the window: a ramp), or climbing from 4 by `climb` over the window */
function inSystem(climb: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let t = -5000; t < 10_000; t += 250) out.push([t, t + 1000]);
  for (let k = 0; k < climb; k++) out.push([((k + 0.5) / climb) * 10_000, 20_000]);
  return out;
}
const input = (over: Partial<RateStatusInput>): RateStatusInput => ({
  figures: figures(), inSystem: inSystem(0), windowStartMs: 0, windowEndMs: 10_000, timelines: [], loopDelayBoundMs: 50, clientCpuBoundCores: 0.9, ...over,
});

describe('judgeRateStatus', () => {
  test('a steady system is Valid, with the saturation test recorded', () => {
    const v = judgeRateStatus(input({}));
    expect(v.status).toBe('valid');
    expect(v.statuses).toEqual(['valid']);
    expect(v.evidence.saturation?.growth).toBe(0);
  });
  test('a climbing system is Saturated: the trend and the growth are the evidence', () => {
    const v = judgeRateStatus(input({ inSystem: inSystem(30) }));
    expect(v.status).toBe('saturated');
    expect(v.evidence.saturation!.p).toBeLessThan(0.01);
    expect(v.evidence.saturation!.growth).toBeGreaterThan(v.evidence.saturation!.growthBound);
  });
  test('a climb too small to matter is not Saturated', () => {
    expect(judgeRateStatus(input({ inSystem: inSystem(1) })).status).toBe('valid');
  });
  test(`Client-limited: dispatch p99 over ${RATE_DISPATCH_BOUND_MS} ms, or requests held by the ceiling; it comes first, the others stay in statuses`, () => {
    const late = judgeRateStatus(input({ figures: figures({ dispatchDelayMs: dispatch(1, 12) }), inSystem: inSystem(30) }));
    expect(judgeRateStatus(input({ figures: figures({ dispatchDelayMs: dispatch(1, 6) }) })).status).toBe('valid'); // 6 ms: under the bound
    expect(late.status).toBe('client-limited');
    expect(late.statuses).toEqual(['client-limited', 'saturated']);
    expect(late.evidence.clientLimited).toEqual({ dispatchDelayP99Ms: 12, boundMs: RATE_DISPATCH_BOUND_MS, ceilingWaited: 0, unsent: 0, causes: ['dispatch-delay'] });
    expect(judgeRateStatus(input({ figures: figures({ ceilingWaited: 3 }) })).status).toBe('client-limited');
    expect(judgeRateStatus(input({ figures: figures({ unsent: 1 }) })).status).toBe('client-limited');
    expect(judgeRateStatus(input({ loopDelayP99Ms: 80 })).status).toBe('client-limited');
  });
  test('the evidence names each rule that marked the cell, with the self-check figures when it was the client', () => {
    const both = judgeRateStatus(input({ figures: figures({ dispatchDelayMs: dispatch(1, 2.3), unsent: 2 }), loopDelayBoundMs: 5, loopDelayP99Ms: 3.6, arrivalLagP99Ms: 3.8, clientCpuCores: 0.4 }));
    expect(both.status).toBe('client-limited');
    expect(both.evidence.clientLimited!.causes).toEqual(['in-flight-ceiling', 'client-self-check']);
    expect(both.evidence.clientLimited!.client).toMatchObject({ eventLoopDelayP99Ms: 3.6, arrivalLagP99Ms: 3.8, boundMs: 5, cpuCores: 0.4, cpuBoundCores: 0.9 });
    expect(both.evidence.clientLimited!.client!.timingErrorP99Ms).toBeCloseTo(Math.hypot(3.6, 3.8), 9);
    const cpu = judgeRateStatus(input({ clientCpuCores: 0.95 }));
    expect(cpu.evidence.clientLimited).toMatchObject({ causes: ['client-self-check'], client: { cpuCores: 0.95, cpuBoundCores: 0.9 } });
    expect(judgeRateStatus(input({ figures: figures({ dispatchDelayMs: dispatch(1, 12) }), clientCpuCores: 0.2 })).evidence.clientLimited).not.toHaveProperty('client');
  });
  test("the token timing estimate is the decode cells': √(loop delay p99² + read lag p99²) over the bound while reads are late", () => {
    const at = (loop: number, lag: number) => judgeRateStatus(input({ loopDelayBoundMs: 5, loopDelayP99Ms: loop, arrivalLagP99Ms: lag })).status;
    expect(at(3, 3)).toBe('valid'); // 4.24 ms (the sum, 6, marked it)
    expect(at(3, 4.01)).toBe('client-limited');
    expect(at(6, 0.5)).toBe('valid'); // one read a turn: a late loop, not the client's own load
  });
  test('failed requests are Errors, counted by code with the first message', () => {
    const v = judgeRateStatus(input({
      figures: figures({ failedRequests: 2 }),
      timelines: [
        { id: 'a', sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0, end: { kind: 'error', atMs: 5, code: 'http-status', message: 'HTTP 503: busy' } },
        { id: 'b', sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0, end: { kind: 'error', atMs: 5, code: 'stall', message: 'silent' } },
      ],
    }));
    expect(v.status).toBe('errors');
    expect(v.evidence.errors).toEqual({ failed: 2, byCode: { 'http-status': 1, stall: 1 }, firstMessage: 'HTTP 503: busy' });
  });
});

describe('rateOverCapacity (Little\'s law)', () => {
  const single = { ttftMs: dist(100), timeBetweenTokensMs: dist(20) };
  test('rate × service time in flight, each holding context + output, against the KV capacity', () => {
    // service 0.1 + 63 × 0.02 = 1.36 s; at 10/s: 13.6 → 14 in flight × (8192 + 64) tokens
    const over = rateOverCapacity({ rate: 10, inputTokens: 8192, outputTokens: 64, kvCapacityTokens: 100_000, singleStream: single, singleStreamKey: '8K/1' });
    expect(over).toMatchObject({ requiredTokens: 14 * 8256, kvCapacityTokens: 100_000 });
    expect(over!.expectedInFlight).toBeCloseTo(13.6, 9);
    expect(over!.serviceFrom).toContain('8K/1');
    expect(rateOverCapacity({ rate: 5, inputTokens: 8192, outputTokens: 64, kvCapacityTokens: 100_000, singleStream: single })).toBeUndefined();
  });
  test("a workload's mean request (lengths drawn around a mean): its service time and tokens, rounded up", () => {
    // service 0.1 + 39.5 × 0.02 = 0.89 s; at 10/s: 8.9 → 9 in flight × (512 + 40.5) tokens = 4,972.5 → 4,973
    const over = rateOverCapacity({ rate: 10, inputTokens: 512, outputTokens: 40.5, kvCapacityTokens: 4_000, singleStream: single, singleStreamKey: '512/1' });
    expect(over).toMatchObject({ requiredTokens: 4_973, kvCapacityTokens: 4_000 });
    expect(over!.serviceS).toBeCloseTo(0.89, 9);
    expect(over!.serviceFrom).toBe('the decode cell 512/1: TTFT median + 39.5 × TBT median');
    expect(rateOverCapacity({ rate: 10, inputTokens: 512, outputTokens: 40.5, kvCapacityTokens: 5_000, singleStream: single })).toBeUndefined();
  });
  test('nothing is decided without the KV capacity or the single-stream cell', () => {
    expect(rateOverCapacity({ rate: 100, inputTokens: 8192, outputTokens: 64, singleStream: single })).toBeUndefined();
    expect(rateOverCapacity({ rate: 100, inputTokens: 8192, outputTokens: 64, kvCapacityTokens: 1000 })).toBeUndefined();
  });
});

describe('judgeRateCell', () => {
  const cell = (over: Partial<RateCellResult>): RateCellResult => ({
    context: 0, contextLabel: '0', rate: 2, arrival: 'poisson', seed: 1, status: 'valid', statuses: ['valid'], evidence: {}, figures: figures(), finishedAt: '2026-12-01T00:00:00Z', ...over,
  });
  const rules = { allowClientLimited: false, allowErrors: false };
  test('Valid and Saturated pass: the knee is a finding, not a failure', () => {
    expect(judgeRateCell('0@2/s', cell({}), rules).thresholdFailures).toEqual([]);
    expect(judgeRateCell('0@2/s', cell({ status: 'saturated', statuses: ['saturated'] }), rules).thresholdFailures).toEqual([]);
  });
  test('Client-limited fails unless allowed, naming the fix', () => {
    const c = cell({ status: 'client-limited', statuses: ['client-limited'], evidence: { clientLimited: { dispatchDelayP99Ms: 19.5, boundMs: 10, ceilingWaited: 4, unsent: 0 } } });
    const lines = judgeRateCell('0@2/s', c, rules).thresholdFailures;
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/0@2\/s is Client-limited: .*dispatch delay p99 19\.5 ms, bound 10 ms\); the in-flight ceiling held requests back \(4 waited for it\).*lower the rate; raise matrix\.maxInFlight \(LLM_BENCH_MAX_IN_FLIGHT\); or set allowClientLimited$/);
    expect(judgeRateCell('0@2/s', c, { ...rules, allowClientLimited: true }).thresholdFailures).toEqual([]);
  });
  test('late sends from a nearly idle thread that waited for a core: the machine held it up, and the fix is free cores, not a lower rate', () => {
    // a real llama.cpp with -t 2 on the 2-core VM: 4 req/s from a thread at 0.08 cores, waiting for a core 5.6 % of the time
    const evidence: RateCellResult['evidence'] = { clientLimited: { dispatchDelayP99Ms: 20.8, boundMs: 10, ceilingWaited: 0, unsent: 0, causes: ['dispatch-delay'] } };
    const held = cell({ status: 'client-limited', statuses: ['client-limited'], evidence, clientCpu: { cores: 0.08, source: 'thread', coreWaitShare: 0.056 } });
    const [line] = judgeRateCell('0@4/s', held, rules).thresholdFailures;
    expect(line).toMatch(/dispatch delay p99 20\.8 ms, bound 10 ms\); its thread used 0\.08 cores and waited, ready to run, for a core 5\.6 % of the time, so most likely other work on this machine held its sends up/);
    expect(line).toMatch(/give the client free cores \(a server on another machine, fewer jobs at once\); or set allowClientLimited$/);
    expect(line).not.toContain('lower the rate');
    // a busy thread (its own sends, even one that waited long for a core), or one that never waited: a lower rate is the fix
    for (const clientCpu of [
      { cores: 0.6, source: 'thread' as const, coreWaitShare: 0.056 },
      { cores: 0.9, source: 'thread' as const, coreWaitShare: 0.2 },
      { cores: 0.08, source: 'thread' as const, coreWaitShare: 0 },
      { cores: 0.08, source: 'thread' as const },
    ]) {
      const [own] = judgeRateCell('0@4/s', cell({ status: 'client-limited', statuses: ['client-limited'], evidence, clientCpu }), rules).thresholdFailures;
      expect(own, JSON.stringify(clientCpu)).toMatch(/lower the rate; or set allowClientLimited$/);
      expect(own).not.toContain('free cores');
    }
  });
  test('a cell marked by the self-check alone names its figures, not a dispatch delay under its bound', () => {
    const client = { eventLoopDelayP99Ms: 3.6, arrivalLagP99Ms: 3.8, timingErrorP99Ms: 5.23, boundMs: 5, cpuCores: 0.4, cpuBoundCores: 0.9 };
    const c = cell({ status: 'client-limited', statuses: ['client-limited'], evidence: { clientLimited: { dispatchDelayP99Ms: 2.3, boundMs: 10, ceilingWaited: 0, unsent: 0, causes: ['client-self-check'], client } } });
    const [line, ...rest] = judgeRateCell('300@8/s', c, rules).thresholdFailures;
    expect(rest).toEqual([]);
    expect(line).toMatch(/^300@8\/s is Client-limited: the load generator's timing error estimate p99 was 5\.2 ms \(event-loop delay p99 3\.6 ⊕ read lag p99 3\.8.*bound 5 ms\) and its CPU 0\.40 cores/);
    expect(line).not.toMatch(/dispatch delay|LLM_BENCH_MAX_IN_FLIGHT/);
    expect(line).toMatch(/LLM_BENCH_CLIENT_THREADS.*or set allowClientLimited$/);
  });
  test("the thread's wait for a core reaches the evidence and picks the advice, as a decode cell's", () => {
    const v = judgeRateStatus(input({ loopDelayBoundMs: 5, loopDelayP99Ms: 4, arrivalLagP99Ms: 4, clientCpuCores: 0.3, clientCoreWaitShare: 0.2 }));
    expect(v.evidence.clientLimited!.client).toMatchObject({ coreWaitShare: 0.2 });
    const line = judgeRateCell('0@8/s', cell({ status: v.status, statuses: v.statuses, evidence: v.evidence }), rules).thresholdFailures[0]!;
    expect(line).toContain('waiting for a core 20 % of the time');
    expect(line).toMatch(/no core free for it.*run fewer streams per process; or set allowClientLimited$/);
    expect(line.match(/allowClientLimited/g)).toHaveLength(1);
  });
  test('on several client threads the figures are said to be each the worst of them, and an idle verdict covers every thread', () => {
    const one = judgeRateStatus(input({ loopDelayBoundMs: 5, loopDelayP99Ms: 8, arrivalLagP99Ms: 1, clientCpuCores: 0.04, clientCoreWaitShare: 0.05 }));
    expect(one.evidence.clientLimited!.client!.threads).toBeUndefined();
    const two = judgeRateStatus(input({ loopDelayBoundMs: 5, loopDelayP99Ms: 8, arrivalLagP99Ms: 1, clientCpuCores: 0.04, clientCoreWaitShare: 0.05, clientThreads: 2 }));
    expect(two.evidence.clientLimited!.client).toMatchObject({ threads: 2 });
    expect(two.evidence.clientLimited!.client!.thread).toBeUndefined();
    const line = (v: typeof one) => judgeRateCell('0@8/s', cell({ status: v.status, statuses: v.statuses, evidence: v.evidence }), rules).thresholdFailures[0]!;
    expect(line(two)).toContain('bound 5 ms) and its CPU 0.04 cores (bound 0.9), ready to run but waiting for a core 5.0 % of the time (each figure the worst of its 2 client threads), so its latencies');
    expect(line(two)).toContain('its 2 threads were mostly idle (the busiest at 0.04 cores), so most likely other work on this machine held up their loops (a server');
    expect(line(one)).not.toContain('client threads)');
    expect(line(one)).toContain('its thread was mostly idle (0.04 cores), so');
    // one thread is no "worst of": no count
    const single = judgeRateStatus(input({ loopDelayBoundMs: 5, loopDelayP99Ms: 8, clientThreads: 1 }));
    expect(single.evidence.clientLimited!.client!.threads).toBeUndefined();
  });
  test("a rate run's client figures reach the verdict as the cell's measurement hands them over (matrix/rate-test.ts)", () => {
    const raw = {
      loopDelayMs: { p50: 1, p99: 8, max: 12 },
      arrivalLagMs: { reads: 900, p50: 0.2, p99: 1.5, max: 4 },
      clientCpu: { cores: 0.04, source: 'thread' as const, coreWaitShare: 0.05 },
      clientThreads: 2,
    };
    const v = judgeRateStatus(input(rateSelfCheckInput(raw, 5)));
    expect(v.status).toBe('client-limited');
    expect(v.evidence.clientLimited!.client).toEqual({
      eventLoopDelayP99Ms: 8, arrivalLagP99Ms: 1.5, timingErrorP99Ms: Math.hypot(8, 1.5), boundMs: 5,
      cpuCores: 0.04, cpuBoundCores: 0.9, coreWaitShare: 0.05, threads: 2,
    });
    // its own thread: no count, and no wait where the kernel gave none
    const own = judgeRateStatus(input(rateSelfCheckInput({ ...raw, clientThreads: undefined, clientCpu: { cores: 0.04, source: 'thread' } }, 5)));
    expect(own.evidence.clientLimited!.client).not.toHaveProperty('threads');
    expect(own.evidence.clientLimited!.client).not.toHaveProperty('coreWaitShare');
    // nothing measured: nothing over
    expect(judgeRateStatus(input(rateSelfCheckInput({}, 5))).status).toBe('valid');
  });
  test('late sends are put down to the rate only when the self-check does not blame the machine (a client thread sends and reads)', () => {
    const late = (client: { cpuCores: number; coreWaitShare?: number }) =>
      judgeRateCell(
        '0@8/s',
        cell({
          status: 'client-limited',
          statuses: ['client-limited'],
          evidence: { clientLimited: { dispatchDelayP99Ms: 14, boundMs: 10, ceilingWaited: 0, unsent: 0, causes: ['dispatch-delay', 'client-self-check'], client: { eventLoopDelayP99Ms: 8, arrivalLagP99Ms: 1, timingErrorP99Ms: 8.06, boundMs: 5, cpuBoundCores: 0.9, ...client } } },
        }),
        rules,
      ).thresholdFailures[0]!;
    // its own streams kept it busy: a lower rate, or more threads
    expect(late({ cpuCores: 0.95, coreWaitShare: 0.02 })).toMatch(/dispatch delay p99 14\.0 ms.*; lower the rate; spread the streams over more client threads/);
    // idle and waiting: the machine held it up, sends and reads alike
    const idle = late({ cpuCores: 0.04, coreWaitShare: 0.05 });
    expect(idle).toMatch(/; its thread was mostly idle \(0\.04 cores\).*give the client free cores/);
    expect(idle).not.toContain('lower the rate');
    // no core free: more threads or a lower rate would wait too
    const crowded = late({ cpuCores: 0.6, coreWaitShare: 0.3 });
    expect(crowded).toMatch(/; this machine had no core free for it/);
    expect(crowded).not.toContain('lower the rate');
  });
  test('a Client-limited cell without its evidence says so, and fails with both fixes', () => {
    const line = judgeRateCell('0@8/s', cell({ status: 'client-limited', statuses: ['client-limited'], evidence: {} }), rules).thresholdFailures[0]!;
    expect(line).toBe("0@8/s is Client-limited: its rules' figures are not in this result, so its latencies from the schedule are partly the client's; lower the rate, or give the client free cores; or set allowClientLimited");
  });
  test('causes naming the self-check without its figures still say it', () => {
    const c = cell({ status: 'client-limited', statuses: ['client-limited'], evidence: { clientLimited: { dispatchDelayP99Ms: 12, boundMs: 10, ceilingWaited: 0, unsent: 0, causes: ['dispatch-delay', 'client-self-check'] } } });
    const line = judgeRateCell('0@8/s', c, rules).thresholdFailures[0]!;
    expect(line).toMatch(/dispatch delay p99 12\.0 ms, bound 10 ms\); the load generator's own timing or CPU was over the decode cells' bounds/);
  });
  test('a cell judged before its evidence named causes reads them from its figures, never a dispatch delay under its bound', () => {
    const old = (clientLimited: { dispatchDelayP99Ms: number; boundMs: number; ceilingWaited: number; unsent: number }) =>
      judgeRateCell('1K@4/s', cell({ status: 'client-limited', statuses: ['client-limited'], evidence: { clientLimited } }), rules).thresholdFailures[0]!;
    expect(old({ dispatchDelayP99Ms: 14.2, boundMs: 10, ceilingWaited: 0, unsent: 0 })).toMatch(/could not send on schedule \(dispatch delay p99 14\.2 ms, bound 10 ms\).*lower the rate; or set allowClientLimited$/);
    const selfCheck = old({ dispatchDelayP99Ms: 2.1, boundMs: 10, ceilingWaited: 0, unsent: 0 });
    expect(selfCheck).not.toMatch(/dispatch delay|in-flight ceiling/);
    expect(selfCheck).toMatch(/own timing or CPU was over the decode cells' bounds.*clientArrivalLagMs/);
    expect(old({ dispatchDelayP99Ms: 2.1, boundMs: 10, ceilingWaited: 0, unsent: 3 })).toMatch(/: the in-flight ceiling held requests back \(3 never sent\), so/);
  });
  test('failed requests fail unless allowed; the server text as sent, on one line (the pages escape it)', () => {
    const c = cell({ status: 'errors', statuses: ['errors'], figures: figures({ failedRequests: 1 }), evidence: { errors: { failed: 1, byCode: { 'http-status': 1 }, firstMessage: 'bad | <b>\nnext' } } });
    const lines = judgeRateCell('0@2/s', c, rules).thresholdFailures;
    expect(lines[0]).toMatch(/0@2\/s had 1 failed request \(1 http-status\); first: bad \| <b> next\. /);
    expect(judgeRateCell('0@2/s', c, { ...rules, allowErrors: true }).thresholdFailures).toEqual([]);
  });
  test("the simulator's allowance (about the client's cores) does not excuse a cell the in-flight ceiling held back; an explicit allowClientLimited does", () => {
    const held = cell({
      status: 'client-limited', statuses: ['client-limited'],
      evidence: { clientLimited: { dispatchDelayP99Ms: 0.5, boundMs: RATE_DISPATCH_BOUND_MS, ceilingWaited: 40, unsent: 45, causes: ['in-flight-ceiling'] } },
    });
    const simAllowance = { allowClientLimited: true, allowanceForCoresOnly: true, allowErrors: false };
    expect(judgeRateCell('0@2/s', held, simAllowance).thresholdFailures[0]).toMatch(/^0@2\/s is Client-limited: the in-flight ceiling held requests back \(40 waited for it, 45 never sent\).*raise matrix\.maxInFlight/);
    expect(judgeRateCell('0@2/s', held, { ...simAllowance, allowanceForCoresOnly: false }).thresholdFailures).toEqual([]);
    // a late dispatch on the simulator's shared cores is what the allowance is for
    const late = cell({ status: 'client-limited', statuses: ['client-limited'], evidence: { clientLimited: { dispatchDelayP99Ms: 14, boundMs: RATE_DISPATCH_BOUND_MS, ceilingWaited: 0, unsent: 0, causes: ['dispatch-delay'] } } });
    expect(judgeRateCell('0@2/s', late, simAllowance).thresholdFailures).toEqual([]);
  });
  test("with a baseline (LLM_BENCH_BASELINE), the cell's regressions against the baseline's cell of the same context and rate", () => {
    const base = cell({ figures: figures({ ttftFromScheduleMs: { median: 100, p90: 120, p99: 150, samples: 100 } }) });
    const baseline = asBaseline('b.json', { ...rateResult(), rateCells: [base] });
    const slower = cell({ figures: figures({ ttftFromScheduleMs: { median: 200, p90: 120, p99: 150, samples: 100 } }) });
    const judged = judgeRateCell('0@2/s', slower, { ...rules, baseline: { baseline, windowS: 30 } });
    expect(judged.thresholdFailures).toEqual([]);
    expect(judged.baselineFailures).toHaveLength(1);
    expect(judged.baselineFailures).toEqual(['0@2/s ttftFromScheduleMs 200.0 vs baseline 100.0: +100.0% (tolerance 10% + spread 6.9%, at least 5 ms)']);
    expect(judgeRateCell('0@2/s', base, { ...rules, baseline: { baseline, windowS: 30 } }).baselineFailures).toEqual([]);
    // another rate is not in the baseline: not gated
    expect(judgeRateCell('0@4/s', { ...slower, rate: 4 }, { ...rules, baseline: { baseline, windowS: 30 } }).baselineFailures).toEqual([]);
    // no baseline: no lines at all
    expect(judgeRateCell('0@2/s', slower, rules).baselineFailures).toBeUndefined();
  });
  test('no output tokens fails', () => {
    expect(judgeRateCell('0@2/s', cell({ figures: figures({ outputTokens: 0 }) }), rules).thresholdFailures[0]).toMatch(/measured no output tokens/);
  });
});

describe('a rate cell whose window held no request of its schedule', () => {
  test('one request due: measured as usual', () => {
    expect(emptyWindowReason(1, 0.1, 2)).toBeUndefined();
  });
  test('none due: Not run, with the expected count and a window that would hold about 10', () => {
    expect(emptyWindowReason(0, 0.1, 2)).toBe(
      'no request of its schedule fell in the 2 s window (0.2 expected at 0.1/s), so nothing was measured: a window of at least 100 s (LLM_BENCH_DURATION_S, about 10 requests) or a higher rate measures it',
    );
    expect(emptyWindowReason(0, 3, 1)).toMatch(/\(3\.0 expected at 3\/s\).*at least 4 s/);
  });
});
