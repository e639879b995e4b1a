/**
 * Regression tolerances of the baseline comparison: which figures are compared, which way is
 * better, and how far each may move the wrong way before it counts as a regression.
 *
 * Defaults (overridable per figure in the threshold file's `tolerances.regression` block):
 *   cells:   totalTokensPerSecond 5 %, perRequestTokensPerSecond 5 %,
 *            timeBetweenTokensMs 5 % (and more than 0.5 ms), ttftMs 10 % (and more than 5 ms)
 *   prefill: promptTokensPerSecond 10 %, ttftMs 10 % (and more than 5 ms)
 *   open-loop rate cells: completedRate 5 % (and more than one request in the window),
 *            totalTokensPerSecond 5 %, ttftFromScheduleMs (median) 10 % (and more than 5 ms),
 *            ttftFromScheduleP99Ms 20 % (and more than 10 ms), tbtMs (median) 5 % (and more than 0.5 ms)
 *   capacity at the SLO: 5 % (and more than 1 user; never less than the baseline search's resolution)
 * Throughput and time between tokens are averages over a whole window, so they are steady; TTFT
 * and prefill come from few requests (prefill from one), so they get more room, and a p99 more still. The absolute
 * floors keep timer and scheduling jitter on millisecond latencies from reading as a regression.
 */
import {
  REGRESSION_CELL_FIGURES,
  REGRESSION_PREFILL_FIGURES,
  REGRESSION_RATE_FIGURES,
  type RegressionTolerance,
  type RegressionTolerances,
} from './schema.js';

export type CellCompareFigure = (typeof REGRESSION_CELL_FIGURES)[number];
export type PrefillCompareFigure = (typeof REGRESSION_PREFILL_FIGURES)[number];
export type RateCompareFigure = (typeof REGRESSION_RATE_FIGURES)[number];

/** A resolved tolerance: relative fraction plus an absolute floor in the figure's unit (0 = none). */
export interface FigureTolerance {
  relative: number;
  absolute: number;
}

export interface ResolvedTolerances {
  cells: Record<CellCompareFigure, FigureTolerance>;
  prefill: Record<PrefillCompareFigure, FigureTolerance>;
  /** open-loop rate cells (completedRate's floor is raised to one request in the window where compared: src/judge/compare-rate.ts) */
  rates: Record<RateCompareFigure, FigureTolerance>;
  /** capacity at the SLO, in users */
  capacity: FigureTolerance;
}

export const DEFAULT_TOLERANCES: ResolvedTolerances = {
  cells: {
    totalTokensPerSecond: { relative: 0.05, absolute: 0 },
    perRequestTokensPerSecond: { relative: 0.05, absolute: 0 },
    ttftMs: { relative: 0.1, absolute: 5 },
    timeBetweenTokensMs: { relative: 0.05, absolute: 0.5 },
  },
  prefill: {
    promptTokensPerSecond: { relative: 0.1, absolute: 0 },
    ttftMs: { relative: 0.1, absolute: 5 },
  },
  rates: {
    completedRate: { relative: 0.05, absolute: 0 },
    totalTokensPerSecond: { relative: 0.05, absolute: 0 },
    ttftFromScheduleMs: { relative: 0.1, absolute: 5 },
    ttftFromScheduleP99Ms: { relative: 0.2, absolute: 10 },
    tbtMs: { relative: 0.05, absolute: 0.5 },
  },
  capacity: { relative: 0.05, absolute: 1 },
};

/** Figures where a higher value is better; every other compared figure is a latency (lower is better). */
export const HIGHER_IS_BETTER_FIGURES: ReadonlySet<string> = new Set([
  'totalTokensPerSecond',
  'perRequestTokensPerSecond',
  'promptTokensPerSecond',
  'completedRate',
]);

function resolveOne(spec: RegressionTolerance | undefined, fallback: FigureTolerance): FigureTolerance {
  if (spec === undefined) return fallback;
  if (typeof spec === 'number') return { relative: spec, absolute: fallback.absolute };
  return { relative: spec.relative, absolute: spec.absolute ?? fallback.absolute };
}

/**
 * The defaults with the threshold file's overrides applied figure by figure. A plain number
 * replaces the relative tolerance and keeps the default absolute floor.
 */
export function resolveTolerances(overrides?: RegressionTolerances): ResolvedTolerances {
  const cells = { ...DEFAULT_TOLERANCES.cells };
  for (const name of REGRESSION_CELL_FIGURES) cells[name] = resolveOne(overrides?.cells?.[name], cells[name]);
  const prefill = { ...DEFAULT_TOLERANCES.prefill };
  for (const name of REGRESSION_PREFILL_FIGURES) prefill[name] = resolveOne(overrides?.prefill?.[name], prefill[name]);
  const rates = { ...DEFAULT_TOLERANCES.rates };
  for (const name of REGRESSION_RATE_FIGURES) rates[name] = resolveOne(overrides?.rates?.[name], rates[name]);
  const capacity = resolveOne(overrides?.capacity, DEFAULT_TOLERANCES.capacity);
  return { cells, prefill, rates, capacity };
}

export { REGRESSION_CELL_FIGURES, REGRESSION_PREFILL_FIGURES, REGRESSION_RATE_FIGURES };
