/**
 * A context's highest open-loop rate at the SLO, decided from everything the search judged (the
 * configured rates, its adaptive rate cells) and its confirmation (slo/rate-capacity.ts), as a
 * concurrency capacity row is (capacity-row.ts): the highest rate meeting the SLO below the first
 * that does not, the constraint that binds there, its goodput. Then its threshold budget
 * (thresholds.ts rateCapacityBudgetFailures) and the baseline (baseline-gate.ts, only at the same
 * SLO). Pure: the caller stores and throws (src/matrix/rate-capacity-test.ts).
 */
import type { Goodput, RateCapacityRow, RateCellResult, Slo, SloVerdict } from '../shapes/result.js';
import { rateBracket, rateResolutionAt, type RateJudged } from '../slo/rate-capacity.js';
import { formatRps } from '../text/capacity-line.js';
import { rateCapacityBudgetFailures } from './thresholds.js';
import { baselineRateCapacityFailures, type Baseline } from './baseline-gate.js';

export interface RateCapacityInput {
  context: number;
  contextLabel: string;
  judged: readonly RateJudged[];
  /** the final measured cell at the capacity */
  confirmation?: { rate: number; verdict: SloVerdict; goodput?: Goodput };
}

/** The row's record from everything judged and the confirmation. */
export function rateCapacityRow(input: RateCapacityInput): RateCapacityRow {
  const { lo, hi, loJudged, hiJudged } = rateBracket(input.judged);
  const sorted = [...input.judged].sort((a, b) => a.rate - b.rate);
  const row: RateCapacityRow = {
    context: input.context,
    contextLabel: input.contextLabel,
    capacity: lo,
    atLeast: hi === undefined && sorted.length > 0,
    searched: sorted.map((j) => ({ rate: j.rate, meets: j.verdict.meets, adaptive: j.adaptive })),
    adaptiveCells: sorted.filter((j) => j.adaptive && j.measured !== false).length + (input.confirmation ? 1 : 0),
    resolution: rateResolutionAt(lo),
  };
  if (hiJudged?.verdict.binding) {
    row.binding = hiJudged.verdict.binding;
    row.bindingRate = hiJudged.rate;
  }
  const goodput = input.confirmation?.goodput ?? loJudged?.goodput;
  if (lo > 0 && goodput) row.goodput = goodput;
  if (input.confirmation) {
    const c = input.confirmation;
    row.confirmation = { rate: c.rate, meets: c.verdict.meets, ...(c.verdict.binding ? { binding: c.verdict.binding } : {}) };
  }
  return row;
}

/** A judged entry from a rate cell result and its verdict. */
export function rateJudgedOf(cell: RateCellResult, adaptive: boolean): RateJudged | undefined {
  if (!cell.slo) return undefined;
  return {
    rate: cell.rate,
    verdict: cell.slo,
    adaptive,
    ...(cell.status === 'over-capacity' || cell.status === 'not-run' ? { measured: false } : {}),
    ...(cell.goodput ? { goodput: cell.goodput } : {}),
  };
}

export interface RateCapacityRules {
  slo: Slo;
  /** the threshold file's budget for this context (`rateCapacity: { "8K": { "min": 10.5 } }`) */
  budgetMin?: number;
  slack: number;
  baseline?: Baseline;
}

/**
 * The judgement of one context's rate capacity search (`cells`: its adaptive rate cells): the row
 * with its budget and baseline lines where they fail, and the search cells that could not be
 * measured (they leave the answer open: failure lines, not stored).
 */
export function judgeRateCapacityRow(input: RateCapacityInput, cells: readonly RateCellResult[], rules: RateCapacityRules): { row: RateCapacityRow; unmeasured: string[] } {
  const row = rateCapacityRow(input);
  const budgetFailures = rateCapacityBudgetFailures(row, rules.budgetMin, rules.slack);
  if (budgetFailures.length > 0) row.thresholdFailures = budgetFailures;
  if (rules.baseline) {
    const regressions = baselineRateCapacityFailures(rules.baseline, row, rules.slo.text);
    if (regressions.length > 0) row.baselineFailures = regressions;
  }
  const unmeasured = cells
    .filter((c) => c.status === 'not-run')
    .map((c) => `rate capacity ${row.contextLabel}: the search's cell at ${formatRps(c.rate)} could not be measured (${c.notRunReason ?? 'not run'}), so ${formatRps(row.capacity)} is only a lower bound`);
  return { row, unmeasured };
}
