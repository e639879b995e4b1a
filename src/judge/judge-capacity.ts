/**
 * Every decision about one capacity row (runs with an SLO): its capacity at the SLO from
 * everything judged (the row's columns, the search's adaptive cells, the confirmation; the record
 * is src/slo/capacity.ts capacityRow), its threshold budget (thresholds.ts capacityBudgetFailures)
 * and the baseline (baseline-gate.ts, only at the same SLO). A search cell that could not be
 * measured leaves the answer open: a failure line, not stored. Each cell is judged against the SLO
 * on its own first (slo-verdict.ts). Pure: the caller stores and throws (src/matrix/capacity-test.ts).
 */
import type { CapacityRow, CellResult, Slo } from '../shapes/result.js';
import { capacityRow, type CapacityInput } from './capacity-row.js';
import { capacityBudgetFailures } from './thresholds.js';
import { baselineCapacityFailures, type Baseline } from './baseline-gate.js';
import { capacityNotFound } from '../text/capacity-line.js';

export interface CapacityRules {
  slo: Slo;
  /** the threshold file's capacity budget for this row (`capacity: { "32K": { "min": 20 } }`) */
  budgetMin?: number;
  /** the threshold file's slack */
  slack: number;
  baseline?: Baseline;
}

export interface CapacityJudgement {
  /** the row with its capacity, and its budget and baseline lines where they fail */
  row: CapacityRow;
  /** search cells that could not be measured: not stored, they fail the test */
  unmeasured: string[];
}

/** The judgement of one row's capacity search (`cells`: the search's adaptive cells). */
export function judgeCapacityRow(input: CapacityInput, cells: readonly CellResult[], rules: CapacityRules): CapacityJudgement {
  const row = capacityRow(input);
  const budgetFailures = capacityBudgetFailures(row, rules.budgetMin, rules.slack);
  if (budgetFailures.length > 0) row.thresholdFailures = budgetFailures;
  if (rules.baseline) {
    const regressions = baselineCapacityFailures(rules.baseline, row, rules.slo.text);
    if (regressions.length > 0) row.baselineFailures = regressions;
  }
  const unmeasured = cells
    .filter((c) => c.status === 'not-run')
    .map((c) => `capacity ${row.contextLabel}: the search's cell at ${c.concurrency} could not be measured (${c.notRunReason ?? 'not run'}), so ${capacityNotFound(row) ? 'no capacity was found' : `${row.capacity} is only a lower bound`}`);
  return { row, unmeasured };
}
