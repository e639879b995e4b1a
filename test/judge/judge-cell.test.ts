/** The cell's entry points: judgeCellStatus (a measured cell's status) and judgeCell (what its test enforces). */
import { describe, expect, test } from 'vitest';
import { judgeCell, judgeCellStatus, type CellRules } from '../../src/judge/index.js';
import { FEW_STREAMS_PER_THREAD, HELD_UP_WAIT_SHARE, IDLE_CLIENT_CORES, MOSTLY_IDLE_CORES, NO_FREE_CORE_WAIT_SHARE } from '../../src/judge/judge-cell.js';
import { asBaseline } from '../../src/compare/baseline.js';
import { parseSloText } from '../../src/slo/slo.js';
import type { CellResult } from '../../src/shapes/result.js';
import { sglangCells, sglangResult } from '../results/fixtures/sglang-h200.js';

const cells = sglangCells();
const c64x16 = cells.find((c) => c.contextLabel === '64K' && c.concurrency === 16)!;
const over = cells.find((c) => c.status === 'over-capacity')!;
const overKey = `${over.contextLabel}/${over.concurrency}`;
const rules: CellRules = { allowClientLimited: false, allowErrors: false, maxOutputTokens: 4096 };
const copy = (c: CellResult, over: Partial<CellResult> = {}): CellResult => ({ ...structuredClone(c), ...over });

const clientLimited = copy(c64x16, {
  status: 'client-limited',
  statuses: ['client-limited'],
  evidence: { clientLimited: { eventLoopDelayP99Ms: 120.4, boundMs: 50 } },
});
const withFailures = copy(c64x16, { status: 'errors', statuses: ['errors'], evidence: { errors: { count: 3, byCode: { 'http-status': 3 }, firstMessage: 'a | b' } } });
withFailures.figures!.failedRequests = 3;

