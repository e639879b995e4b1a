/**
 * Body of one generated open-loop rate test ("rate 8K@2"): measure the cell (load/rate.ts), compute
 * its figures (metrics/rate-figures.ts), ask the judge (judge/rate.ts), publish the result in task
 * meta, then throw on its failure lines (except under -u).
 *
 * Before it runs, a cell may be decided without measuring:
 * - Over capacity: the KV cache cannot hold what Little's law puts in flight (judge/rate.ts);
 * - Not run, skipped: a lower rate of the same context was already Saturated. A rate sweep stops at
 *   its first saturated rate: above it the server only queues more (the rule).
 */
import { CellFailure } from '../errors.js';
import type {} from './task-meta.js';
import type { TestContext } from 'vitest';
import { fnv1a } from '../random.js';
import { parseArrival } from '../shapes/arrival.js';
import { cellKey, contextLabel, rateCellKey } from '../shapes/labels.js';
import type { RateCellResult, RateSettings, WorkloadFigures } from '../shapes/result.js';
import { arrivalSchedule } from '../load/arrivals.js';
import { runRateCell, type RateRun } from '../load/rate-cell.js';
import { computeRateFigures, inSystemIntervals } from '../metrics/rate-figures.js';
import { spreadRates, sweepAnchors } from '../metrics/sweep-rates.js';
import { MATRIX_TTFT_FROM, ttftStartMs } from '../metrics/request.js';
import { emptyWindowReason, judgeRateCell, judgeRateStatus, rateOverCapacity, singleStreamServiceS, type RateStatusInput } from '../judge/judge-rate.js';
import { ClientThreadError } from '../load/stream-threads.js';
import { cellClientThreads } from './cell-test.js';
import { rateSloVerdict } from '../judge/slo-verdict.js';
import { baselineRateCellFailures } from '../judge/baseline-gate.js';
import { computeGoodput } from '../judge/goodput.js';
import { isUnreachable } from '../engines/http.js';
import type { RunContext } from './context.js';
import { progress } from './progress.js';
import { openCellLoad, rowLengthProblem, type CellLoad } from './cell-load.js';
import { DEFAULTS } from '../config/defaults.js';
import { requestSizesByRow, type RequestTokens } from './workload-run.js';
import { wholeOrTenths } from '../text/format.js';
import { writeCellRequests } from './requests-out.js';

export interface PlannedRateCell {
  /** "8K@2" */
  key: string;
  context: number;
  contextLabel: string;
  rate: number;
  /** position of the rate in the configured list (its requests' prompt numbers derive from it) */
  index: number;
  /** the schedule's seed: the run's rate seed, the context and the rate */
  seed: number;
  /** a sweep's point i of N (1-based): its rate (0 until then) is computed when it runs */
  sweep?: { i: number; points: number };
}

/** The rate cells of a run, per context in the configured rate order. */
export function planRateCells(contexts: readonly number[], rates: RateSettings): PlannedRateCell[] {
  const out: PlannedRateCell[] = [];
  const points = rates.sweep?.points;
  if (points !== undefined) {
    for (const context of contexts) {
      for (let i = 1; i <= points; i++) out.push({ key: `${contextLabel(context)} sweep ${i}/${points}`, context, contextLabel: contextLabel(context), rate: 0, index: i - 1, seed: 0, sweep: { i, points } });
    }
    return out;
  }
  // ascending, so a context's sweep can stop at its first saturated rate
  const ascending = [...rates.rates].sort((a, b) => a - b);
  for (const context of contexts) {
    ascending.forEach((rate, index) => {
      out.push(plannedRateCell(context, rate, index, rates.seed));
    });
  }
  return out;
}

/** prompt numbers of rate cells start here (decode cells use 0 … 100,000 × repeats), 20,000 a rate */
const PROMPT_BASE = 600_000;
const PROMPTS_PER_RATE = 20_000;

