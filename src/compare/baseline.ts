/**
 * The in-run gate's baseline (LLM_BENCH_BASELINE=path/to/speed-matrix.json): read and checked once
 * when the matrix is collected; each cell, prefill row and capacity row then compares itself with
 * the baseline's same one (src/judge/baseline-gate.ts) and fails with one line per regressed figure.
 * A cell the baseline does not have is not gated. The baseline must have been measured the same
 * way (max output tokens, window, endpoint); its contexts and concurrency may differ, so a run of
 * part of the matrix can still be checked.
 */
import { ConfigError } from '../errors.js';
import { cellKey } from '../shapes/labels.js';
import type { RunInfo, SpeedMatrixResult } from '../shapes/result.js';
import type { RegressionTolerances } from '../thresholds/schema.js';
import { matrixDifferences } from '../judge/compare.js';
import { isRateSweep, plannedRateCells } from '../judge/compare-rate.js';
import type { Baseline } from '../judge/baseline-gate.js';
import { loadResultFile } from './load.js';
import { resolveTolerances } from '../thresholds/tolerances.js';

export const BASELINE_VARIABLE = 'LLM_BENCH_BASELINE';

/** A baseline as read from its file: what the gate compares with, and where it came from. */
export interface LoadedBaseline extends Baseline {
  path: string;
}

/** Wrap a loaded result as a baseline. */
export function asBaseline(path: string, result: SpeedMatrixResult, overrides?: RegressionTolerances): LoadedBaseline {
  return {
    path,
    result,
    cells: new Map(result.cells.filter((c) => !c.adaptive).map((c) => [cellKey(c.context, c.concurrency), c])),
    prefill: new Map(result.prefill.map((p) => [p.context, p])),
    // a sweep's points have rates of their own run's (compare-rate.ts): no cell of this run is gated on them
    rateCells: isRateSweep(result) ? new Map() : plannedRateCells(result),
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
        `${differences.join('\n  ')}\nRun with the baseline's settings (LLM_BENCH_MAX_TOKENS, LLM_BENCH_DURATION_S, LLM_BENCH_ENDPOINT, LLM_BENCH_WORKLOAD) or pick another baseline`,
    );
  }
  return asBaseline(path, result, overrides);
}
