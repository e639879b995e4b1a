/**
 * Every decision about an open-loop rate cell (issue 22; the README's method section, "Open-loop
 * rate cells"):
 * - judgeRateStatus: a measured cell's status, statuses and evidence:
 *   - Client-limited: the client could not send on time: its dispatch delay p99 (send − scheduled)
 *     over RATE_DISPATCH_BOUND_MS (10 ms), or the in-flight ceiling held requests back (waited or unsent),
 *     or the load generator's own event loop or CPU was over the decode cells' bounds. Its
 *     latencies from the scheduled time are then the client's as much as the server's. The
 *     evidence names which of the three rules marked it (`causes`; `client` has the self-check's
 *     figures), and so does the failure line;
 *   - Errors: failed requests;
 *   - Saturated: the requests in the system climbed through the window after its fill-up
 *     (saturation.ts, with its stated confidence), so the server could not keep up with the offered
 *     rate; not judged, with the reason in the evidence, when fewer than 6 blocks a request's
 *     latency wide fit after the fill-up;
 *   - Valid otherwise. The status shown is the first of those that holds; `statuses` has all.
 * - rateOverCapacity: before a cell runs, whether the KV cache can hold what Little's law puts in
 *   flight: rate × the service time of one request (from the decode cell of the same context at
 *   concurrency 1: TTFT + output tokens × time between tokens), each holding context + output.
 * - judgeRateCell: what the test enforces: Client-limited fails unless allowed, failed requests
 *   fail unless allowed, a window without output tokens fails. Saturated is a finding (the knee),
 *   not a failure. (Goodput at the SLO is a figure: goodput.ts, TTFT from the scheduled time.)
 * Pure: the caller stores the judgement and throws (src/matrix/rate-test.ts).
 */
import { clientLimitedEvidence } from './status.js';
import { rateClientLimitedCauses, type RateClientLimitedCause } from './rate-client-limited.js';
import { baselineRateCellFailures, type Baseline } from './baseline-gate.js';
import { clientHoldUp, clientLimitedFix, clientSelfCheckText, OTHER_WORK } from './judge-cell.js';
import { percent, wholeOrTenths } from '../text/format.js';
import type { CellFigures, RateCellEvidence, RateCellResult, RateCellStatus, RateFigures } from '../shapes/result.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import { oneLine } from '../text/escape.js';
import { judgeWindowSaturation, type FillRequest } from './saturation.js';

/**
 * Dispatch delay p99 above this marks a rate cell Client-limited. Measured (perf/dispatch-delay.ts,
 * and docs/running.md "Tested against"): p99 0.7–1.0 ms from 50 to 200 requests/s on a quiet
 * 2-core machine with the server in another process; 5.1–5.3 ms with a real llama.cpp server
 * using both cores. Twice the loaded figure: a late send beyond it starts to show in a TTFT.
 */
export const RATE_DISPATCH_BOUND_MS = 10;

export interface RateStatusInput {
  figures: RateFigures;
  /** [scheduled, ended] of every request (metrics/rate-figures.ts inSystemIntervals) */
  inSystem: ReadonlyArray<readonly [number, number]>;
  windowStartMs: number;
  windowEndMs: number;
  timelines: readonly RequestTimeline[];
  /** every request's due time, first token and end: a request's latency without queueing, for the Saturated test (saturation.ts) */
  requests?: readonly FillRequest[];
  /** the ramp before the window, ms */
  rampMs?: number;
  /** the load generator's event-loop delay and CPU over the cell, and the decode cells' bounds */
  loopDelayP99Ms?: number;
  /** read lag p99 of response reads (client/arrival-clock.ts); with the loop delay, the client's timing error estimate */
  arrivalLagP99Ms?: number;
  loopDelayBoundMs: number;
  clientCpuCores?: number;
  clientCpuBoundCores: number;
  /** the share of the span the client thread waited for a core (evidence only: it picks the advice, as a decode cell's) */
  clientCoreWaitShare?: number;
  /** the client threads the schedule was sent from, when more than one: the client figures above are each the worst over them */
  clientThreads?: number;
}

export interface RateStatusResult {
  status: RateCellStatus;
  statuses: RateCellStatus[];
  evidence: RateCellEvidence;
}

const ORDER: readonly RateCellStatus[] = ['client-limited', 'errors', 'saturated', 'valid'];

