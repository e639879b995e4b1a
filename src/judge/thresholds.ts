/**
 * Pure: a measured cell, prefill row, capacity row or rate capacity row against its budget → failure messages (empty = pass).
 * Each message names the cell, the figure, the measured value, the budget and the margin:
 * `64K/16 perRequestTokensPerSecond 21.3 < min 24.0 (11.3% below)`.
 * A Client-limited cell fails here only through its status (expected "valid", accepted via
 * tolerances.acceptStatuses); judge-cell.ts adds its own client-limited rule (config allowClientLimited).
 */
import type { CapacityRow, CellResult, PrefillRowResult, RateCapacityRow } from '../shapes/result.js';
import { bindingText, CAPACITY_NOT_FOUND, capacityNotFound, formatRps, notFoundReason } from '../text/capacity-line.js';
import type { CellBudget, CellFigureName, PrefillBudget, PrefillFigureName, Tolerances } from '../thresholds/schema.js';
import { CELL_FIGURES, PREFILL_FIGURES } from '../thresholds/schema.js';
import { appendAll } from '../extent.js';

/** The value a cell budget compares: medians for the distributions, undefined when absent. */
export function cellFigureValue(cell: CellResult | undefined, name: CellFigureName): number | undefined {
  const f = cell?.figures;
  if (!f) return undefined;
  switch (name) {
    case 'ttftMs':
      return f.ttftMs?.median;
    case 'timeBetweenTokensMs':
      return f.timeBetweenTokensMs?.median;
    case 'itlP99Ms':
      return f.interTokenLatencyMs?.p99;
    case 'maxGapMs':
      return f.longestGap?.ms;
    default:
      return f[name];
  }
}

export function prefillFigureValue(row: PrefillRowResult | undefined, name: PrefillFigureName): number | undefined {
  return row?.figures?.[name];
}

/**
 * Whether a cell's measured status meets the status its budget expects: the same, one the file's
 * tolerances.acceptStatuses lists, or Valid where Requests queued was expected (the server queued
 * nothing this time, which is no regression; METHOD.md's queue signals can read Requests queued
 * at a column equal to the server's slots on one run and not the next).
 */
export function statusMeets(expected: string | undefined, measured: string, tolerances: Tolerances = {}): boolean {
  if (expected === undefined || expected === measured) return true;
  if (expected === 'requests-queued' && measured === 'valid') return true;
  return (tolerances.acceptStatuses ?? []).includes(measured as NonNullable<Tolerances['acceptStatuses']>[number]);
}

/** Check one cell. `cell` undefined = the cell did not run (every budget then fails as missing). */
export function evaluateCell(
  key: string,
  cell: CellResult | undefined,
  budget: CellBudget | undefined,
  tolerances: Tolerances = {},
): string[] {
  if (!budget) return [];
  const failures: string[] = [];
  if (!cell) failures.push(`${key} did not run, but the threshold file has a budget for it`);
  else if (!statusMeets(budget.status, cell.status, tolerances)) {
    failures.push(`${key} status ${cell.status}, expected ${budget.status}`);
  }
  for (const name of CELL_FIGURES) {
    appendAll(failures, checkFigure(key, name, cellFigureValue(cell, name), budget.min?.[name], budget.max?.[name], tolerances));
  }
  return failures;
}

/** Check one prefill row. */
export function evaluatePrefill(
  key: string,
  row: PrefillRowResult | undefined,
  budget: PrefillBudget | undefined,
  tolerances: Tolerances = {},
): string[] {
  if (!budget) return [];
  const failures: string[] = [];
  if (!row) failures.push(`prefill ${key} did not run, but the threshold file has a budget for it`);
  else if (budget.status !== undefined && row.status !== budget.status) {
    failures.push(`prefill ${key} status ${row.status}, expected ${budget.status}`);
  }
  for (const name of PREFILL_FIGURES) {
    appendAll(failures, checkFigure(`prefill ${key}`, name, prefillFigureValue(row, name), budget.min?.[name], budget.max?.[name], tolerances));
  }
  return failures;
}