export function createRateRunner(run: RunContext, settings: RateSettings) {
  const { cfg, info } = run;
  const arrival = parseArrival(settings.arrival);
  if ('error' in arrival) throw new Error(`info.settings.rates.arrival: ${arrival.error}`);
  /** the lowest Saturated rate per context, once measured */
  const saturatedAt = new Map<number, number>();
  /** a row's mean request (Little's law puts the mean request in flight): its context and the run's max output, or a workload's own lengths */
  const meanRequest = meanRequests(run);

  const publish = (cell: PlannedRateCell, result: RateCellResult, tc: TestContext) => {
    // with an SLO, every rate cell is judged against it (the rate capacity search reads the verdicts)
    if (cfg.slo) result.slo = rateSloVerdict(result, cfg.slo);
    run.rateResults?.set(cell.key, result);
    tc.task.meta.speedMatrix = { kind: 'rate', cell: result, info };
  };
  const base = (cell: PlannedRateCell) => rateCellBase(cell, settings);
  /** the baseline's lines on a cell this run did not measure (Over capacity, Not run) that the baseline did: compare fails it too */
  const unmeasuredAgainstBaseline = (cell: PlannedRateCell, result: RateCellResult): string[] => {
    const lines = run.baseline && !cell.sweep ? baselineRateCellFailures(run.baseline, result, cfg.matrix.windowS) : [];
    if (lines.length > 0) result.baselineFailures = lines;
    return run.updating ? [] : lines;
  };

  return async function runRateTest(planned: PlannedRateCell, tc: TestContext): Promise<void> {
    // a sweep's rates come from its row's decode cells: on a row too long for the model they were Not run, and say why
    const tooLongRow = planned.sweep ? rowLengthProblem(run, planned.context) : undefined;
    if (tooLongRow !== undefined) {
      progress(`rate ${planned.key}: not run: ${tooLongRow}`);
      tc.skip(tooLongRow);
      return;
    }
    const cell = planned.sweep ? sweepCell(run, planned, settings.seed) : planned;
    if ('skip' in cell) {
      progress(`rate ${planned.key}: not run: ${cell.skip}`);
      tc.skip(cell.skip);
      return;
    }
    const say = (m: string) => progress(`${cell.key}/s: ${m}`);
    // a row longer than the model takes is Not run at every rate, whatever the KV capacity says
    const tooLong = rowLengthProblem(run, cell.context);
    if (tooLong !== undefined) {
      const result: RateCellResult = { ...base(cell), status: 'not-run', statuses: ['not-run'], evidence: {}, notRunReason: tooLong, finishedAt: new Date().toISOString() };
      const regressed = unmeasuredAgainstBaseline(cell, result);
      publish(cell, result, tc);
      throw new CellFailure([`${cell.key}/s could not start: ${tooLong}`, ...regressed], run.debug === true);
    }
    const single = run.results.get(cellKey(cell.context, 1));
    const sizes = meanRequest(cell.context);
    const over = rateOverCapacity({
      rate: cell.rate,
      inputTokens: sizes.input,
      outputTokens: sizes.output,
      kvCapacityTokens: run.opened.session.facts.kvCapacityTokens?.value,
      ...(single?.figures ? { singleStream: single.figures, singleStreamKey: single.contextLabel + '/1' } : {}),
    });
    if (over) {
      const result: RateCellResult = { ...base(cell), status: 'over-capacity', statuses: ['over-capacity'], evidence: { overCapacity: over }, finishedAt: new Date().toISOString() };
      const regressed = unmeasuredAgainstBaseline(cell, result);
      publish(cell, result, tc);
      if (regressed.length > 0) throw new CellFailure(regressed, run.debug === true);
      tc.skip(`Over capacity: ${cell.rate}/s × ${over.serviceS.toFixed(2)} s = ${over.expectedInFlight.toFixed(1)} in flight × (${wholeOrTenths(sizes.input)} + ${wholeOrTenths(sizes.output)}) tokens > KV capacity ${over.kvCapacityTokens}`);
      return;
    }
    const lowerSaturated = saturatedAt.get(cell.context);
    if (lowerSaturated !== undefined && lowerSaturated < cell.rate) {
      const reason = `${lowerSaturated}/s was already Saturated at this context; a context's rates stop at the first Saturated one (above it the server only queues more)`;
      // not gated on the baseline (judge/compare-rate.ts): the Saturated cell below it is
      const result: RateCellResult = { ...base(cell), status: 'not-run', statuses: ['not-run'], evidence: {}, notRunReason: reason, finishedAt: new Date().toISOString() };
      publish(cell, result, tc);
      tc.skip(reason);
      return;
    }
    const result = await measureRateCell(run, settings, arrival, cell, tc.signal, say, base(cell));
    if (result.status === 'saturated' || result.statuses.includes('saturated')) saturatedAt.set(cell.context, Math.min(cell.rate, saturatedAt.get(cell.context) ?? Infinity));
    const judgement = judgeRateCell(`${cell.key}/s`, result, {
      allowClientLimited: cfg.allowClientLimited,
      allowanceForCoresOnly: cfg.allowClientLimitedWhy !== undefined,
      allowErrors: cfg.allowErrors,
      // a sweep point's rate is this run's own (judge/compare-rate.ts): not gated on a baseline cell
      ...(run.baseline && !cell.sweep ? { baseline: { baseline: run.baseline, windowS: cfg.matrix.windowS } } : {}),
    });
    result.thresholdFailures = judgement.thresholdFailures;
    if (judgement.baselineFailures) result.baselineFailures = judgement.baselineFailures;
    publish(cell, result, tc);
    if (result.status === 'not-run') {
      throw new CellFailure([`${cell.key}/s was not measured: ${result.notRunReason}`, ...(run.updating ? [] : (judgement.baselineFailures ?? []))], run.debug === true);
    }
    // as a decode cell's (cell-test.ts finishCell), except that -u writes no rate cell budget: a -u run fails on neither
    const failures = [...judgement.thresholdFailures, ...(judgement.baselineFailures ?? [])];
    if (failures.length > 0 && !run.updating) throw new CellFailure(failures, run.debug === true);
  };
}

