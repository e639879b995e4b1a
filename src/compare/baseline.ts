/**
 * The in-run gate (LLM_BENCH_BASELINE=path/to/speed-matrix.json): loaded once when the matrix is
 * collected; each cell and prefill row then compares itself with the baseline's same cell or row
 * (src/compare/compare.ts) and fails with one line per regressed figure.
 * A cell the baseline does not have is not gated. The baseline must have been measured the same
 * way (max output tokens, window, endpoint); its contexts and concurrency may differ, so a run of
 * part of the matrix can still be checked.
 */
import { ConfigError } from '../errors.js';
import { cellKey } from '../shapes/labels.js';
import type { CapacityRow, CellResult, PrefillRowResult, RunInfo, SpeedMatrixResult } from '../shapes/result.js';
import type { RegressionTolerances } from '../thresholds/schema.js';
import { compareCell, comparePrefill, matrixDifferences } from '../judge/compare.js';
import { compareCapacityRow } from '../judge/compare-capacity.js';
import { loadResultFile } from './load.js';
import { resolveTolerances, type ResolvedTolerances } from './tolerances.js';

export const BASELINE_VARIABLE = 'LLM_BENCH_BASELINE';

export interface LoadedBaseline {
  path: string;
  result: SpeedMatrixResult;
  cells: Map<string, CellResult>;
  prefill: Map<number, PrefillRowResult>;
  tolerances: ResolvedTolerances;
}

/** Wrap a loaded result as a baseline. */
export function asBaseline(path: string, result: SpeedMatrixResult, overrides?: RegressionTolerances): LoadedBaseline {
  return {
    path,
    result,
    cells: new Map(result.cells.filter((c) => !c.adaptive).map((c) => [cellKey(c.context, c.concurrency), c])),
    prefill: new Map(result.prefill.map((p) => [p.context, p])),
    tolerances: resolveTolerances(overrides),
  };
}

/** Read and validate the baseline file (before the run opens, so a wrong path fails at once). */
export function readBaseline(path: string): SpeedMatrixResult {
  return loadResultFile(path, BASELINE_VARIABLE);
}

/**
 * Check a baseline against the run described by `info` (read with readBaseline, or here).
 * Errors name LLM_BENCH_BASELINE, the file and the fix.
 */
export function loadBaseline(
  path: string,
  info: RunInfo,
  overrides?: RegressionTolerances,
  result: SpeedMatrixResult = readBaseline(path),
): LoadedBaseline {
  const differences = matrixDifferences(result.info, info, 'cell');
  if (differences.length > 0) {
    throw new ConfigError(
      `${BASELINE_VARIABLE}: ${path} was measured differently from this run, so its cells cannot be compared:\n  ` +
        `${differences.join('\n  ')}\nRun with the baseline's settings (LLM_BENCH_MAX_TOKENS, LLM_BENCH_DURATION_S, LLM_BENCH_ENDPOINT) or pick another baseline`,
    );
  }
  return asBaseline(path, result, overrides);
}

/** Regression lines of one measured cell against the baseline (empty: pass or not in the baseline). */
export function baselineCellFailures(baseline: LoadedBaseline, cell: CellResult): string[] {
  const base = baseline.cells.get(cellKey(cell.context, cell.concurrency));
  if (!base) return [];
  return compareCell(base, cell, baseline.tolerances).figures.flatMap((f) => (f.fails && f.message ? [f.message] : []));
}

/** Regression lines of one prefill row against the baseline. */
export function baselinePrefillFailures(baseline: LoadedBaseline, row: PrefillRowResult): string[] {
  const base = baseline.prefill.get(row.context);
  if (!base) return [];
  return comparePrefill(base, row, baseline.tolerances).figures.flatMap((f) => (f.fails && f.message ? [f.message] : []));
}

/**
 * Regression line of one row's capacity at the SLO against the baseline's (empty: pass, not in
 * the baseline, or measured at another SLO: `sloText` is this run's).
 */
export function baselineCapacityFailures(baseline: LoadedBaseline, row: CapacityRow, sloText: string | undefined): string[] {
  if (baseline.result.info.run.slo?.text !== sloText) return [];
  const base = baseline.result.capacity?.rows.find((r) => r.context === row.context);
  if (!base) return [];
  const delta = compareCapacityRow(base, row, baseline.tolerances.capacity);
  return delta.fails && delta.message ? [delta.message] : [];
}
