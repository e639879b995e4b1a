/**
 * Pure baseline comparison: two speed-matrix results → per cell (and prefill row) and figure the
 * change, a verdict, and whether it fails the gate.
 *
 * The rule, per figure (b = baseline value, x = new value):
 *   change   = (x − b) / b                       (relative; ±Infinity when b = 0 and x ≠ 0)
 *   worse    = −change for higher-is-better figures (tok/s), +change for latencies
 *   spread   = relativeHalfRange of the figure's repeats in the baseline + the same in the new
 *              result (0 for a side measured once; prefill rows too); relativeHalfRange = (max − min) / 2 / median
 *   allowed  = tolerance.relative + spread
 *   regressed     when worse  > allowed and |x − b| > tolerance.absolute
 *   improved      when −worse > allowed and |x − b| > tolerance.absolute
 *   within-noise  otherwise
 *   missing       when either value is absent. It fails the gate only when the baseline had the
 *                 figure and the new result has the cell but not the figure (e.g. the cell is now
 *                 Over capacity: one line for the cell, naming its status); a cell or row absent
 *                 from one result is reported, not gated.
 * A regressed figure always fails the gate.
 */
import { cellKey, compareCellKeys, contextLabel } from '../shapes/labels.js';
import type { CellResult, FigureSpread, PrefillRowResult, RunInfo, SpeedMatrixResult } from '../shapes/result.js';
import { cellFigureValue, prefillFigureValue } from './thresholds.js';
import { REGRESSION_CELL_FIGURES, REGRESSION_PREFILL_FIGURES, type ResolvedTolerances } from '../thresholds/tolerances.js';
import { compareCapacity, compareRateCapacity, type CapacityDelta, type RateCapacityDelta } from './compare-capacity.js';
import { compareFigure, unmeasuredNow, type FigureDelta, type RowComparison, type Verdict } from './compare-figure.js';
import { compareRateCells } from './compare-rate.js';

export { compareFigure, formatChange, relativeChange, toleranceNote } from './compare-figure.js';
export type { FigureDelta, FigureInput, RowComparison, StatusCell, Verdict } from './compare-figure.js';

export interface Comparison {
  cells: RowComparison[];
  prefill: RowComparison[];
  /** capacity at the SLO per context (runs with an SLO; src/judge/compare-capacity.ts) */
  capacity: CapacityDelta[];
  /** why capacity was not compared (the two runs' SLOs differ) */
  capacityNote?: string;
  /** the highest open-loop rate at the SLO per context (absent when neither run searched one) */
  rateCapacity?: RateCapacityDelta[];
  rateCapacityNote?: string;
  /** the open-loop rate cells, figure by figure (compare-rate.ts); empty when neither run has any, or either swept its rates */
  rates: RowComparison[];
  /** why the rate cells were not compared: a run swept its rates (compare-rate.ts) */
  rateSweepNote?: string;
  /** every failing figure's message: prefill rows, cells, rate cells, capacity last */
  failures: string[];
  counts: Record<Verdict, number>;
}

/** relative half-range of a figure over a cell's or prefill row's repeats; 0 when measured once */
export function spreadOf(measured: CellResult | PrefillRowResult | undefined, figure: string): number {
  const spread: Partial<Record<string, FigureSpread>> | undefined = measured?.repeats?.spread;
  return spread?.[figure]?.relativeHalfRange ?? 0;
}