/**
 * A sweep point's cell, its rate computed from the context's decode cells measured in this run
 * (metrics/sweep-rates.ts), or why it cannot run: no anchors, or a rate an earlier point of the
 * sweep already measured (3-digit rounding on a narrow span).
 */
function sweepCell(run: RunContext, planned: PlannedRateCell, rateSeed: number): PlannedRateCell | { skip: string } {
  const { i, points } = planned.sweep!;
  const anchors = sweepAnchors([...run.results.values()].filter((r) => r.context === planned.context));
  if ('error' in anchors) return { skip: `${planned.contextLabel}: ${anchors.error} (did its decode cells fail or were they filtered with -t?)` };
  const rate = spreadRates(anchors.synchronous, anchors.limit, points)[i - 1]!;
  const cell = { ...plannedRateCell(planned.context, rate, planned.index, rateSeed), sweep: planned.sweep! };
  if (run.rateResults?.has(cell.key)) return { skip: `sweep ${i}/${points} is ${rate}/s, which an earlier point of this sweep already measured` };
  progress(`rate ${planned.key}: ${rate}/s (synchronous ${anchors.synchronous.toFixed(3)}/s, limit ${anchors.limit.toFixed(3)}/s)`);
  return cell;
}

/** The fields every rate cell result starts with. */
export function rateCellBase(cell: PlannedRateCell, settings: RateSettings): Pick<RateCellResult, 'context' | 'contextLabel' | 'rate' | 'arrival' | 'seed' | 'rampS'> {
  return { context: cell.context, contextLabel: cell.contextLabel, rate: cell.rate, arrival: settings.arrival, seed: cell.seed, rampS: settings.rampS };
}

/** A rate cell planned at any rate (the capacity search's adaptive ones: `index` past the configured rates). */
export function plannedRateCell(context: number, rate: number, index: number, rateSeed: number): PlannedRateCell {
  return { key: rateCellKey(context, rate), context, contextLabel: contextLabel(context), rate, index, seed: fnv1a(`${rateSeed}:${context}:${rate}`) };
}

