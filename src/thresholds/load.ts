/**
 * Reading threshold files. Every error names the file, the key, the rule and the fix.
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { SpeedMatrixError } from '../errors.js';
import { cellKey, parseCellKey, contextLabel, parseContext } from '../shapes/labels.js';
import {
  CELL_FIGURES,
  PREFILL_FIGURES,
  REGRESSION_CELL_FIGURES,
  REGRESSION_PREFILL_FIGURES,
  REGRESSION_RATE_FIGURES,
  ThresholdsFileSchema,
  type ThresholdsFile,
} from './schema.js';

export class ThresholdsError extends SpeedMatrixError<'thresholds'> {
  override name = 'ThresholdsError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('thresholds', message, options);
  }
}

/** Keys of the current matrix; entries outside them are errors. */
export interface MatrixKeys {
  cellKeys: readonly string[];
  prefillKeys: readonly string[];
  /** context labels of the matrix's decode rows (capacity budgets); unchecked when absent */
  contextKeys?: readonly string[];
  /** ignore (do not reject) entries outside the matrix — for -u, which drops them when it rewrites the file */
  allowUnknown?: boolean;
  /** this run's workload (its text; synthetic by default): budgets of another are refused first (checkThresholdsWorkload), before their keys are weighed */
  workload?: string;
}

/** A parsed threshold file (cells and prefill always present). */
export type LoadedThresholds = ThresholdsFile;

const TOP_LEVEL_KEYS = ['$schema', 'target', 'headroom', 'tolerances', 'cells', 'prefill', 'slo', 'capacity', 'rateCapacity'];

/**
 * Read and check a threshold file against the current matrix. A file that does not exist means
 * "no budgets yet" (empty cells and prefill): a first run passes, and `-u` creates the file.
 */
export function loadThresholds(path: string, keys: MatrixKeys): ThresholdsFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { cells: {}, prefill: {} };
    throw new ThresholdsError(`${path}: cannot read the threshold file (${(error as Error).message}); check the path or run with -u to create it`);
  }
  return parseThresholds(text, path, keys);
}

/**
 * Parse threshold-file text. `source` names the file in messages. With `keys`, cells and prefill
 * rows that are not in the current matrix are errors; without, only the shape is checked (-u).
 */
export function parseThresholds(text: string, source: string, keys?: MatrixKeys): ThresholdsFile {
  let json: unknown;
  try {
    // a byte-order mark (an editor on Windows writes one) is no JSON, and shows as nothing in a message
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ThresholdsError(`${source}: not valid JSON (${(error as Error).message}); fix the syntax or delete the file and run with -u`);
  }
  const parsed = ThresholdsFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ThresholdsError(`${source}: invalid threshold file:\n  ${parsed.error.issues.map(describeIssue).join('\n  ')}`);
  }
  // the budgets gate this run: the file is checked against its matrix, and for budgets none can meet
  // (-u, which rewrites them, and compare, which reads only the tolerances, take the file as it is)
  if (keys && !keys.allowUnknown) {
    const impossible = impossibleBudgets(parsed.data);
    if (impossible.length > 0) throw new ThresholdsError(`${source}: ${impossible.join('\n  ')}`);
    // another workload's file has other rows: that is the reason to give, not its keys
    if (keys.workload !== undefined) checkThresholdsWorkload(parsed.data, source, keys.workload);
    checkKeys(parsed.data, source, keys);
  }
  return parsed.data;
}

/** Budgets no measurement can meet: a figure whose min is above its max, with the file's slack applied to both (min × (1 − slack), max × (1 + slack)). */
function impossibleBudgets(file: ThresholdsFile): string[] {
  const slack = file.tolerances?.slack ?? 0;
  const out: string[] = [];
  for (const [section, entries] of [['cells', file.cells], ['prefill', file.prefill]] as const) {
    for (const [key, budget] of Object.entries(entries as Record<string, { min?: Record<string, number | undefined>; max?: Record<string, number | undefined> }>)) {
      for (const [figure, min] of Object.entries(budget.min ?? {})) {
        const max = budget.max?.[figure];
        if (min !== undefined && max !== undefined && min * (1 - slack) > max * (1 + slack)) {
          out.push(`${section}["${key}"]: min.${figure} ${min} is above max.${figure} ${max}${slack > 0 ? ` (with the slack ${slack})` : ''}, so no measurement can pass; lower the min or raise the max (or run with -u to rewrite the budgets)`);
        }
      }
    }
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const allowed = allowedKeysAt(issue.path);
    const names = issue.keys.map((k) => `"${k}"`).join(', ');
    const what = isFigurePath(issue.path) ? (issue.keys.length > 1 ? 'unknown figures' : 'unknown figure') : 'unknown key';
    return `${where}: ${what} ${names}; allowed: ${allowed.join(', ')}`;
  }
  if (issue.code === 'invalid_key') {
    return `${where}: ${issue.issues.map((i) => i.message).join('; ')}`;
  }
  return `${where}: ${issue.message}`;
}

function isFigurePath(path: readonly PropertyKey[]): boolean {
  const last = path[path.length - 1];
  return path.length === 3 && (last === 'min' || last === 'max');
}

