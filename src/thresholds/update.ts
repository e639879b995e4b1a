/**
 * `-u`: rewrite a threshold file from a run's result, like snapshot updates.
 *
 * Managed entries (from the measurement; removed when the figure was not measured):
 *   cells:   status, min.totalTokensPerSecond, min.perRequestTokensPerSecond, max.ttftMs, max.timeBetweenTokensMs
 *   prefill: status, min.promptTokensPerSecond, max.ttftMs
 *   capacity, rateCapacity: min per context (users; requests/s), at the run's SLO
 * A new budget is min = measured × (1 − headroom) rounded DOWN to 3 significant digits, or max =
 * measured × (1 + headroom) rounded UP, so it is never tighter than the headroom says; and at least
 * the figure's absolute noise floor away from the measurement (TTFT: 5 ms, or one decode step when
 * longer; a prefill row's prompt tok/s: the rate 5 ms of TTFT jitter costs), so timer jitter and step
 * phase cannot breach a fresh budget.
 *
 * Like a careful snapshot update, an existing budget is kept when the measurement still meets it with
 * half the headroom to spare and the budget the measurement would give lies within the noise band of
 * the one written: the figure's
 * regression tolerance (relative, with its absolute floor; tolerances.regression overrides) plus the
 * spread of its repeats (total tok/s: plus the share of the window step phase can take, see
 * totalRateTolerance). Only breached budgets and budgets that clearly moved are rewritten, so two
 * `-u` runs on an unchanged server leave the file as it was and a reviewer reads only real moves.
 * `force` (LLM_BENCH_UPDATE=all) rewrites every managed budget.
 * Everything else the user wrote is kept: other figures' budgets, target, headroom, tolerances.
 * Entries for cells/rows the run planned but did not run (a filtered or interrupted run) are kept
 * unchanged, and so are those of cells that failed the run's own rules (Client-limited, failed
 * requests, a buffered stream) and of failed prefill rows: they are listed as not written. Entries
 * outside the current matrix are dropped (as obsolete snapshots are).
 * Output order is fixed (cells by context then concurrency, figures in schema order) so a diff shows
 * exactly what moved.
 */
import { ensureDir } from '../results/write.js';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { PACKAGE_NAME } from '../meta/package.js';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { plannedCellKeys, plannedPrefillKeys } from '../results/collect.js';
import { cellKey, compareCellKeys, contextLabel, parseContext } from '../shapes/labels.js';
import type { CellResult, SpeedMatrixResult } from '../shapes/result.js';
import { writeFileAtomic } from '../results/write.js';
import { DEFAULTS } from '../config/defaults.js';
import { cellFigureValue, formatValue, prefillFigureValue, statusMeets } from '../judge/thresholds.js';
import { spreadOf } from '../judge/compare.js';
import { resolveTolerances, type FigureTolerance } from './tolerances.js';
import {
  CELL_FIGURES,
  MANAGED_CELL_MAX,
  MANAGED_CELL_MIN,
  PREFILL_FIGURES,
  type CapacityBudget,
  type CellBudget,
  type PrefillBudget,
  type ThresholdsFile,
} from './schema.js';

/**
 * The `$schema` of a new threshold file (editors complete and check budgets with it), relative to
 * the file's folder: the schema exported by the installed package as the project sees it
 * (node_modules/llm-speed-matrix/dist/schemas/, found from the file's folder up, so the path stays
 * valid across upgrades and package managers that keep packages elsewhere, as pnpm does); else the
 * schema beside this module, or, when this module runs built into this repository's dist/ (which
 * is not committed), the committed one in src/thresholds/ (the thresholds README's path).
 */
