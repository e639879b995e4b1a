/**
 * The judging stage: every decision about a cell or a row, one entry point per kind of row. Each
 * takes figures (src/metrics/) and the run's rules and returns what is stored on the result;
 * none touches Vitest (the matrix's tests store it and throw or skip: src/matrix/).
 * - a cell: judgeCellStatus (status, statuses, evidence of a measured cell), then judgeCell
 *   (threshold failures, SLO verdict, baseline failures); computeGoodput per repeat (goodput.ts);
 * - a prefill row: prefillStatus, then judgePrefillRow;
 * - a capacity row: judgeCapacityRow (each search cell judged first with sloVerdict);
 * - a rate capacity row: judgeRateCapacityRow (each rate cell judged first with rateSloVerdict).
 * The rules live in: status.ts (statuses, Over capacity), buffered.ts (Stream buffered), repeat.ts
 * (a status over repeats), thresholds.ts (budgets), slo-verdict.ts (a cell against the SLO),
 * goodput.ts (each request against the SLO), compare.ts and compare-capacity.ts (a figure or a
 * capacity against a base: improved, regressed, within noise), baseline-gate.ts (the in-run gate).
 */
export { judgeCell, judgeCellStatus, type CellJudgement, type CellRules } from './judge-cell.js';
export { judgePrefillRow, prefillStatus, type PrefillJudgement, type PrefillRules } from './judge-prefill.js';
export { judgeCapacityRow, type CapacityJudgement, type CapacityRules } from './judge-capacity.js';
export { judgeRateCapacityRow, rateJudgedOf, type RateCapacityRules } from './rate-capacity-row.js';
export { rateSloVerdict, sloVerdict, unmeasuredVerdict } from './slo-verdict.js';
export { computeGoodput, sumGoodput } from './goodput.js';
export { overCapacity } from './status.js';
export type { Baseline } from './baseline-gate.js';