export function judgeRateStatus(input: RateStatusInput): RateStatusResult {
  const f = input.figures;
  const saturation = judgeWindowSaturation(input.inSystem, input.windowStartMs, input.windowEndMs, {
    ...(input.requests ? { requests: input.requests } : {}),
    ...(input.rampMs !== undefined ? { rampMs: input.rampMs } : {}),
  });
  const evidence: RateCellEvidence = {
    saturation: {
      p: saturation.p, growth: saturation.growth, growthBound: saturation.growthBound, meanInSystem: saturation.meanInSystem, blockMeans: saturation.blockMeans,
      fromMs: saturation.fromMs, ...(saturation.notJudged !== undefined ? { notJudged: saturation.notJudged } : {}),
    },
  };
  const statuses: RateCellStatus[] = [];
  const dispatchP99 = f.dispatchDelayMs?.p99 ?? 0;
  // the decode cells' rule (judge/status.ts clientLimitedEvidence), on the worst loop delay and
  // the worst read lag over the client threads (which may be two threads': it errs toward marking)
  const client = clientLimitedEvidence({
    ...(input.loopDelayP99Ms !== undefined ? { loopDelayMs: { p99: input.loopDelayP99Ms } } : {}),
    ...(input.arrivalLagP99Ms !== undefined ? { arrivalLagMs: { p99: input.arrivalLagP99Ms } } : {}),
    loopDelayBoundMs: input.loopDelayBoundMs,
    ...(input.clientCpuCores !== undefined ? { clientCpuCores: input.clientCpuCores } : {}),
    cpuBoundCores: input.clientCpuBoundCores,
    ...(input.clientCoreWaitShare !== undefined ? { clientCoreWaitShare: input.clientCoreWaitShare } : {}),
  });
  // several threads: the figures are each the worst over them (no one thread's), and the text says so
  if (client && input.clientThreads !== undefined && input.clientThreads > 1) client.threads = input.clientThreads;
  const causes: RateClientLimitedCause[] = [];
  if (dispatchP99 > RATE_DISPATCH_BOUND_MS) causes.push('dispatch-delay');
  if (f.ceilingWaited > 0 || f.unsent > 0) causes.push('in-flight-ceiling');
  if (client) causes.push('client-self-check');
  const [firstCause, ...moreCauses] = causes;
  if (firstCause !== undefined) {
    statuses.push('client-limited');
    evidence.clientLimited = {
      dispatchDelayP99Ms: dispatchP99, boundMs: RATE_DISPATCH_BOUND_MS, ceilingWaited: f.ceilingWaited, unsent: f.unsent,
      causes: [firstCause, ...moreCauses],
      ...(client ? { client } : {}),
    };
  }
  if (f.failedRequests > 0) {
    statuses.push('errors');
    const byCode: Record<string, number> = {};
    let firstMessage: string | undefined;
    for (const t of input.timelines) {
      if (t.end?.kind !== 'error') continue;
      byCode[t.end.code] = (byCode[t.end.code] ?? 0) + 1;
      firstMessage ??= t.end.message;
    }
    evidence.errors = { failed: f.failedRequests, byCode, ...(firstMessage !== undefined ? { firstMessage } : {}) };
  }
  if (saturation.saturated) statuses.push('saturated');
  if (statuses.length === 0) statuses.push('valid');
  const status = ORDER.find((s) => statuses.includes(s))!;
  return { status, statuses, evidence };
}

/**
 * Why a rate cell measured nothing: no request of its schedule fell in the window (a low rate in a
 * short window); undefined when one did. The cell is then Not run with this reason, and its test
 * fails with it: a window of about 10 expected requests measures it.
 */
export function emptyWindowReason(scheduledInWindow: number, rate: number, windowS: number): string | undefined {
  if (scheduledInWindow > 0) return undefined;
  return (
    `no request of its schedule fell in the ${windowS} s window (${formatExpected(rate * windowS)} expected at ${rate}/s), so nothing was measured: ` +
    `a window of at least ${Math.ceil(10 / rate)} s (LLM_BENCH_DURATION_S, about 10 requests) or a higher rate measures it`
  );
}

const formatExpected = (n: number): string => (n < 10 ? n.toFixed(1) : n.toFixed(0));