export function thresholdsSchemaRef(thresholdsPath: string): string {
  const folder = dirname(resolve(thresholdsPath));
  let schema = repositorySchema(fileURLToPath(new URL('./thresholds.schema.json', import.meta.url)));
  for (let at = folder; ; at = dirname(at)) {
    const installed = join(at, 'node_modules', PACKAGE_NAME, 'dist', 'schemas', 'thresholds.schema.json');
    if (existsSync(installed)) {
      schema = installed;
      break;
    }
    if (dirname(at) === at) break;
  }
  return relative(folder, schema).split(sep).join('/');
}

/** `<root>/dist/src/thresholds/thresholds.schema.json` → `<root>/src/thresholds/thresholds.schema.json` where that exists; else as given */
export function repositorySchema(besideModule: string): string {
  const parts = besideModule.split(sep);
  const at = parts.length - 4;
  if (at < 0 || parts[at] !== 'dist' || parts[at + 1] !== 'src' || parts[at + 2] !== 'thresholds') return besideModule;
  const source = [...parts.slice(0, at), 'src', 'thresholds', parts[at + 3]!].join(sep);
  return existsSync(source) ? source : besideModule;
}

/**
 * The noise band of a cell's TTFT: its tolerance, with an absolute floor of at least one decode step
 * (the cell's median time between tokens). Where a request lands in the server's step loop is a
 * matter of phase: in a closed loop of equal-length requests the phase is set once per cell, so two
 * runs of an unchanged server differ by up to a step (seen on the tiny simulator: 12 and 19 ms at a
 * 10 ms step).
 */
function ttftTolerance(own: FigureTolerance, stepMs: number | undefined): FigureTolerance {
  return stepMs !== undefined && stepMs > own.absolute ? { relative: own.relative, absolute: stepMs } : own;
}

/**
 * The noise band of a cell's total tok/s: its tolerance, widened by the share of the window that
 * step phase can take. Each new request of a closed loop joins the server's step loop at the next
 * step, so it waits up to one decode step; with fixed-length requests that phase is set once per
 * cell, so two runs of an unchanged server can differ by up to one step per request:
 * completed requests × median TBT / (concurrency × window). Seen on the tiny simulator (16-token
 * requests, 10 ms steps): 196.7 and 187.6 tok/s at 1K/2, 4.6 % apart, with the same 99.9 tok/s per
 * request. Per-request tok/s and TBT are per token and do not move with the phase.
 */
function totalRateTolerance(own: FigureTolerance, cell: CellResult): FigureTolerance {
  const f = cell.figures;
  const tbt = f?.timeBetweenTokensMs?.median;
  if (!f || tbt === undefined || !(f.measuredForS > 0) || !(cell.concurrency > 0)) return own;
  const phase = (f.completedRequests * tbt) / (cell.concurrency * f.measuredForS * 1000);
  return { relative: own.relative + Math.min(phase, 0.5), absolute: own.absolute };
}

/**
 * The noise band of a prefill row's prompt tok/s (= prompt tokens / TTFT): its own relative
 * tolerance, with the absolute floor it inherits from TTFT's (a few ms of timer jitter on a 20 ms
 * TTFT is 25 % of the rate; on an 800 ms one, under 1 %).
 */
function promptRateTolerance(figures: { promptTokens: number; ttftMs: number } | undefined, own: FigureTolerance, ttftFloorMs: number): FigureTolerance {
  if (!figures || !(figures.ttftMs > 0)) return own;
  // the rate lost to a TTFT longer by the floor
  const jitter = figures.promptTokens * (1 / (figures.ttftMs / 1000) - 1 / ((figures.ttftMs + ttftFloorMs) / 1000));
  return { relative: own.relative, absolute: Math.max(own.absolute, jitter) };
}

/** 3 significant digits, rounded in the safe direction. */
export function roundBudget(x: number, direction: 'down' | 'up'): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const step = 10 ** (Math.floor(Math.log10(Math.abs(x))) - 2);
  const scaled = x / step;
  const rounded = direction === 'down' ? Math.floor(scaled + 1e-9) : Math.ceil(scaled - 1e-9);
  return Number((rounded * step).toPrecision(3));
}

