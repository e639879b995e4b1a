/**
 * Every decision about one prefill row: its status (a request that failed, or gave no figures,
 * makes the row Errors), its threshold budget (thresholds.ts) and the baseline (baseline-gate.ts).
 * An Errors row fails its test even under `-u`; the budget and baseline lines do not under `-u`.
 * Pure: the caller stores the judgement on the row and throws (src/matrix/prefill-test.ts).
 */
import type { PrefillRepeats, PrefillRowResult } from '../shapes/result.js';
import type { PrefillBudget, Tolerances } from '../thresholds/schema.js';
import { evaluatePrefill } from './thresholds.js';
import { baselinePrefillFailures, type Baseline } from './baseline-gate.js';

export interface PrefillRules {
  /** the threshold file's budget for this row */
  budget?: PrefillBudget;
  tolerances?: Tolerances;
  baseline?: Baseline;
}

export interface PrefillJudgement {
  /** the budget's failure lines (empty: pass) */
  thresholdFailures: string[];
  /** the baseline's regression lines; absent without a baseline */
  baselineFailures?: string[];
  /** the row's own failure (a request failed): not stored, it fails the test */
  rowFailure?: string;
}

/** A measured row's status from its requests: Errors when any failed or gave no figures. */
export function prefillStatus(repeats: Pick<PrefillRepeats, 'failed'>): 'errors' | 'valid' {
  return repeats.failed > 0 ? 'errors' : 'valid';
}

/** The judgement of one prefill row (measured, or kept from a resumed run). */
export function judgePrefillRow(key: string, row: PrefillRowResult, rules: PrefillRules): PrefillJudgement {
  return {
    thresholdFailures: evaluatePrefill(key, row, rules.budget, rules.tolerances),
    ...(rules.baseline ? { baselineFailures: baselinePrefillFailures(rules.baseline, row) } : {}),
    ...(row.status === 'errors' ? { rowFailure: `prefill ${key} failed: ${row.error ?? 'see the page'}` } : {}),
  };
}