/** Compare one cell of the new run with the baseline's same cell (undefined: not in the baseline). */
export function compareCell(
  base: CellResult | undefined,
  next: CellResult | undefined,
  tolerances: ResolvedTolerances,
): RowComparison {
  const some = (next ?? base)!;
  const key = cellKey(some.context, some.concurrency);
  const figures: FigureDelta[] = [];
  for (const figure of REGRESSION_CELL_FIGURES) {
    const b = cellFigureValue(base, figure);
    const x = cellFigureValue(next, figure);
    if (b === undefined && x === undefined) continue;
    figures.push(
      compareFigure({
        label: key,
        figure,
        base: b,
        next: x,
        tolerance: tolerances.cells[figure],
        spread: spreadOf(base, figure) + spreadOf(next, figure),
        nextPresent: next !== undefined,
      }),
    );
  }
  const row: RowComparison = { kind: 'cell', key, context: some.context, concurrency: some.concurrency, figures };
  if (base?.figures && next && !next.figures) unmeasuredNow(row, key, next.status, next.notRunReason);
  if (base) {
    row.baseStatus = base.status;
    row.baseCell = base;
  }
  if (next) {
    row.nextStatus = next.status;
    row.nextCell = next;
  }
  return row;
}

/** Compare one prefill row with the baseline's row of the same context. */
export function comparePrefill(
  base: PrefillRowResult | undefined,
  next: PrefillRowResult | undefined,
  tolerances: ResolvedTolerances,
): RowComparison {
  const some = (next ?? base)!;
  const key = contextLabel(some.context);
  const figures: FigureDelta[] = [];
  for (const figure of REGRESSION_PREFILL_FIGURES) {
    const b = prefillFigureValue(base, figure);
    const x = prefillFigureValue(next, figure);
    if (b === undefined && x === undefined) continue;
    figures.push(
      compareFigure({
        label: `prefill ${key}`,
        figure,
        base: b,
        next: x,
        tolerance: tolerances.prefill[figure],
        spread: spreadOf(base, figure) + spreadOf(next, figure),
        nextPresent: next !== undefined,
      }),
    );
  }
  const row: RowComparison = { kind: 'prefill', key, context: some.context, figures };
  if (base) row.baseStatus = base.status;
  if (next) row.nextStatus = next.status;
  return row;
}

/** Compare every cell and prefill row of two results (the union of both). */
export function compareResults(base: SpeedMatrixResult, next: SpeedMatrixResult, tolerances: ResolvedTolerances): Comparison {
  // the matrix's own cells; the capacity search's adaptive ones are compared through capacity
  const matrixCells = (r: SpeedMatrixResult) => r.cells.filter((c) => !c.adaptive);
  const baseCells = new Map(matrixCells(base).map((c) => [cellKey(c.context, c.concurrency), c]));
  const nextCells = new Map(matrixCells(next).map((c) => [cellKey(c.context, c.concurrency), c]));
  const cellKeys = [...new Set([...baseCells.keys(), ...nextCells.keys()])].sort(compareCellKeys);
  const cells = cellKeys.map((k) => compareCell(baseCells.get(k), nextCells.get(k), tolerances));

  const baseRows = new Map(base.prefill.map((p) => [p.context, p]));
  const nextRows = new Map(next.prefill.map((p) => [p.context, p]));
  const contexts = [...new Set([...baseRows.keys(), ...nextRows.keys()])].sort((a, b) => a - b);
  const prefill = contexts.map((c) => comparePrefill(baseRows.get(c), nextRows.get(c), tolerances));

  const { rows: rateCells, sweepNote } = compareRateCells(base, next, tolerances);

  const counts: Record<Verdict, number> = { improved: 0, regressed: 0, 'within-noise': 0, missing: 0 };
  const failures: string[] = [];
  for (const row of [...prefill, ...cells, ...rateCells]) {
    for (const f of row.figures) {
      counts[f.verdict]++;
      if (f.fails && f.message) failures.push(f.message);
    }
  }
  const capacity = compareCapacity(base, next, tolerances.capacity);
  for (const row of capacity.rows) if (row.fails && row.message) failures.push(row.message);
  const rates = compareRateCapacity(base, next, tolerances.capacity);
  for (const row of rates.rows) if (row.fails && row.message) failures.push(row.message);
  return {
    cells,
    prefill,
    rates: rateCells,
    ...(sweepNote ? { rateSweepNote: sweepNote } : {}),
    capacity: capacity.rows,
    ...(capacity.note ? { capacityNote: capacity.note } : {}),
    ...(rates.rows.length > 0 ? { rateCapacity: rates.rows } : {}),
    ...(rates.note ? { rateCapacityNote: rates.note } : {}),
    failures,
    counts,
  };
}