export interface UpdateOptions {
  /** LLM_BENCH_HEADROOM: wins over the file's headroom */
  headroom?: number;
  /** LLM_BENCH_UPDATE=all: rewrite every managed budget, moved or not */
  force?: boolean;
}

/** A threshold file rewritten from a run, and what moved (one line each, for the log). */
export interface ThresholdsUpdate {
  file: ThresholdsFile;
  moves: string[];
  /** managed budgets that were kept as written */
  kept: number;
  /**
   * cells and prefill rows not written because they failed the run's own rules (Client-limited,
   * failed requests, a buffered stream, no tokens): a budget of a broken measurement would accept
   * the breakage in every later run and fail the healthy one. One line each; their entries stay as
   * they were.
   */
  notWritten: string[];
}

/**
 * `options.headroom` (LLM_BENCH_HEADROOM) wins over the file's `headroom`, which wins over the
 * default; the file's own `headroom` entry is kept as the user wrote it.
 */
export function updateThresholds(result: SpeedMatrixResult, given?: ThresholdsFile, options: UpdateOptions = {}): ThresholdsUpdate {
  const moves: string[] = [];
  const notWritten: string[] = [];
  const existing = budgetsOfThisWorkload(result, given, moves);
  const headroom = options.headroom ?? existing?.headroom ?? DEFAULTS.headroom;
  const tolerances = resolveTolerances(existing?.tolerances?.regression);
  // the matrix's own cells (the capacity search's adaptive cells have no budgets: capacity has)
  const cellsByKey = new Map(result.cells.filter((c) => !c.adaptive).map((c) => [cellKey(c.context, c.concurrency), c]));
  const rowsByKey = new Map(result.prefill.map((r) => [r.contextLabel, r]));
  let kept = 0;
  /** the budget of one figure: the one written when it still holds and has not moved beyond noise */
  const budget = (
    label: string,
    side: 'min' | 'max',
    old: number | undefined,
    measured: number | undefined,
    tolerance: FigureTolerance,
    spread: number,
    /** a count (users): whole numbers, rounded the safe way, never below 0 */
    whole = false,
  ): number | undefined => {
    if (measured === undefined) return undefined;
    // the headroom, and at least the figure's absolute noise floor (5 ms of TTFT jitter), so a fresh
    // budget is not breached by timer jitter on a millisecond latency
    const rounded =
      side === 'min'
        ? roundBudget(Math.min(measured * (1 - headroom), measured - tolerance.absolute), 'down')
        : roundBudget(Math.max(measured * (1 + headroom), measured + tolerance.absolute), 'up');
    const fresh = whole ? Math.max(0, side === 'min' ? Math.floor(rounded) : Math.ceil(rounded)) : rounded;
    if (old === undefined || options.force) {
      if (old !== fresh) moves.push(`${label} ${old === undefined ? 'new' : formatValue(old)} → ${formatValue(fresh)}${old === undefined ? '' : ' (all rewritten)'}`);
      return fresh;
    }
    // it holds with room to spare: the measurement sits at least half the headroom inside it, so a
    // kept budget never leaves the next run at the edge of noise
    const holds = side === 'min' ? measured * (1 - headroom / 2) >= old : measured * (1 + headroom / 2) <= old;
    const noise = Math.max((tolerance.relative + spread) * old, tolerance.absolute);
    if (holds && Math.abs(fresh - old) <= noise) {
      kept++;
      return old;
    }
    const met = side === 'min' ? measured >= old : measured <= old;
    const why = !met ? `breached: measured ${formatValue(measured)}` : !holds ? `too close: measured ${formatValue(measured)}` : 'moved beyond noise';
    moves.push(`${label} ${formatValue(old)} → ${formatValue(fresh)} (${why})`);
    return fresh;
  };

  const cellKeys = [...new Set([...plannedCellKeys(result.info), ...cellsByKey.keys()])].sort(compareCellKeys);
  const cells: Record<string, CellBudget> = {};
  for (const key of cellKeys) {
    const old = existing?.cells[key];
    const cell = cellsByKey.get(key);
    // a cell that did not run (or could not start) keeps the budget it had, as does one -u will not write (listed, with why)
    if (cell === undefined || cell.status === 'not-run') {
      if (old) cells[key] = orderBudget(CELL_FIGURES, old);
      continue;
    }
    const leave = cellLeftAsItWas(key, cell, existing);
    if (leave !== undefined) {
      if (old) cells[key] = orderBudget(CELL_FIGURES, old);
      notWritten.push(`${key} (${old ? 'its budget stays as it was' : 'no budget'}): ${leave}`);
      continue;
    }
    const min: Record<string, number | undefined> = { ...old?.min };
    const max: Record<string, number | undefined> = { ...old?.max };
    for (const name of MANAGED_CELL_MIN) {
      const tolerance = name === 'totalTokensPerSecond' ? totalRateTolerance(tolerances.cells.totalTokensPerSecond, cell) : tolerances.cells[name];
      min[name] = budget(`${key} min.${name}`, 'min', old?.min?.[name], cellFigureValue(cell, name), tolerance, spreadOf(cell, name));
    }
    for (const name of MANAGED_CELL_MAX) {
      const tolerance = name === 'ttftMs' ? ttftTolerance(tolerances.cells.ttftMs, cell.figures?.timeBetweenTokensMs?.median) : tolerances.cells[name];
      max[name] = budget(`${key} max.${name}`, 'max', old?.max?.[name], cellFigureValue(cell, name), tolerance, spreadOf(cell, name));
    }
    // Valid where Requests queued was written meets it (judge/thresholds.ts statusMeets; not acceptStatuses): kept, as a met budget is
    const status = old?.status !== undefined && !options.force && statusMeets(old.status, cell.status) ? old.status : cell.status;
    if (old?.status !== undefined && old.status !== status) moves.push(`${key} status ${old.status} → ${status}`);
    cells[key] = orderBudget(CELL_FIGURES, { status, min, max });
  }

  const prefillKeys = [...new Set([...plannedPrefillKeys(result.info), ...rowsByKey.keys()])].sort((a, b) => parseContext(a) - parseContext(b));
  const prefill: Record<string, PrefillBudget> = {};
  for (const key of prefillKeys) {
    const old = existing?.prefill[key];
    const row = rowsByKey.get(key);
    if (!row || row.status === 'errors') {
      if (old) prefill[key] = orderBudget(PREFILL_FIGURES, old);
      if (row) notWritten.push(`prefill ${key} (${old ? 'its budget stays as it was' : 'no budget'}): its request failed${row.error !== undefined ? ` (${row.error})` : ''}`);
      continue;
    }
    const label = `prefill ${key}`;
    if (old?.status !== undefined && old.status !== row.status) moves.push(`${label} status ${old.status} → ${row.status}`);
    const rateTolerance = promptRateTolerance(row.figures, tolerances.prefill.promptTokensPerSecond, tolerances.prefill.ttftMs.absolute);
    const rate = prefillFigureValue(row, 'promptTokensPerSecond');
    prefill[key] = orderBudget(PREFILL_FIGURES, {
      status: row.status,
      min: { ...old?.min, promptTokensPerSecond: budget(`${label} min.promptTokensPerSecond`, 'min', old?.min?.promptTokensPerSecond, rate, rateTolerance, spreadOf(row, 'promptTokensPerSecond')) },
      max: { ...old?.max, ttftMs: budget(`${label} max.ttftMs`, 'max', old?.max?.ttftMs, prefillFigureValue(row, 'ttftMs'), tolerances.prefill.ttftMs, spreadOf(row, 'ttftMs')) },
    });
  }

  const runSlo = result.info.run.slo?.text;
  const capacity = capacityBudgets('capacity', result.capacity?.rows ?? [], result, existing, moves, (key, old, users) => budget(`capacity ${key} min`, 'min', old, users, tolerances.capacity, 0, true)!);
  // the highest open-loop rate at the SLO, requests/s (3 digits, rounded down): the capacity band, its floor the search's resolution
  const rateBand = (row: { resolution: number }) => ({ relative: tolerances.capacity.relative, absolute: row.resolution });
  const rateCapacity = capacityBudgets('rateCapacity', result.rateCapacity?.rows ?? [], result, existing, moves, (key, old, rate, row) => budget(`rateCapacity ${key} min`, 'min', old, rate, rateBand(row), 0)!);

  // a new file's $schema is set where it is written (it is relative to the file's folder)
  const file: ThresholdsFile = { ...(existing?.$schema !== undefined ? { $schema: existing.$schema } : {}), cells: {}, prefill: {} };
  if (existing?.target !== undefined) file.target = existing.target;
  if (existing?.headroom !== undefined) file.headroom = existing.headroom;
  if (existing?.tolerances !== undefined) file.tolerances = existing.tolerances;
  file.cells = cells;
  file.prefill = prefill;
  const slo = capacity || rateCapacity ? (runSlo ?? existing?.slo) : undefined;
  if (slo !== undefined) file.slo = slo;
  if (result.info.run.workload && result.info.run.workload.kind !== 'synthetic') file.workload = result.info.run.workload.text;
  if (capacity) file.capacity = capacity;
  if (rateCapacity) file.rateCapacity = rateCapacity;
  return { file, moves, kept, notWritten };
}