export interface RateOverCapacityInput {
  rate: number;
  /** a request's prompt tokens and max_tokens, the row's mean (the row's context and the run's max output tokens, or a workload's lengths) */
  inputTokens: number;
  outputTokens: number;
  kvCapacityTokens?: number;
  /** the decode cell of this context at concurrency 1, when this run measured it */
  singleStream?: Pick<CellFigures, 'ttftMs' | 'timeBetweenTokensMs'>;
  singleStreamKey?: string;
}

/**
 * A request's service time at one stream, seconds: the single-stream decode cell's TTFT median +
 * (output tokens − 1) × its TBT median, for a request's mean output tokens (the run's max output
 * tokens, or a workload's mean); undefined without those figures. Little's law puts rate × this in
 * flight (rateOverCapacity; the rate cell's client threads, matrix/rate-test.ts).
 */
export function singleStreamServiceS(outputTokens: number, singleStream: Pick<CellFigures, 'ttftMs' | 'timeBetweenTokensMs'> | undefined): number | undefined {
  const ttft = singleStream?.ttftMs?.median;
  const tbt = singleStream?.timeBetweenTokensMs?.median;
  if (ttft === undefined || tbt === undefined) return undefined;
  return (ttft + tbt * Math.max(0, outputTokens - 1)) / 1000;
}

/** The Over capacity evidence when the KV cache cannot hold what Little's law puts in flight; else undefined. */
export function rateOverCapacity(input: RateOverCapacityInput): RateCellEvidence['overCapacity'] | undefined {
  const serviceS = singleStreamServiceS(input.outputTokens, input.singleStream);
  if (input.kvCapacityTokens === undefined || serviceS === undefined) return undefined;
  const expectedInFlight = input.rate * serviceS;
  const requestTokens = input.inputTokens + input.outputTokens;
  const requiredTokens = Math.ceil(Math.ceil(expectedInFlight) * requestTokens);
  if (requiredTokens <= input.kvCapacityTokens) return undefined;
  const steps = input.outputTokens - 1;
  return {
    expectedInFlight,
    requiredTokens,
    kvCapacityTokens: input.kvCapacityTokens,
    requestTokens,
    serviceS,
    serviceFrom: `the decode cell ${input.singleStreamKey ?? `at concurrency 1`}: TTFT median + ${wholeOrTenths(steps)} × TBT median`,
  };
}

export interface RateRules {
  allowClientLimited: boolean;
  /**
   * the allowance is the embedded simulator's on a small machine (config resolve.ts), which is about
   * the client's cores: a cell the in-flight ceiling held back (a setting, LLM_BENCH_MAX_IN_FLIGHT)
   * is not excused by it
   */
  allowanceForCoresOnly?: boolean;
  allowErrors: boolean;
  /** the in-run gate's baseline (LLM_BENCH_BASELINE) and the window both runs measured */
  baseline?: { baseline: Baseline; windowS: number };
}

export interface RateJudgement {
  thresholdFailures: string[];
  /** the baseline's regression lines; absent without a baseline */
  baselineFailures?: string[];
}

/** The judgement of a rate cell's result: its failure lines and its SLO verdict. */
export function judgeRateCell(key: string, cell: RateCellResult, rules: RateRules): RateJudgement {
  const failures: string[] = [];
  const f = cell.figures;
  const ev = cell.evidence;
  const ceiling = ev.clientLimited?.causes?.includes('in-flight-ceiling') === true;
  const excused = rules.allowClientLimited && !(rules.allowanceForCoresOnly === true && ceiling);
  if (cell.statuses.includes('client-limited') && !excused) failures.push(clientLimitedLine(key, ev.clientLimited, cell.clientCpu));
  if (f && f.failedRequests > 0 && !rules.allowErrors) {
    const e = ev.errors;
    const codes = e ? Object.entries(e.byCode).map(([code, n]) => `${n} ${code}`).join(', ') : '';
    failures.push(
      `${key} had ${f.failedRequests} failed request${f.failedRequests === 1 ? '' : 's'}${codes ? ` (${codes})` : ''}` +
        `${e?.firstMessage ? `; first: ${oneLine(e.firstMessage)}` : ''}. A rate cell with failed requests fails unless LLM_BENCH_ALLOW_ERRORS=1`,
    );
  }
  if (f && f.outputTokens === 0 && !cell.statuses.includes('client-limited')) {
    failures.push(`${key} measured no output tokens in its window (${f.failedRequests} failed requests)`);
  }
  return {
    thresholdFailures: failures,
    ...(rules.baseline ? { baselineFailures: baselineRateCellFailures(rules.baseline.baseline, cell, rules.baseline.windowS) } : {}),
  };
}

