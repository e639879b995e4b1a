/**
 * Body of one generated cell test, as four steps: measure the cell (load/cell.ts runCell, every
 * repeat), compute its figures (cell-outcome.ts over metrics/), judge it (judge/: status, budgets,
 * the cell rules, SLO, baseline), publish it (stored in task meta for the reporter; a failing cell throws, an Over
 * capacity one is skipped).
 */
import { availableParallelism } from 'node:os';
import { ClientThreadError } from '../load/stream-threads.js';
import { CellFailure } from '../errors.js';
import { clientThreadCount } from '../load/thread-count.js';
import { serverPlace } from './open.js';
import type {} from './task-meta.js';
import type { TestContext } from 'vitest';
import { runCell } from '../load/cell.js';
import { openCellLoad, rowLengthProblem, type CellLoad } from './cell-load.js';
import { isUnreachable } from '../engines/http.js';
import type { CellResult } from '../shapes/result.js';
import { judgeCell, judgeCellStatus, type CellJudgement, type CellRules } from '../judge/index.js';
import { cellResultOf, repeatFigures, type CellOutcomeSettings, type Raw, type Repeat } from './cell-outcome.js';
import { baselineCellFailures } from '../judge/baseline-gate.js';
import { gateTimeoutMs, type PlannedCell } from './plan.js';
import { unmanagedCellBudget } from '../thresholds/schema.js';
import type { RunContext } from './context.js';
import { progress } from './progress.js';
import { overCapacityReason } from '../text/over-capacity.js';
import { writeCellRequests } from './requests-out.js';
import { noResponse } from '../metrics/no-response.js';

/** The Over capacity result of a planned cell (not run): the numbers that decide it. */
export function overCapacityResult(cell: PlannedCell): CellResult {
  return {
    context: cell.context,
    contextLabel: cell.contextLabel,
    concurrency: cell.concurrency,
    status: 'over-capacity',
    statuses: ['over-capacity'],
    evidence: { capacity: cell.overCapacity! },
    finishedAt: new Date().toISOString(),
  };
}

/** A planned cell that could not start, with the reason. */
function notRunResult(cell: PlannedCell, reason: string): CellResult {
  return {
    context: cell.context,
    contextLabel: cell.contextLabel,
    concurrency: cell.concurrency,
    status: 'not-run',
    statuses: ['not-run'],
    evidence: {},
    notRunReason: reason,
    finishedAt: new Date().toISOString(),
  };
}

/** What the post-window work of this run's cells reads of its configuration. */
function outcomeSettings(run: RunContext): CellOutcomeSettings {
  const { cfg } = run;
  return {
    ...(cfg.stallLimitMs !== undefined ? { stallLimitMs: cfg.stallLimitMs } : {}),
    clientLimitedLoopDelayMs: cfg.clientLimitedLoopDelayMs,
    ...(cfg.slo ? { slo: cfg.slo } : {}),
    engine: run.opened.session.adapter.kind,
    ...(cfg.percentiles ? { percentiles: cfg.percentiles } : {}),
  };
}

/**
 * Measure one cell that fits (every repeat) into its result: figures, statuses and evidence, the
 * server's cross-check, goodput against the run's SLO. A cell that cannot start (the server stayed
 * unreachable, or its prompt cannot be sized) comes back as status not-run with the reason; an
 * aborted run throws. Shared by the matrix's cells and the capacity search's adaptive ones.
 */