function allowedKeysAt(path: readonly PropertyKey[]): readonly string[] {
  if (path.length === 0) return TOP_LEVEL_KEYS;
  if (isFigurePath(path)) return path[0] === 'prefill' ? PREFILL_FIGURES : CELL_FIGURES;
  if (path.length === 2 && (path[0] === 'cells' || path[0] === 'prefill')) return ['status', 'min', 'max'];
  if (path.length === 2 && (path[0] === 'capacity' || path[0] === 'rateCapacity')) return ['min'];
  if (path.length === 1 && path[0] === 'tolerances') return ['acceptStatuses', 'slack', 'regression'];
  if (path.length === 2 && path[0] === 'tolerances' && path[1] === 'regression') return ['cells', 'prefill', 'rates', 'capacity'];
  if (path.length === 3 && path[0] === 'tolerances' && path[1] === 'regression') {
    if (path[2] === 'capacity') return ['relative', 'absolute'];
    return path[2] === 'prefill' ? REGRESSION_PREFILL_FIGURES : path[2] === 'rates' ? REGRESSION_RATE_FIGURES : REGRESSION_CELL_FIGURES;
  }
  // one figure's tolerance object, e.g. tolerances.regression.cells.ttftMs
  if (path.length === 4 && path[0] === 'tolerances' && path[1] === 'regression') return ['relative', 'absolute'];
  return [];
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 1 && (path[0] === 'cells' || path[0] === 'prefill' || path[0] === 'capacity' || path[0] === 'rateCapacity') ? `["${String(p)}"]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
}

function checkKeys(file: ThresholdsFile, source: string, keys: MatrixKeys): void {
  const problems = [
    ...sectionProblems('cells', 'cell', 'cell', file.cells, keys.cellKeys, canonicalCellKey),
    ...sectionProblems('prefill', 'row', 'prefill row', file.prefill, keys.prefillKeys, canonicalContext),
    ...(keys.contextKeys ? sectionProblems('capacity', 'row', 'context row', file.capacity ?? {}, keys.contextKeys, canonicalContext) : []),
    ...(keys.contextKeys ? sectionProblems('rateCapacity', 'row', 'context', file.rateCapacity ?? {}, keys.contextKeys, canonicalContext) : []),
  ];
  if (problems.length === 0) return;
  // an entry outside the matrix most often means this run's matrix is smaller than the file's
  // (LLM_BENCH_CONTEXTS=…): -u here would drop those entries' budgets, so it is not the first advice
  const outside = problems.some((p) => p.outside);
  throw new ThresholdsError(
    `${source}: ${problems.map((p) => p.line).join('\n  ')}` +
      (outside
        ? `\nThis run's matrix is not the one the file was written for. To run another matrix without changing it, give the run its own ` +
          `threshold file: LLM_BENCH_NAME=<name> (thresholds/<name>.json) or LLM_BENCH_THRESHOLDS=<path>, written by a run with -u. ` +
          `To retire the entries, remove them, or run -u with the file's whole matrix (-u on this run would drop them and their budgets).`
        : ''),
  );
}

/** One section's keys that are not in the matrix: written another way (K = 1024), or not there at all. */
function sectionProblems(
  section: string,
  item: 'cell' | 'row',
  described: string,
  entries: Record<string, unknown>,
  allowed: readonly string[],
  canonicalOf: (key: string) => string | undefined,
): Array<{ line: string; outside: boolean }> {
  const known = new Set(allowed);
  return Object.keys(entries)
    .filter((key) => !known.has(key))
    .map((key) => {
      const canonical = canonicalOf(key);
      return canonical && known.has(canonical)
        ? { line: `${section}["${key}"]: write this ${item} as "${canonical}" (K = 1024)`, outside: false }
        : { line: `${section}["${key}"]: not a ${described} of the current matrix (${list(allowed)})`, outside: true };
    });
}

function list(keys: readonly string[]): string {
  if (keys.length === 0) return 'it has none';
  return keys.length <= 12 ? `it has ${keys.join(', ')}` : `it has ${keys.slice(0, 12).join(', ')}, … (${keys.length} in all)`;
}

function canonicalCellKey(key: string): string | undefined {
  try {
    const { context, concurrency } = parseCellKey(key);
    return cellKey(context, concurrency);
  } catch {
    return undefined;
  }
}

function canonicalContext(key: string): string | undefined {
  try {
    return contextLabel(parseContext(key));
  } catch {
    return undefined;
  }
}

/**
 * A threshold file's cell budgets hold for the workload they were measured with (its `workload`,
 * absent = synthetic): a run of another workload would be gated by another traffic's numbers, so
 * it is refused (issue 23). A file with no cell, capacity or rate budgets fits any run; -u rewrites.
 */
export function checkThresholdsWorkload(file: ThresholdsFile, path: string, runWorkload: string): void {
  const was = file.workload ?? 'synthetic';
  if (was === runWorkload) return;
  const budgets = Object.keys(file.cells).length + Object.keys(file.capacity ?? {}).length + Object.keys(file.rateCapacity ?? {}).length;
  if (budgets === 0) return;
  throw new ThresholdsError(
    `${path}: its budgets were measured with the workload ${was}, this run's is ${runWorkload}; ` +
      `run with that workload (LLM_BENCH_WORKLOAD or the suite's workload), point LLM_BENCH_THRESHOLDS at this workload's own file, or rewrite the budgets for it with -u`,
  );
}