/** The failure line of a Client-limited rate cell: each rule that marked it, with its figures and fix (rateClientLimitedWhy). */
function clientLimitedLine(key: string, c: RateCellEvidence['clientLimited'], cpu: RateCellResult['clientCpu']): string {
  const { why, fix } = rateClientLimitedWhy(c, cpu);
  return `${key} is Client-limited${why ? `: ${why}` : ''}, so its latencies from the schedule are partly the client's; ${fix}; or set allowClientLimited`;
}

/**
 * Why a rate cell is Client-limited and what to do, in words (its failure line, and the page's
 * note, src/pages/rate-markdown.ts): each rule that marked it with its figures, and each one's fix.
 * A cell judged before the evidence named its causes (no `causes`) reads them from its figures:
 * the dispatch delay over its bound, requests held back; else the self-check, unnamed.
 */
export function rateClientLimitedWhy(c: RateCellEvidence['clientLimited'], cpu?: RateCellResult['clientCpu']): { why: string; fix: string } {
  if (!c) return { why: "its rules' figures are not in this result", fix: 'lower the rate, or give the client free cores' };
  const causes = rateClientLimitedCauses(c);
  const parts: string[] = [];
  const fixes: string[] = [];
  // each client thread sends its requests and reads their streams: when the self-check puts the
  // hold-up on the machine (idle and waiting, or no core free), the late sends most likely had that
  // cause too, and a lower rate would not mend it. Without the self-check's evidence (it was under
  // its bounds), the cell's own thread CPU and core wait say the same: a thread that sent a few
  // requests a second at 0.08 of a core, waiting for a core 6 % of the time, was held up by a
  // server on its cores (a real llama.cpp with -t 2 on a 2-core machine), not by its rate
  const fromCpu = c.client === undefined && cpu?.coreWaitShare !== undefined ? { cpuCores: cpu.cores, coreWaitShare: cpu.coreWaitShare } : undefined;
  // the cell's own CPU answers only for a nearly idle thread that waited (held-up): a busy thread
  // that waited long for a core (no-free-core) may have been late by its own sends too
  const machineBound = c.client !== undefined ? clientHoldUp(c.client) !== 'own-load' : fromCpu !== undefined && clientHoldUp(fromCpu) === 'held-up';
  if (causes.includes('dispatch-delay')) {
    parts.push(`the load generator could not send on schedule (dispatch delay p99 ${c.dispatchDelayP99Ms.toFixed(1)} ms, bound ${c.boundMs} ms)`);
    if (!machineBound) fixes.push('lower the rate');
    else if (fromCpu !== undefined) {
      parts.push(
        `its thread used ${fromCpu.cpuCores.toFixed(2)} cores and waited, ready to run, for a core ${percent(fromCpu.coreWaitShare)} of the time, so most likely other work on this machine held its sends up (${OTHER_WORK}), not its rate`,
      );
      fixes.push('give the client free cores (a server on another machine, fewer jobs at once)');
    }
  }
  if (causes.includes('in-flight-ceiling')) {
    parts.push(`the in-flight ceiling held requests back (${[c.ceilingWaited > 0 ? `${c.ceilingWaited} waited for it` : '', c.unsent > 0 ? `${c.unsent} never sent` : ''].filter(Boolean).join(', ')})`);
    fixes.push('raise matrix.maxInFlight (LLM_BENCH_MAX_IN_FLIGHT)');
  }
  if (c.client) {
    parts.push(clientSelfCheckText(c.client));
    fixes.push(clientLimitedFix(c.client));
  } else if (causes.includes('client-self-check') || parts.length === 0) {
    parts.push("the load generator's own timing or CPU was over the decode cells' bounds (its figures are in the cell's clientEventLoopDelayMs, clientArrivalLagMs and clientCpu)");
    fixes.push('give the client free cores or more client threads (LLM_BENCH_CLIENT_THREADS)');
  }
  return { why: parts.join('; '), fix: fixes.join('; ') };
}