/** Measure one rate cell: schedule, run, figures, status, goodput (a configured rate or an adaptive one). */
export async function measureRateCell(
  run: RunContext,
  settings: RateSettings,
  arrival: Exclude<ReturnType<typeof parseArrival>, { error: string }>,
  cell: PlannedRateCell,
  signal: AbortSignal,
  say: (m: string) => void,
  base: Pick<RateCellResult, 'context' | 'contextLabel' | 'rate' | 'arrival' | 'seed' | 'rampS'>,
): Promise<RateCellResult> {
  const { cfg, opened } = run;
  const notRun = (error: unknown): RateCellResult => ({ ...base, status: 'not-run', statuses: ['not-run'], evidence: {}, notRunReason: (error as Error)?.message ?? String(error), finishedAt: new Date().toISOString() });
  const windowMs = cfg.matrix.windowS * 1000;
  const schedule = arrivalSchedule({ rate: cell.rate, process: arrival, seed: cell.seed, windowMs, rampMs: settings.rampS * 1000 });
  const inWindow = (at: number) => at >= schedule.windowStartMs && at < schedule.windowStartMs + windowMs;
  const scheduledInWindow = Array.from(schedule.atMs).filter(inWindow).length;
  // no request is due in the window: nothing to measure or judge, so nothing is sent (it read Valid at 0 req/s, and failed for no output tokens)
  const empty = emptyWindowReason(scheduledInWindow, cell.rate, cfg.matrix.windowS);
  if (empty !== undefined) return notRun(new Error(empty));
  let load: CellLoad;
  try {
    load = await openCellLoad(run, { context: cell.context, concurrency: 1, key: cell.key, repeat: 0, requestBase: PROMPT_BASE + cell.index * PROMPTS_PER_RATE, expectedRequests: schedule.atMs.length });
  } catch (error) {
    if (signal.aborted) throw error;
    return notRun(error);
  }
  let raw: Awaited<ReturnType<typeof runRateCell>>;
  try {
    raw = await runRateCell(opened.session, {
      context: cell.context,
      rate: cell.rate,
      schedule,
      // synthetic: the rate cell's own 20,000 prompt numbers, reused past them; a workload's requests are the cell's own
      promptFor: (i) => load.requestFor(0, load.row ? i % PROMPTS_PER_RATE : i),
      scoutPrompts: load.scouts,
      windowMs,
      maxInFlight: settings.maxInFlight,
      drainTimeoutMs: cfg.timeouts.drainMs,
      metricsIntervalMs: cfg.metricsIntervalMs,
      signal,
      onPhase: say,
      threads: rateClientThreads(run, settings, cell),
    });
  } catch (error) {
    if (!signal.aborted && isUnreachable(error)) return notRun(error);
    // a client thread died or stuck: this cell has no figures, the run goes on
    if (!signal.aborted && error instanceof ClientThreadError) return notRun(error);
    throw error;
  }
  const figures = computeRateFigures({ requests: raw.requests, scheduledInWindow, unsent: raw.unsent, windowStartMs: raw.windowStartMs, windowEndMs: raw.windowEndMs, samples: raw.samples, ...(cfg.percentiles ? { percentiles: cfg.percentiles } : {}) });
  writeCellRequests(run, { kind: 'rate', cell: `${cell.key}/s`, context: cell.context, rate: cell.rate, repeat: 1 }, raw.requests.map((r) => ({ timeline: r.timeline, scheduledMs: r.scheduledMs })), raw, say);
  const timelines = raw.requests.map((r) => r.timeline);
  const verdict = judgeRateStatus({
    figures,
    inSystem: inSystemIntervals(raw.requests, raw.windowEndMs),
    windowStartMs: raw.windowStartMs,
    windowEndMs: raw.windowEndMs,
    timelines,
    requests: raw.requests.map((r) => ({
      scheduledMs: r.scheduledMs,
      ...(r.timeline.firstTokenMs !== undefined ? { firstTokenMs: r.timeline.firstTokenMs } : {}),
      ...(r.timeline.end ? { endMs: r.timeline.end.atMs } : {}),
    })),
    rampMs: settings.rampS * 1000,
    ...rateSelfCheckInput(raw, cfg.clientLimitedLoopDelayMs),
  });
  const scheduledOf = new Map(raw.requests.map((r) => [r.timeline.id, r.scheduledMs]));
  const goodput = cfg.slo
    ? computeGoodput({
        timelines: raw.requests.filter((r) => r.scheduledMs >= raw.windowStartMs).map((r) => r.timeline),
        windowStartMs: raw.windowStartMs,
        windowEndMs: raw.windowEndMs,
        ttftFrom: MATRIX_TTFT_FROM,
        // open loop: a user's TTFT starts when the schedule said the request came
        ttftStartOf: (t) => scheduledOf.get(t.id) ?? ttftStartMs(t, MATRIX_TTFT_FROM),
        slo: cfg.slo,
      })
    : undefined;
  return {
    ...base,
    status: verdict.status,
    statuses: verdict.statuses,
    evidence: verdict.evidence,
    figures,
    ...(goodput ? { goodput } : {}),
    ...(raw.loopDelayMs ? { clientEventLoopDelayMs: raw.loopDelayMs } : {}),
    ...(raw.clientCpu ? { clientCpu: raw.clientCpu } : {}),
    ...(raw.arrivalLagMs ? { clientArrivalLagMs: raw.arrivalLagMs } : {}),
    ...(raw.clientThreads !== undefined ? { clientThreads: raw.clientThreads } : {}),
    ...(load.row?.promptTokens !== undefined ? { promptTokens: load.row.promptTokens } : {}),
    ...withWorkload(load.figures({ timelines, samples: raw.samples, windowStartMs: raw.windowStartMs, windowEndMs: raw.windowEndMs })),
    finishedAt: new Date().toISOString(),
  };
}

