/**
 * `-u`: rewrite a threshold file from a run's result, like snapshot updates.
 *
 * Managed entries (rewritten from the measurement, removed when the figure was not measured):
 *   cells:   status, min.totalTokensPerSecond, min.perRequestTokensPerSecond, max.ttftMs, max.timeBetweenTokensMs
 *   prefill: status, min.promptTokensPerSecond, max.ttftMs
 * min = measured × (1 − headroom) rounded DOWN to 3 significant digits; max = measured × (1 + headroom)
 * rounded UP, so a budget is never tighter than the headroom says.
 * Everything else the user wrote is kept: other figures' budgets, target, headroom, tolerances.
 * Entries for cells/rows the run planned but did not run (a filtered or interrupted run) are kept
 * unchanged; entries outside the current matrix are dropped (as obsolete snapshots are).
 * Output order is fixed (cells by context then concurrency, figures in schema order) so a diff shows
 * exactly what moved.
 */
import { ensureDir } from '../results/write.js';
import { dirname } from 'node:path';
import { plannedCellKeys, plannedPrefillKeys } from '../results/collect.js';
import { cellKey, compareCellKeys, parseContext } from '../results/labels.js';
import type { SpeedMatrixResult } from '../results/types.js';
import { writeFileAtomic } from '../results/write.js';
import { cellFigureValue, prefillFigureValue } from './evaluate.js';
import {
  CELL_FIGURES,
  DEFAULT_HEADROOM,
  PREFILL_FIGURES,
  type CellBudget,
  type PrefillBudget,
  type ThresholdsFile,
} from './schema.js';

export const THRESHOLDS_SCHEMA_REF = '../src/thresholds/thresholds.schema.json';

const MANAGED_CELL_MIN = ['totalTokensPerSecond', 'perRequestTokensPerSecond'] as const;
const MANAGED_CELL_MAX = ['ttftMs', 'timeBetweenTokensMs'] as const;

/** 3 significant digits, rounded in the safe direction. */
export function roundBudget(x: number, direction: 'down' | 'up'): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const step = 10 ** (Math.floor(Math.log10(Math.abs(x))) - 2);
  const scaled = x / step;
  const rounded = direction === 'down' ? Math.floor(scaled + 1e-9) : Math.ceil(scaled - 1e-9);
  return Number((rounded * step).toPrecision(3));
}

/**
 * `headroomOverride` (LLM_BENCH_HEADROOM) wins over the file's `headroom`, which wins over the
 * default; the file's own `headroom` entry is kept as the user wrote it.
 */
export function updateThresholds(result: SpeedMatrixResult, existing?: ThresholdsFile, headroomOverride?: number): ThresholdsFile {
  const headroom = headroomOverride ?? existing?.headroom ?? DEFAULT_HEADROOM;
  const cellsByKey = new Map(result.cells.map((c) => [cellKey(c.context, c.concurrency), c]));
  const rowsByKey = new Map(result.prefill.map((r) => [r.contextLabel, r]));
  const lower = (x: number) => roundBudget(x * (1 - headroom), 'down');
  const upper = (x: number) => roundBudget(x * (1 + headroom), 'up');

  const cellKeys = [...new Set([...plannedCellKeys(result.info), ...cellsByKey.keys()])].sort(compareCellKeys);
  const cells: Record<string, CellBudget> = {};
  for (const key of cellKeys) {
    const old = existing?.cells[key];
    const cell = cellsByKey.get(key);
    // a cell that did not run (or could not start) keeps the budget it had
    if (!cell || cell.status === 'not-run') {
      if (old) cells[key] = orderBudget(CELL_FIGURES, old);
      continue;
    }
    const min: Record<string, number | undefined> = { ...old?.min };
    const max: Record<string, number | undefined> = { ...old?.max };
    for (const name of MANAGED_CELL_MIN) {
      const v = cellFigureValue(cell, name);
      min[name] = v === undefined ? undefined : lower(v);
    }
    for (const name of MANAGED_CELL_MAX) {
      const v = cellFigureValue(cell, name);
      max[name] = v === undefined ? undefined : upper(v);
    }
    cells[key] = orderBudget(CELL_FIGURES, { status: cell.status, min, max });
  }

  const prefillKeys = [...new Set([...plannedPrefillKeys(result.info), ...rowsByKey.keys()])].sort(
    (a, b) => parseContext(a) - parseContext(b),
  );
  const prefill: Record<string, PrefillBudget> = {};
  for (const key of prefillKeys) {
    const old = existing?.prefill[key];
    const row = rowsByKey.get(key);
    if (!row) {
      if (old) prefill[key] = orderBudget(PREFILL_FIGURES, old);
      continue;
    }
    const tps = prefillFigureValue(row, 'promptTokensPerSecond');
    const ttft = prefillFigureValue(row, 'ttftMs');
    prefill[key] = orderBudget(PREFILL_FIGURES, {
      status: row.status,
      min: { ...old?.min, promptTokensPerSecond: tps === undefined ? undefined : lower(tps) },
      max: { ...old?.max, ttftMs: ttft === undefined ? undefined : upper(ttft) },
    });
  }

  const file: ThresholdsFile = { $schema: existing?.$schema ?? THRESHOLDS_SCHEMA_REF, cells: {}, prefill: {} };
  if (existing?.target !== undefined) file.target = existing.target;
  if (existing?.headroom !== undefined) file.headroom = existing.headroom;
  if (existing?.tolerances !== undefined) file.tolerances = existing.tolerances;
  file.cells = cells;
  file.prefill = prefill;
  return file;
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
  return `${JSON.stringify(top, null, 2)}\n`;
}

/** Write a threshold file atomically, creating its folder. */
export function writeThresholds(path: string, file: ThresholdsFile): void {
  ensureDir(dirname(path));
  writeFileAtomic(path, formatThresholds(file));
}