/** What makes two runs measure different things. `scope: 'cell'` checks only what changes a cell's own measurement. */
export function matrixDifferences(
  base: RunInfo,
  next: RunInfo,
  scope: 'matrix' | 'cell' = 'matrix',
  names: readonly [string, string] = ['baseline', 'new'],
): string[] {
  const a = base.run;
  const b = next.run;
  const list = (xs: readonly number[]) => (xs.length === 0 ? 'none' : [...xs].sort((x, y) => x - y).map(contextLabel).join(', '));
  const nums = (xs: readonly number[]) => [...xs].sort((x, y) => x - y).join(', ');
  const out: string[] = [];
  const check = (name: string, x: string, y: string) => {
    if (x !== y) out.push(`${name}: ${names[0]} ${x}, ${names[1]} ${y}`);
  };
  if (scope === 'matrix') {
    check('contexts', list(a.contexts), list(b.contexts));
    check('concurrency', nums(a.concurrency), nums(b.concurrency));
    check('prefill contexts', list(a.prefillContexts), list(b.prefillContexts));
  }
  check('maxOutputTokens', String(a.maxOutputTokens), String(b.maxOutputTokens));
  check('window (windowS)', `${a.windowS} s`, `${b.windowS} s`);
  check('endpoint', a.endpoint, b.endpoint);
  check('decodeTest', a.decodeTest, b.decodeTest);
  // cells of different workloads measure different traffic (issue 23); a file's content counts, not its name
  check('workload', a.workload?.text ?? 'synthetic', b.workload?.text ?? 'synthetic');
  if (a.workload?.file && b.workload?.file) check('workload file (sha256)', a.workload.file.sha256, b.workload.file.sha256);
  return out;
}

/**
 * Why the run infos of one page's results (a `--merge-reports` of shards: each shard's cells carry
 * its own) cannot share that page: what each differing part measured differently from the first,
 * as matrixDifferences names it at the cell scope (each shard plans its own rows), plus the server
 * (engine, served model, simulator profile, and the version where both found one), the open-loop
 * settings, the SLO and the repeats; [] when they can. Start times, planned keys,
 * URLs (each shard reaches its own identical server) and hardware are a shard's own and not compared.
 */
export function mergeDifferences(infos: readonly RunInfo[]): string[] {
  const first = infos[0];
  if (first === undefined) return [];
  const server = (i: RunInfo): string => [i.engine.engine, i.run.servedModel, i.simulated ? `simulated ${i.simProfile ?? ''}`.trim() : 'real'].join(' · ');
  // what else a cell's measurement depends on: the open-loop settings, the SLO it is judged on, the repeats
  const settings = (i: RunInfo): string => JSON.stringify({ rates: i.run.rates ?? null, slo: i.run.slo?.text ?? null, repeat: i.run.repeat ?? 1 });
  const seen = new Set<string>();
  const out: string[] = [];
  for (const info of infos.slice(1)) {
    const names = [`the run started ${first.startedAt}`, `the run started ${info.startedAt}`] as const;
    const diffs = matrixDifferences(first, info, 'cell', names);
    const a = server(first);
    const b = server(info);
    if (a !== b) diffs.push(`server: ${names[0]} ${a}, ${names[1]} ${b}`);
    // a version one part found and another did not is unknown there, not different
    const va = first.engine.version;
    const vb = info.engine.version;
    if (va !== undefined && vb !== undefined && va !== vb) diffs.push(`engine version: ${names[0]} ${va}, ${names[1]} ${vb}`);
    const sa = settings(first);
    const sb = settings(info);
    if (sa !== sb) diffs.push(`rates, SLO or repeats: ${names[0]} ${sa}, ${names[1]} ${sb}`);
    for (const d of diffs) {
      if (seen.has(d)) continue;
      seen.add(d);
      out.push(d);
    }
  }
  return out;
}