/**
 * Why -u leaves a measured cell's entry as it was: a line for one that failed the run's own rules (its -u judgement, src/matrix/cell-test.ts: only the
 * user's budgets), or that is Client-limited where the run lets that pass (the embedded simulator on
 * a small machine) and the file does not accept the status (its figures are partly the client's);
 * undefined: write it.
 */
function cellLeftAsItWas(key: string, cell: CellResult, existing: ThresholdsFile | undefined): string | undefined {
  const failed = cell.thresholdFailures?.[0];
  if (failed !== undefined) return failed;
  if (cell.status === 'client-limited' && !(existing?.tolerances?.acceptStatuses ?? []).includes('client-limited')) {
    return `${key} is Client-limited (the client could not time its tokens within its bound), so its figures are partly the client's`;
  }
  return undefined;
}

/**
 * The file as -u starts from: as given, or, when its budgets (issue 23) were measured with another workload
 * (its `workload`, absent = synthetic), without its cell, capacity and rate budgets (the prefill
 * rows are synthetic in every run and are kept), with a line saying so.
 */
function budgetsOfThisWorkload(result: SpeedMatrixResult, file: ThresholdsFile | undefined, moves: string[]): ThresholdsFile | undefined {
  const was = file?.workload ?? 'synthetic';
  const now = result.info.run.workload?.text ?? 'synthetic';
  if (!file || was === now) return file;
  const { capacity: _c, rateCapacity: _r, workload: _w, ...rest } = file;
  const dropped = [
    ...(Object.keys(file.cells).length > 0 ? ['cell'] : []),
    ...(Object.keys(file.capacity ?? {}).length > 0 ? ['capacity'] : []),
    ...(Object.keys(file.rateCapacity ?? {}).length > 0 ? ['rateCapacity'] : []),
  ];
  if (dropped.length > 0) moves.push(`${dropped.join(', ')} budgets were for the workload ${was}; rewritten for ${now} (a budget this run does not measure is not written again)`);
  return { ...rest, cells: {} };
}

