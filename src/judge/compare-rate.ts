/**
 * Open-loop rate cells of two results, figure by figure, by compare.ts's rule (its header): the
 * same context and offered rate ("8K@2"), the same arrival process. Figures (REGRESSION_RATE_FIGURES):
 * the achieved rate (completedRate), total tok/s, TTFT from the schedule (median and p99), time
 * between tokens (median). The rate search's own cells (adaptive) are compared through the
 * highest rate at the SLO instead (compare-capacity.ts).
 *
 * Two departures from a decode cell's comparison, both about what one cell can tell:
 * - completedRate counts requests in a fixed window, so one request more or less moves it by
 *   1 / window: its absolute floor is raised to that (a change of one request is never a regression);
 * - cells of another arrival process (poisson against constant) offer other traffic: no figure is
 *   compared, and the row says why (`note`). A different seed is the same traffic drawn again, and is compared.
 * A rate sweep's points (`rates: sweep`) are not compared one by one: their rates come from each
 * run's own decode cells, so a slower server moves the points themselves (and their keys); the
 * decode cells that place them are compared. The comparison says so (`sweepNote`).
 * Pure.
 */
import { compareRateCellKeys, rateCellKey } from '../shapes/labels.js';
import type { RateCellResult, SpeedMatrixResult } from '../shapes/result.js';
import { REGRESSION_RATE_FIGURES, type RateCompareFigure, type ResolvedTolerances } from '../thresholds/tolerances.js';
import { compareFigure, type RowComparison } from './compare-figure.js';

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
 * the measurement window both runs used (completedRate's floor).
 */
export function compareRateCell(
  base: RateCellResult | undefined,
  next: RateCellResult | undefined,
  tolerances: ResolvedTolerances,
  windowS: number,
): RowComparison {
  const some = (next ?? base)!;
  const key = rateCellKey(some.context, some.rate);
  const row: RowComparison = { kind: 'rate', key, context: some.context, rate: some.rate, figures: [] };
  if (base) row.baseStatus = base.status;
  if (next) row.nextStatus = next.status;
  if (base && next && base.arrival !== next.arrival) {
    row.note = `not compared: the baseline's requests arrived ${base.arrival}, the new run's ${next.arrival} (other traffic)`;
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
        spread: 0,
        nextPresent: next !== undefined,
      }),
    );
  }
  return row;
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
  const planned = (r: SpeedMatrixResult) => new Map((r.rateCells ?? []).filter((c) => !c.adaptive).map((c) => [rateCellKey(c.context, c.rate), c]));
  const [baseCells, nextCells] = [planned(base), planned(next)];
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
  return { rows: keys.map((k) => compareRateCell(baseCells.get(k), nextCells.get(k), tolerances, next.info.run.windowS)) };
}
