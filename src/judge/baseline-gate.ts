/**
 * The in-run gate (LLM_BENCH_BASELINE): a measured cell, prefill row, capacity row or rate capacity row against the
 * baseline's same one, by the comparison rules (compare.ts, compare-capacity.ts) → one line per
 * regressed figure (empty: pass). A cell or row the baseline does not have is not gated. Reading
 * and checking the baseline file is src/compare/baseline.ts's. Pure.
 */
import { cellKey, rateCellKey } from '../shapes/labels.js';
import type { CapacityRow, CellResult, PrefillRowResult, RateCapacityRow, RateCellResult, SpeedMatrixResult } from '../shapes/result.js';
import type { ResolvedTolerances } from '../thresholds/tolerances.js';
import { compareCell, comparePrefill } from './compare.js';
import { compareCapacityRow, compareRateCapacityRow } from './compare-capacity.js';
import { compareRateCell } from './compare-rate.js';

/** What the gate compares with: the baseline run, its matrix cells and prefill rows, the tolerances. */
export interface Baseline {
  result: SpeedMatrixResult;
  /** the baseline's matrix cells by key (not the capacity search's adaptive ones) */
  cells: Map<string, CellResult>;
  prefill: Map<number, PrefillRowResult>;
  /** the baseline's open-loop rate cells by key ("8K@2"; not the rate search's adaptive ones) */
  rateCells: Map<string, RateCellResult>;
  tolerances: ResolvedTolerances;
}

/** Regression lines of one measured cell against the baseline (empty: pass or not in the baseline). */
export function baselineCellFailures(baseline: Baseline, cell: CellResult): string[] {
  const base = baseline.cells.get(cellKey(cell.context, cell.concurrency));
  if (!base) return [];
  return compareCell(base, cell, baseline.tolerances).figures.flatMap((f) => (f.fails && f.message ? [f.message] : []));
}

/** Regression lines of one prefill row against the baseline. */
export function baselinePrefillFailures(baseline: Baseline, row: PrefillRowResult): string[] {
  const base = baseline.prefill.get(row.context);
  if (!base) return [];
  return comparePrefill(base, row, baseline.tolerances).figures.flatMap((f) => (f.fails && f.message ? [f.message] : []));
}

/** Regression lines of one measured open-loop rate cell against the baseline's cell of the same context and rate (compare-rate.ts). */
export function baselineRateCellFailures(baseline: Baseline, cell: RateCellResult, windowS: number): string[] {
  const base = baseline.rateCells.get(rateCellKey(cell.context, cell.rate));
  if (!base) return [];
  return compareRateCell(base, cell, baseline.tolerances, windowS).figures.flatMap((f) => (f.fails && f.message ? [f.message] : []));
}

/**
 * Regression line of one row's capacity at the SLO against the baseline's (empty: pass, not in
 * the baseline, or measured at another SLO: `sloText` is this run's).
 */
export function baselineCapacityFailures(baseline: Baseline, row: CapacityRow, sloText: string | undefined): string[] {
  if (baseline.result.info.run.slo?.text !== sloText) return [];
  const base = baseline.result.capacity?.rows.find((r) => r.context === row.context);
  if (!base) return [];
  const delta = compareCapacityRow(base, row, baseline.tolerances.capacity);
  return delta.fails && delta.message ? [delta.message] : [];
}

/** Regression line of one context's highest rate at the SLO against the baseline's (as baselineCapacityFailures). */
export function baselineRateCapacityFailures(baseline: Baseline, row: RateCapacityRow, sloText: string | undefined): string[] {
  if (baseline.result.info.run.slo?.text !== sloText) return [];
  const base = baseline.result.rateCapacity?.rows.find((r) => r.context === row.context);
  if (!base) return [];
  const delta = compareRateCapacityRow(base, row, baseline.tolerances.capacity);
  return delta.fails && delta.message ? [delta.message] : [];
}