/**
 * The capacity budgets of the rewritten file (see the comments inside), for the concurrency
 * capacity (`capacity`, in users) or the highest open-loop rate (`rateCapacity`, requests/s), by
 * one rule; `minOf` is the budget rule of updateThresholds for one row's capacity.
 */
function capacityBudgets<R extends { contextLabel: string; capacity: number; binding?: { constraint: string } }>(
  section: 'capacity' | 'rateCapacity',
  rowList: readonly R[],
  result: SpeedMatrixResult,
  existing: ThresholdsFile | undefined,
  moves: string[],
  minOf: (key: string, old: number | undefined, capacity: number, row: R) => number,
): Record<string, CapacityBudget> | undefined {
  // capacity at the SLO: min = capacity × (1 − headroom), and at least the capacity tolerance's
  // floor below it (1 user), in whole users; rows not searched in this run (or bounded by a cell
  // that was not measured) keep their budget; rows outside the matrix are dropped
  const rows = new Map(rowList.map((r) => [r.contextLabel, r]));
  const contexts = new Set(result.info.run.contexts.map((c) => contextLabel(c)));
  // budgets measured at another SLO mean something else: this run's SLO replaces them all
  const runSlo = result.info.run.slo?.text;
  const before = existing?.[section];
  const sloChanged = runSlo !== undefined && existing?.slo !== undefined && existing.slo !== runSlo && Object.keys(before ?? {}).length > 0;
  if (sloChanged) moves.push(`${section} budgets were for the SLO ${existing!.slo}; rewritten for ${runSlo}`);
  let capacity: Record<string, CapacityBudget> | undefined;
  for (const key of [...new Set([...Object.keys(before ?? {}), ...rows.keys()])].sort((a, b) => parseContext(a) - parseContext(b))) {
    const old = sloChanged ? undefined : before?.[key];
    const found = rows.get(key);
    // a capacity bounded by a cell that was not measured (not run, Client-limited, no result) is
    // no measurement of the server: the budget it had stays
    const row = found?.binding?.constraint === 'unmeasured' ? undefined : found;
    let entry: CapacityBudget | undefined;
    if (!row) {
      if (old && contexts.has(key)) entry = old;
    } else {
      entry = { min: minOf(key, old?.min, row.capacity, row) };
    }
    if (entry) (capacity ??= {})[key] = entry;
  }
  return capacity;
}