export async function measureCell(run: RunContext, cell: PlannedCell, signal: AbortSignal): Promise<CellResult> {
  const { cfg } = run;
  const say = (m: string) => progress(`${cell.key}: ${m}`);
  const notRun = (error: unknown): CellResult => notRunResult(cell, (error as Error)?.message ?? String(error));
  // LLM_BENCH_REPEAT: measure the cell `repeat` times (each run starts with the drain barrier);
  // each repeat has its own load: request numbers move on by 100,000 per repeat (synthetic), a
  // workload's texts are the repeat's own, so no repeat resends an earlier prompt
  const repeats: Repeat[] = [];
  let first: CellLoad | undefined;
  for (let r = 0; r < cfg.repeat; r++) {
    if (cfg.repeat > 1) say(`repeat ${r + 1} of ${cfg.repeat}`);
    let load: CellLoad;
    try {
      load = await openCellLoad(run, { context: cell.context, concurrency: cell.concurrency, key: cell.key, repeat: r, requestBase: r * 100_000, expectedRequests: expectedRequests(run, cell) });
    } catch (error) {
      if (signal.aborted || r > 0) throw error;
      return notRun(error);
    }
    first ??= load;
    let raw: Raw;
    try {
      raw = await runCell(run.opened.session, {
        context: cell.context,
        concurrency: cell.concurrency,
        promptFor: (w, i) => load.requestFor(w, i),
        scoutPrompts: load.scouts,
        ...(load.conversations ? { conversations: load.conversations } : {}),
        windowMs: cfg.matrix.windowS * 1000,
        gateTimeoutMs: cellGateTimeoutMs(run, cell, say),
        gateSettleMs: cfg.timeouts.gateSettleMs,
        drainTimeoutMs: cfg.timeouts.drainMs,
        metricsIntervalMs: cfg.metricsIntervalMs,
        signal,
        onPhase: say,
        threads: cellClientThreads(run, cell.concurrency),
      });
    } catch (error) {
      // the server stayed unreachable through the retry budget: the cell could not start
      if (!signal.aborted && r === 0 && isUnreachable(error)) return notRun(error);
      // a client thread died or stuck: this cell has no figures, the run goes on
      if (!signal.aborted && error instanceof ClientThreadError) return notRun(error);
      throw error;
    }
    repeats.push({ ...repeatFigures(outcomeSettings(run), cell, raw, say), workload: load.figures(raw) });
    // a server that answered none of this cell's requests, not one header (a server that sends its
    // headers with the first token still answered some): the next cell's gate does not wait its full timeout for it
    const silent = noResponse(raw.timelines, raw.windowStartMs, raw.windowEndMs);
    if (silent && silent.requests === silent.of && raw.timelines.every((t) => t.headersMs === undefined)) run.opened.session.answeredNothing = true;
    else delete run.opened.session.answeredNothing;
    writeCellRequests(run, { kind: 'decode', cell: cell.key, context: cell.context, concurrency: cell.concurrency, repeat: r + 1 }, raw.timelines.map((timeline) => ({ timeline })), raw, say);
  }
  const verdict = judgeCellStatus(repeats.map((x) => x.status));
  return cellResultOf(cell, first?.row, repeats, verdict, say);
}

/** The readiness gate's wait after a cell the server answered nothing of (issue 60): enough for a server that comes back, not a minute a cell. */
export const SILENT_GATE_MS = 10_000;

/** A cell's gate timeout: its own (plan.ts), or SILENT_GATE_MS at most after a cell whose requests all went unanswered. */
export function cellGateTimeoutMs(run: RunContext, cell: PlannedCell, say: (m: string) => void): number {
  const own = gateTimeoutMs(run.cfg.timeouts, cell);
  if (!run.opened.session.answeredNothing || own <= SILENT_GATE_MS) return own;
  say(`the server answered none of the last cell's requests (no response headers): the readiness gate waits ${SILENT_GATE_MS / 1000} s at most, not ${Math.round(own / 1000)} s`);
  return SILENT_GATE_MS;
}

/** The client threads of a cell with C streams (load/thread-count.ts): where the server runs decides the cores left. */
export function cellClientThreads(run: RunContext, concurrency: number): number {
  return clientThreadCount({ concurrency, asked: run.cfg.clientThreads, cores: availableParallelism(), server: serverPlace(run.cfg) });
}

/**
 * Requests a closed-loop cell is sized for before it starts: C workers, each sending a request per
 * expected service time, over the gate and the window (a generous guess: a workload's requests
 * past it repeat its sized ones, see src/workload).
 */
function expectedRequests(run: RunContext, cell: PlannedCell): number {
  return Math.min(20_000, Math.max(512, cell.concurrency * Math.max(64, Math.ceil(run.cfg.matrix.windowS * 8))));
}