describe('judgeCell', () => {
  test('a valid cell within its budget passes, with an empty failure list and no SLO or baseline verdict', () => {
    const j = judgeCell('64K/16', c64x16, { ...rules, budget: { status: 'valid', min: { perRequestTokensPerSecond: 40 } } });
    expect(j).toEqual({ thresholdFailures: [] });
  });

  test('a Client-limited cell gets its failure line unless the run allows Client-limited', () => {
    const j = judgeCell('64K/16', clientLimited, rules);
    expect(j.thresholdFailures).toEqual([
      "64K/16 is Client-limited: the load generator's event-loop delay p99 was 120.4 ms (bound 50 ms), so its figures may be wrong; spread the streams over more client threads (LLM_BENCH_CLIENT_THREADS), run fewer streams per process, or set allowClientLimited",
    ]);
    expect(judgeCell('64K/16', clientLimited, { ...rules, allowClientLimited: true }).thresholdFailures).toEqual([]);
  });

  test("a Client-limited cell whose thread was mostly idle is told to free cores, not to add threads", () => {
    const idle = copy(c64x16, {
      status: 'client-limited',
      statuses: ['client-limited'],
      evidence: { clientLimited: { eventLoopDelayP99Ms: 7.0, arrivalLagP99Ms: 2.6, timingErrorP99Ms: 7.5, boundMs: 5, cpuCores: 0.06, cpuBoundCores: 0.9, coreWaitShare: 0.021 } },
    });
    const [line] = judgeCell('1K/4', idle, rules).thresholdFailures!;
    expect(line).toContain('its CPU 0.06 cores (bound 0.9), ready to run but waiting for a core 2.1 % of the time, so its figures may be wrong; its thread was mostly idle (0.06 cores)');
    expect(line).toContain('raise the bound on a shared machine (LLM_BENCH_CLIENT_LIMIT_MS');
    expect(line).not.toContain('more client threads');
    // a wider bound is offered only where it would change the verdict: not at METHOD's 50 ms
    // already, nor with the loop delay itself over 50 ms (marked whatever the bound)
    for (const clientLimited of [
      { ...idle.evidence.clientLimited!, boundMs: 50, eventLoopDelayP99Ms: 52, timingErrorP99Ms: 52.1 },
      { ...idle.evidence.clientLimited!, boundMs: 200, eventLoopDelayP99Ms: 60, timingErrorP99Ms: 60.1 },
    ]) {
      const wide = judgeCell('1K/4', copy(idle, { evidence: { clientLimited } }), rules).thresholdFailures![0]!;
      expect(wide).toContain('its thread was mostly idle');
      expect(wide).not.toContain('raise the bound');
    }
    // idle but it never waited for a core: its own short stalls, not others; the general advice
    const ownStall = copy(idle, { evidence: { clientLimited: { ...idle.evidence.clientLimited!, coreWaitShare: HELD_UP_WAIT_SHARE / 2 } } });
    const line3 = judgeCell('1K/4', ownStall, rules).thresholdFailures![0]!;
    expect(line3).not.toContain('mostly idle');
    expect(line3).toContain('spread the streams over more client threads');
    // at the idle edge and above it, with more streams a thread than a burst of reads could be late
    // by: its own load, more threads
    for (const cpuCores of [IDLE_CLIENT_CORES, 0.5]) {
      const busy = copy(idle, { concurrency: FEW_STREAMS_PER_THREAD + 1, evidence: { clientLimited: { ...idle.evidence.clientLimited!, cpuCores } } });
      expect(judgeCell('1K/17', busy, rules).thresholdFailures![0]).toContain('spread the streams over more client threads (LLM_BENCH_CLIENT_THREADS)');
    }
    // few streams a thread and under half a core, late and waiting: held up, however far over the
    // idle cut (a real llama.cpp with -t 2 on 2 cores: 4 streams, 0.12 cores, 10 % waiting)
    const fewStreams = (concurrency: number, cpuCores: number, threads?: number) =>
      judgeCell(`0/${concurrency}`, copy(idle, { concurrency, evidence: { clientLimited: { ...idle.evidence.clientLimited!, cpuCores, coreWaitShare: 0.097, ...(threads ? { threads, thread: 1 } : {}) } } }), rules).thresholdFailures![0]!;
    expect(fewStreams(4, 0.12)).toContain('its thread was mostly idle (0.12 cores), so most likely other work on this machine held up its loop (a server running here');
    expect(fewStreams(FEW_STREAMS_PER_THREAD, MOSTLY_IDLE_CORES - 0.01)).toContain('its thread was mostly idle');
    expect(fewStreams(2 * FEW_STREAMS_PER_THREAD, 0.12, 2)).toContain('its thread was mostly idle');
    expect(fewStreams(FEW_STREAMS_PER_THREAD, MOSTLY_IDLE_CORES)).toContain('spread the streams over more client threads');
    expect(fewStreams(FEW_STREAMS_PER_THREAD + 1, 0.12)).toContain('spread the streams over more client threads');
    // busy, and waiting for a core as long as a thread with none free: more threads would wait too
    const crowded = copy(idle, { concurrency: 1024, evidence: { clientLimited: { ...idle.evidence.clientLimited!, cpuCores: 0.45, coreWaitShare: NO_FREE_CORE_WAIT_SHARE, threads: 2, thread: 1 } } });
    const line2 = judgeCell('1K/1024', crowded, rules).thresholdFailures![0]!;
    expect(line2).toContain('on client thread 1 of 2 and its CPU 0.45 cores (bound 0.9), ready to run but waiting for a core 15 % of the time, so its figures may be wrong; this machine had no core free for it');
    expect(line2).not.toContain('more client threads (LLM_BENCH_CLIENT_THREADS)');
  });

  test('a cell with failed requests fails (the server text as sent, on one line: the pages escape it) unless its budget sets max.failedRequests or the run allows errors', () => {
    const [line] = judgeCell('64K/16', withFailures, rules).thresholdFailures!;
    expect(line).toBe(
      '64K/16 had 3 failed requests (3 http-status); first: a | b. A cell with failed requests fails unless its threshold budget sets max.failedRequests or LLM_BENCH_ALLOW_ERRORS=1',
    );
    expect(judgeCell('64K/16', withFailures, { ...rules, allowErrors: true }).thresholdFailures).toEqual([]);
    expect(judgeCell('64K/16', withFailures, { ...rules, budget: { max: { failedRequests: 5 } } }).thresholdFailures).toEqual([]);
    // the budget's own bound still applies
    expect(judgeCell('64K/16', withFailures, { ...rules, budget: { max: { failedRequests: 1 } } }).thresholdFailures).toEqual(['64K/16 failedRequests 3.0 > max 1.0 (200.0% above)']);
  });

  test('a Stream buffered cell fails unless the threshold file accepts the status', () => {
    const buffered = copy(c64x16, {
      status: 'stream-buffered',
      statuses: ['stream-buffered'],
      evidence: { streamBuffered: { gaps: 400, zeroGapShare: 0.95, burstTokens: { median: 40, p90: 40, p99: 40, max: 41, bursts: 20 }, oneBurstRequests: 0, requests: 2 } },
    });
    expect(judgeCell('64K/16', buffered, rules).thresholdFailures![0]).toMatch(/^64K\/16: the stream was buffered on the way \(95 % of the gaps .* median burst 40 tokens, largest 41\)/);
    expect(judgeCell('64K/16', buffered, { ...rules, tolerances: { acceptStatuses: ['stream-buffered'] } }).thresholdFailures).toEqual([]);
  });

  test('a cell with no output tokens in its window fails (a Client-limited one has its own line)', () => {
    const empty = copy(c64x16);
    empty.figures!.outputTokens = 0;
    expect(judgeCell('64K/16', empty, rules).thresholdFailures).toEqual(['64K/16 measured no output tokens in its window (0 failed requests)']);
    const emptyLimited = copy(clientLimited);
    emptyLimited.figures!.outputTokens = 0;
    expect(judgeCell('64K/16', emptyLimited, rules).thresholdFailures).toHaveLength(1);
  });

  test('an Over capacity cell with a budget that now fails gets the sum and the budget lines; without a budget nothing', () => {
    expect(judgeCell(overKey, over, rules)).toEqual({});
    const j = judgeCell(overKey, over, { ...rules, budget: { status: 'valid', min: { totalTokensPerSecond: 100 } } });
    const cap = over.evidence.capacity!;
    expect(j.thresholdFailures).toEqual([
      `${overKey} is Over capacity: ${over.concurrency} × ${(over.context + 4096).toLocaleString('en-US')} tokens a request (its prompt and max output) = ${cap.requiredTokens.toLocaleString('en-US')} tokens > KV capacity 1,000,000, but its budget expects it to run`,
      `${overKey} status over-capacity, expected valid`,
      `${overKey} totalTokensPerSecond missing (budget min 100.0)`,
    ]);
    // against a baseline where it was Over capacity too: no line; judged against the SLO (it binds as KV capacity)
    const withSlo = judgeCell(overKey, over, { ...rules, slo: parseSloText('ttftP90<=1000'), baseline: asBaseline('base.json', sglangResult()) });
    expect(withSlo.baselineFailures).toEqual([]);
    expect(withSlo.slo?.binding?.constraint).toBe('kvCapacity');
    // a baseline that measured it: the KV cache holds less now, one line naming the status
    const measured = sglangResult();
    const at = measured.cells.findIndex((x) => `${x.contextLabel}/${x.concurrency}` === overKey);
    measured.cells[at] = { ...copy(c64x16), context: over.context, contextLabel: over.contextLabel, concurrency: over.concurrency };
    expect(judgeCell(overKey, over, { ...rules, baseline: asBaseline('base.json', measured) }).baselineFailures).toEqual([
      `${overKey} is over-capacity now where the baseline measured it: its figures are missing`,
    ]);
  });

  test('with an SLO the verdict is given; with a baseline the regression lines', () => {
    const slower = copy(c64x16);
    slower.figures!.perRequestTokensPerSecond = c64x16.figures!.perRequestTokensPerSecond! / 2;
    const j = judgeCell('64K/16', slower, { ...rules, slo: parseSloText('perRequest>=40'), baseline: asBaseline('base.json', sglangResult()) });
    expect(j.slo?.meets).toBe(false);
    expect(j.slo?.binding?.constraint).toBe('perRequestTokensPerSecond');
    expect(j.baselineFailures).toHaveLength(1);
    expect(j.baselineFailures![0]).toMatch(/^64K\/16 perRequestTokensPerSecond .* vs baseline .*: −50\.0%/);
    expect(judgeCell('64K/16', c64x16, { ...rules, baseline: asBaseline('base.json', sglangResult()) }).baselineFailures).toEqual([]);
  });
});

describe('judgeCellStatus', () => {
  const figures = { failedRequests: 0, clientActiveRequests: 2, activeRequestsDisagree: false };
  const input = { concurrency: 2, loopDelayBoundMs: 50 };
  test('every status any repeat showed, the first by precedence; Valid only when each repeat was', () => {
    const valid = { ...input, figures };
    const limited = { ...input, figures, loopDelayMs: { p99: 80 } };
    const failing = { ...input, figures: { ...figures, failedRequests: 2 } };
    expect(judgeCellStatus([valid, valid])).toEqual({ status: 'valid', statuses: ['valid'], evidence: {} });
    const j = judgeCellStatus([valid, failing, limited]);
    expect(j.status).toBe('client-limited');
    expect(j.statuses).toEqual(['client-limited', 'errors']);
    expect(j.evidence.clientLimited).toEqual({ eventLoopDelayP99Ms: 80, boundMs: 50 });
    expect(j.evidence.errors).toEqual({ count: 2, byCode: {} });
  });
});