/**
 * What a rate cell's status reads of the client's self-check (judge-rate.ts judgeRateStatus): each
 * figure the worst over the threads the schedule went out from, the wait for a core among them,
 * and how many threads there were; the decode cells' bounds.
 */
export function rateSelfCheckInput(
  raw: Pick<RateRun, 'loopDelayMs' | 'arrivalLagMs' | 'clientCpu' | 'clientThreads'>,
  loopDelayBoundMs: number,
): Pick<RateStatusInput, 'loopDelayP99Ms' | 'arrivalLagP99Ms' | 'loopDelayBoundMs' | 'clientCpuCores' | 'clientCpuBoundCores' | 'clientCoreWaitShare' | 'clientThreads'> {
  return {
    ...(raw.loopDelayMs ? { loopDelayP99Ms: raw.loopDelayMs.p99 } : {}),
    ...(raw.arrivalLagMs ? { arrivalLagP99Ms: raw.arrivalLagMs.p99 } : {}),
    loopDelayBoundMs,
    ...(raw.clientCpu ? { clientCpuCores: raw.clientCpu.cores } : {}),
    clientCpuBoundCores: DEFAULTS.clientLimitedCpuCores,
    ...(raw.clientCpu?.coreWaitShare !== undefined ? { clientCoreWaitShare: raw.clientCpu.coreWaitShare } : {}),
    ...(raw.clientThreads !== undefined ? { clientThreads: raw.clientThreads } : {}),
  };
}

/**
 * The client threads of a rate cell: as a closed-loop cell's for the streams Little's law puts in
 * flight (rate × the single-stream service time, within the in-flight ceiling), so `auto` spreads
 * only a cell that needs it; a number asks for that many (capped at the ceiling). Without the
 * context's single-stream decode cell, `auto` keeps the cell's own thread.
 */
function rateClientThreads(run: RunContext, settings: RateSettings, cell: PlannedRateCell): number {
  const serviceS = singleStreamServiceS(meanRequests(run)(cell.context).output, run.results.get(cellKey(cell.context, 1))?.figures);
  const streams = run.cfg.clientThreads === 'auto' ? Math.ceil(cell.rate * (serviceS ?? 0)) : settings.maxInFlight;
  return cellClientThreads(run, Math.max(1, Math.min(settings.maxInFlight, streams)));
}

function withWorkload(figures: WorkloadFigures | undefined): { workload?: WorkloadFigures } {
  return figures ? { workload: figures } : {};
}

/** each run's rows' mean requests, sized once per run (the capacity check and the client threads of every rate cell ask) */
const meanRequestsOfRun = new WeakMap<RunContext, (context: number) => RequestTokens>();

/** each row's mean request, prompt and max_tokens (workload-run.ts rowRequestSizes) */
function meanRequests(run: RunContext): (context: number) => RequestTokens {
  let mean = meanRequestsOfRun.get(run);
  if (mean === undefined) {
    const sizes = requestSizesByRow(run.workload, run.cfg.matrix.maxOutputTokens, run.opened.session.facts.maxModelLen?.value);
    mean = (context) => sizes(context).mean;
    meanRequestsOfRun.set(run, mean);
  }
  return mean;
}