/** The rules a cell of this run is judged against (src/judge/judge-cell.ts). */
export function cellRules(run: RunContext, key: string): CellRules {
  const { cfg } = run;
  // under -u the budgets -u rewrites are not judged (they are being replaced); the user's own still are
  const budget = run.updating ? unmanagedCellBudget(run.thresholds.cells[key]) : run.thresholds.cells[key];
  return {
    ...(budget ? { budget } : {}),
    ...(run.thresholds.tolerances ? { tolerances: run.thresholds.tolerances } : {}),
    allowClientLimited: cfg.allowClientLimited,
    allowErrors: cfg.allowErrors,
    ...(cfg.slo ? { slo: cfg.slo } : {}),
    ...(run.baseline ? { baseline: run.baseline } : {}),
    maxOutputTokens: cfg.matrix.maxOutputTokens,
  };
}

/**
 * Publish a judged cell: the judgement stored on the result (a verdict it does not give is
 * removed: a kept, resumed result may carry another run's), the result kept for the capacity
 * search and handed to the reporter (task meta).
 */
function publishCell(run: RunContext, key: string, result: CellResult, judgement: CellJudgement, tc: TestContext): void {
  for (const k of ['thresholdFailures', 'slo', 'baselineFailures'] as const) {
    const v = judgement[k];
    if (v !== undefined) (result as Record<typeof k, unknown>)[k] = v;
    else delete result[k];
  }
  run.results.set(key, result);
  tc.task.meta.speedMatrix = { kind: 'cell', cell: result, info: run.info };
}

export function createCellRunner(run: RunContext) {
  const { cfg } = run;
  return async function runCellTest(cell: PlannedCell, tc: TestContext): Promise<void> {
    // a row longer than the model takes fails as Not run at every concurrency, whatever the KV capacity says
    const tooLong = rowLengthProblem(run, cell.context);
    if (cell.overCapacity && tooLong === undefined) {
      const result = overCapacityResult(cell);
      const judgement = judgeCell(cell.key, result, cellRules(run, cell.key));
      publishCell(run, cell.key, result, judgement, tc);
      const failures = [...(judgement.thresholdFailures ?? []), ...(judgement.baselineFailures ?? [])];
      if (failures.length > 0 && !run.updating) throw new CellFailure(failures, run.debug === true);
      tc.skip(`Over capacity: ${overCapacityReason(result, run.cfg.matrix.maxOutputTokens)}`);
      return;
    }
    const result = tooLong !== undefined ? notRunResult(cell, tooLong) : await measureCell(run, cell, tc.signal);
    if (result.status === 'not-run') {
      // stored with why, then failed
      run.results.set(cell.key, result);
      tc.task.meta.speedMatrix = { kind: 'cell', cell: result, info: run.info };
      const what = result.notRunReason?.startsWith('client thread') ? 'was not measured' : 'could not start';
      // the baseline's line too, as compare gives it afterwards
      const regressed = run.baseline ? baselineCellFailures(run.baseline, result) : [];
      if (regressed.length > 0) result.baselineFailures = regressed;
      throw new CellFailure([`${cell.key} ${what}: ${result.notRunReason}`, ...(run.updating ? [] : regressed)], run.debug === true);
    }
    finishCell(run, cell.key, result, tc);
  };
}

/**
 * A cell's verdicts (src/judge/judge-cell.ts), stored on the result and enforced: a failing cell
 * throws. Under `-u` the budgets it rewrites and the baseline are not judged, but the run's own
 * rules (Client-limited, failed requests, a buffered stream) and the user's other budgets are: such
 * a cell fails and -u does not write it (src/thresholds/update.ts). Used for measured cells and for
 * cells taken from a resumed run.
 */
export function finishCell(run: RunContext, key: string, result: CellResult, tc: TestContext): void {
  const judgement = judgeCell(key, result, cellRules(run, key));
  publishCell(run, key, result, judgement, tc);
  if (run.updating) {
    const failures = judgement.thresholdFailures ?? [];
    if (failures.length > 0) throw new CellFailure([...failures, `-u did not write ${key}'s budget: a failed cell is no measurement to gate later runs on`], run.debug === true);
    return;
  }
  const all = [...(judgement.thresholdFailures ?? []), ...(judgement.baselineFailures ?? [])];
  if (all.length > 0) throw new CellFailure(all, run.debug === true);
}
