/**
 * Open-loop rate cells of two results, figure by figure, by compare.ts's rule (its header): the
 * same context and offered rate ("8K@2"), the same arrival process. Figures (REGRESSION_RATE_FIGURES):
 * the achieved rate (completedRate), total tok/s, TTFT from the schedule (median and p99), time
 * between tokens (median). The rate search's own cells (adaptive) are compared through the
 * highest rate at the SLO instead (compare-capacity.ts).
 *
 * Departures from a decode cell's comparison, all about what one cell can tell:
 * - completedRate counts requests in a fixed window, so one request more or less moves it by
 *   1 / window: its absolute floor is raised to that (a change of one request is never a regression);
 * - a median over the cell's requests (TTFT from the schedule, time between tokens) has the
 *   sampling spread of a median of that many requests added to its tolerance (median-interval.ts):
 *   requests that came alone and requests that came beside others make two modes, and a few dozen
 *   requests' median moves between them with the server unchanged;
 * - cells of another schedule (arrival process, seed or ramp: other requests fall in the window,
 *   which moves the rates and the tail by itself) and cells Client-limited for the client's own
 *   reasons (their latencies from the schedule are partly the client's; a cell the in-flight ceiling
 *   held back is compared, as a slower server fills the ceiling) are not compared: the row says why (`note`);
 * - a cell the baseline measured that the new run did not (Over capacity, Not run) fails with one
 *   line naming its status, not one line per figure; except a cell Not run above a rate that was
 *   Saturated in the new run (a verdict one window can flip): that lower cell's figures are compared.
 * A rate sweep's points (`rates: sweep`) are not compared one by one: their rates come from each
 * run's own decode cells, so a slower server moves the points themselves (and their keys); the
 * decode cells that place them are compared. The comparison says so (`sweepNote`).
 * Pure.
 */
import { compareRateCellKeys, rateCellKey } from '../shapes/labels.js';
import type { RateCellResult, RunInfo, SpeedMatrixResult } from '../shapes/result.js';
import { REGRESSION_RATE_FIGURES, type RateCompareFigure, type ResolvedTolerances } from '../thresholds/tolerances.js';
import { compareFigure, unmeasuredNow, type RowComparison } from './compare-figure.js';
import { rateClientLimitedCauses } from './rate-client-limited.js';
import { medianSamplingSpread } from './median-interval.js';

/** A rate cell's value of a compared figure (undefined: the cell or the figure is absent). */
export function rateFigureValue(cell: RateCellResult | undefined, figure: RateCompareFigure): number | undefined {
  const f = cell?.figures;
  if (!f) return undefined;
  switch (figure) {
    case 'completedRate':
      return f.completedRate;
    case 'totalTokensPerSecond':
      return f.totalTokensPerSecond;
    case 'ttftFromScheduleMs':
      return f.ttftFromScheduleMs?.median;
    case 'ttftFromScheduleP99Ms':
      return f.ttftFromScheduleMs?.p99;
    case 'tbtMs':
      return f.tbtMs?.median;
  }
}

/**
 * Compare one rate cell with the baseline's same one (undefined: absent on that side). `windowS`:
 * the measurement window both runs used (completedRate's floor). `saturatedBelow`: where the new
 * cell is Not run because a lower rate of its context was Saturated in the new run, that rate.
 */
export function compareRateCell(
  base: RateCellResult | undefined,
  next: RateCellResult | undefined,
  tolerances: ResolvedTolerances,
  windowS: number,
  saturatedBelow?: number,
): RowComparison {
  const some = (next ?? base)!;
  const key = rateCellKey(some.context, some.rate);
  const row: RowComparison = { kind: 'rate', key, context: some.context, rate: some.rate, figures: [] };
  if (base) row.baseStatus = base.status;
  if (next) row.nextStatus = next.status;
  const unmeasured = base?.figures !== undefined && next !== undefined && next.figures === undefined;
  // a context's rates stop at its first Saturated one, a verdict one window can flip: that cell's figures are compared
  const why = unmeasured
    ? saturatedBelow !== undefined && next!.status === 'not-run'
      ? `not compared: not run this time, above ${saturatedBelow}/s, which was Saturated (that cell's own figures are compared)`
      : undefined
    : base?.figures && next?.figures
      ? notComparable(base, next)
      : undefined;
  if (why) {
    row.note = why;
    return row;
  }
  for (const figure of REGRESSION_RATE_FIGURES) {
    const b = rateFigureValue(base, figure);
    const x = rateFigureValue(next, figure);
    if (b === undefined && x === undefined) continue;
    const tolerance = tolerances.rates[figure];
    row.figures.push(
      compareFigure({
        label: `${key}/s`,
        figure,
        base: b,
        next: x,
        tolerance: figure === 'completedRate' && windowS > 0 ? { ...tolerance, absolute: Math.max(tolerance.absolute, 1 / windowS) } : tolerance,
        spread: samplingSpread(base, next, figure),
        nextPresent: next !== undefined,
      }),
    );
  }
  if (unmeasured) unmeasuredNow(row, `${key}/s`, next!.status, next!.notRunReason);
  return row;
}

/** a median figure's sampling spread (median-interval.ts); 0 for the counts and the p99 */
function samplingSpread(base: RateCellResult | undefined, next: RateCellResult | undefined, figure: RateCompareFigure): number {
  if (figure === 'tbtMs') return medianSamplingSpread(base?.figures?.tbtMs, next?.figures?.tbtMs);
  if (figure === 'ttftFromScheduleMs') return medianSamplingSpread(base?.figures?.ttftFromScheduleMs, next?.figures?.ttftFromScheduleMs);
  return 0;
}