function ordered<T extends string>(names: readonly T[], values: Partial<Record<string, number | undefined>> | undefined) {
  const out: Partial<Record<T, number>> = {};
  for (const name of names) {
    const v = values?.[name];
    if (v !== undefined) out[name] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A budget in the file's stable order: status, then min and max in the order of `figures`; undefined values dropped. */
function orderBudget<S extends string, F extends string>(
  figures: readonly F[],
  b: { status?: S; min?: Record<string, number | undefined>; max?: Record<string, number | undefined> },
): { status?: S; min?: Partial<Record<F, number>>; max?: Partial<Record<F, number>> } {
  const out: { status?: S; min?: Partial<Record<F, number>>; max?: Partial<Record<F, number>> } = {};
  if (b.status !== undefined) out.status = b.status;
  const min = ordered(figures, b.min);
  const max = ordered(figures, b.max);
  if (min) out.min = min;
  if (max) out.max = max;
  return out;
}

/** The file's text: fixed key order, 2-space JSON, trailing newline. */
export function formatThresholds(file: ThresholdsFile): string {
  const top: Record<string, unknown> = {};
  for (const key of ['$schema', 'target', 'headroom', 'tolerances'] as const) {
    if (file[key] !== undefined) top[key] = file[key];
  }
  top.cells = file.cells;
  top.prefill = file.prefill;
  if (file.workload !== undefined) top.workload = file.workload;
  if (file.slo !== undefined) top.slo = file.slo;
  if (file.capacity !== undefined) top.capacity = file.capacity;
  if (file.rateCapacity !== undefined) top.rateCapacity = file.rateCapacity;
  return `${JSON.stringify(top, null, 2)}\n`;
}

/** Write a threshold file atomically, creating its folder. */
export function writeThresholds(path: string, file: ThresholdsFile): void {
  ensureDir(dirname(path));
  writeFileAtomic(path, formatThresholds(file.$schema === undefined ? { $schema: thresholdsSchemaRef(path), ...file } : file));
}