function checkFigure(
  key: string,
  name: string,
  value: number | undefined,
  min: number | undefined,
  max: number | undefined,
  tolerances: Tolerances,
): string[] {
  if (min === undefined && max === undefined) return [];
  const slack = tolerances.slack ?? 0;
  const slackNote = slack > 0 ? `, slack ${formatPercent(slack * 100)}` : '';
  if (value === undefined) {
    const budgets = [min !== undefined ? `min ${formatValue(min)}` : '', max !== undefined ? `max ${formatValue(max)}` : '']
      .filter(Boolean)
      .join(', ');
    return [`${key} ${name} missing (budget ${budgets})`];
  }
  const out: string[] = [];
  if (min !== undefined && value < min * (1 - slack)) {
    out.push(`${key} ${name} ${formatValue(value)} < min ${formatValue(min)} (${margin(min - value, min)} below${slackNote})`);
  }
  if (max !== undefined && value > max * (1 + slack)) {
    out.push(`${key} ${name} ${formatValue(value)} > max ${formatValue(max)} (${margin(value - max, max)} above${slackNote})`);
  }
  return out;
}

function margin(diff: number, budget: number): string {
  return budget === 0 ? `${formatValue(diff)}` : formatPercent((diff / budget) * 100);
}

function formatPercent(p: number): string {
  return `${p.toFixed(1)}%`;
}

/** one decimal for ordinary magnitudes, 3 significant digits below 1 */
export function formatValue(x: number): string {
  return Math.abs(x) >= 1 || x === 0 ? x.toFixed(1) : x.toPrecision(3);
}

/**
 * The row's capacity against its threshold (`capacity: { "32K": { "min": 20 } }`), with the
 * file's slack: min × (1 − slack). A row whose every column met the SLO only shows a lower bound:
 * below the budget it fails too, naming the column to add.
 */
export function capacityBudgetFailures(row: CapacityRow, min: number | undefined, slack: number): string[] {
  if (min === undefined) return [];
  const bound = min * (1 - slack);
  if (row.capacity >= bound) return [];
  const shown = slack > 0 ? `${min} (slack ${Math.round(slack * 100)} %: ${Number(bound.toFixed(1))})` : String(min);
  if (row.atLeast) {
    return [`capacity ${row.contextLabel}: every column met the SLO, but the largest is ${row.capacity} < budget ${shown}; add a column of at least ${min} to measure it`];
  }
  if (capacityNotFound(row)) return [`capacity ${row.contextLabel}: ${CAPACITY_NOT_FOUND}, budget ${shown}: ${notFoundReason(row, 'concurrency')}`];
  const binds = row.binding ? `; binds: ${bindingText(row.binding, row.bindingConcurrency)}` : '';
  return [`capacity ${row.contextLabel}: ${row.capacity} users < budget ${shown}${binds}`];
}

/**
 * A context's highest rate at the SLO against its threshold (`rateCapacity: { "8K": { "min": 10.5 } }`),
 * by capacityBudgetFailures' rule: min × (1 − slack); a context whose every rate met the SLO only
 * shows a lower bound, and below the budget it fails too, naming the rate to add. The message
 * names the context and both rates.
 */
export function rateCapacityBudgetFailures(row: RateCapacityRow, min: number | undefined, slack: number): string[] {
  if (min === undefined) return [];
  const bound = min * (1 - slack);
  if (row.capacity >= bound) return [];
  const shown = slack > 0 ? `${formatRps(min)} (slack ${Math.round(slack * 100)} %: ${formatRps(bound)})` : formatRps(min);
  if (row.atLeast) {
    return [`rate capacity ${row.contextLabel}: every rate met the SLO, but the highest is ${formatRps(row.capacity)}, below its budget ${shown}; add a rate of at least ${formatRps(min)} to measure it`];
  }
  if (capacityNotFound(row)) return [`rate capacity ${row.contextLabel}: ${CAPACITY_NOT_FOUND}, budget ${shown}: ${notFoundReason(row, 'rate')}`];
  const binds = row.binding ? `; binds: ${bindingText(row.binding)}${row.bindingRate !== undefined ? ` at ${formatRps(row.bindingRate)}` : ''}` : '';
  return [`rate capacity ${row.contextLabel}: the highest rate at the SLO is ${formatRps(row.capacity)}, below its budget ${shown}${binds}`];
}