/** how a row's note begins where the two cells' schedules differ */
export const NOT_COMPARED_SCHEDULE = 'not compared: another schedule';

/** Why two cells of one key are not compared figure by figure, or undefined. */
function notComparable(base: RateCellResult, next: RateCellResult): string | undefined {
  const differs: string[] = [];
  if (base.arrival !== next.arrival) differs.push(`arrival ${base.arrival} → ${next.arrival}`);
  // a cell's seed is drawn from the run's rate seed, its context and its rate (matrix/rate-test.ts)
  if (base.seed !== next.seed) differs.push('another schedule seed (LLM_BENCH_RATE_SEED)');
  if ((base.rampS ?? 0) !== (next.rampS ?? 0)) differs.push(`ramp ${base.rampS ?? 0} s → ${next.rampS ?? 0} s`);
  if (differs.length > 0) return `${NOT_COMPARED_SCHEDULE} (${differs.join(', ')}), so other requests fall in the window`;
  const [b, n] = [clientTimingOnly(base), clientTimingOnly(next)];
  if (!b && !n) return undefined;
  const which = b && n ? "both runs' cells are" : b ? "the baseline's cell is" : "the new run's cell is";
  return `not compared: ${which} Client-limited, so their latencies from the schedule are partly the client's`;
}

/**
 * Client-limited for the client's own reasons (its dispatch delay, its self-check), not because the
 * in-flight ceiling held requests back: requests that stay longer in a slower server fill the
 * ceiling, so such a cell is compared (its achieved rate shows the server's part).
 */
function clientTimingOnly(cell: RateCellResult): boolean {
  if (!cell.statuses.includes('client-limited')) return false;
  const c = cell.evidence.clientLimited;
  return !(c !== undefined && rateClientLimitedCauses(c).includes('in-flight-ceiling'));
}

/**
 * Where both runs have open-loop rates scheduled otherwise (arrival process, seed, ramp): one line
 * that says their rate cells are not compared (the in-run gate says it once at the start; compare
 * says it once). Undefined where they agree or either run has no rates.
 */
export function rateScheduleDifference(base: RunInfo, next: RunInfo): string | undefined {
  const [a, b] = [base.run.rates, next.run.rates];
  if (!a || !b) return undefined;
  const parts: string[] = [];
  if (a.arrival !== b.arrival) parts.push(`arrival ${a.arrival} → ${b.arrival}`);
  if (a.seed !== b.seed) parts.push(`seed ${a.seed} → ${b.seed}`);
  if (a.rampS !== b.rampS) parts.push(`ramp ${a.rampS} s → ${b.rampS} s`);
  if (parts.length === 0) return undefined;
  return `the baseline's open-loop rates were scheduled otherwise (${parts.join(', ')}): other requests fall in each window, so its rate cells are not compared with this run's (the decode cells are)`;
}

/** A result's planned rate cells by key ("8K@2"), the rate search's adaptive ones left out. */
export function plannedRateCells(result: SpeedMatrixResult): Map<string, RateCellResult> {
  return new Map((result.rateCells ?? []).filter((c) => !c.adaptive).map((c) => [rateCellKey(c.context, c.rate), c]));
}

/** Whether a run's rate cells are a sweep's points (their rates computed in that run). */
export function isRateSweep(result: SpeedMatrixResult): boolean {
  return result.info.run.rates?.sweep !== undefined;
}

/**
 * The open-loop rate cells of both results (the union; the search's adaptive ones left out), by
 * key; none where either run swept its rates (`sweepNote` says why).
 */
export function compareRateCells(base: SpeedMatrixResult, next: SpeedMatrixResult, tolerances: ResolvedTolerances): { rows: RowComparison[]; sweepNote?: string } {
  const [baseCells, nextCells] = [plannedRateCells(base), plannedRateCells(next)];
  if (isRateSweep(base) || isRateSweep(next)) {
    if (baseCells.size + nextCells.size === 0) return { rows: [] };
    const which = isRateSweep(base) && isRateSweep(next) ? 'both runs swept their rates' : `${isRateSweep(base) ? 'the baseline' : 'the new run'} swept its rates`;
    return {
      rows: [],
      sweepNote:
        `Open-loop rate cells are not compared one by one: ${which}, and a sweep's rates come from that run's own decode cells ` +
        `(a slower server moves the points themselves). The decode cells that place them are compared above (the baseline has ${baseCells.size} rate cells, the new run ${nextCells.size}).`,
    };
  }
  const keys = [...new Set([...baseCells.keys(), ...nextCells.keys()])].sort(compareRateCellKeys);
  const saturated = [...nextCells.values()].filter((c) => c.statuses.includes('saturated'));
  const saturatedBelow = (c: RateCellResult | undefined) =>
    c ? saturated.filter((s) => s.context === c.context && s.rate < c.rate).reduce<number | undefined>((low, s) => (low === undefined || s.rate < low ? s.rate : low), undefined) : undefined;
  return { rows: keys.map((k) => compareRateCell(baseCells.get(k), nextCells.get(k), tolerances, next.info.run.windowS, saturatedBelow(nextCells.get(k)))) };
}
