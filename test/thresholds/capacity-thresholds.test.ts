/**
 * Capacity budgets in the threshold file: the schema (`capacity: { "32K": { "min": 20 } }` and
 * `tolerances.regression.capacity`), the matrix check of their keys, `-u` writing them in whole
 * users, and the capacity test's budget check (capacityBudgetFailures).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { capacityBudgetFailures } from '../../src/judge/thresholds.js';
import { contextLabel } from '../../src/shapes/labels.js';
import type { CapacityRow, CellResult, SloMiss, SpeedMatrixResult } from '../../src/shapes/result.js';
import { resolutionAt } from '../../src/slo/capacity.js';
import { parseSloText } from '../../src/slo/slo.js';
import { loadThresholds, parseThresholds, ThresholdsError } from '../../src/thresholds/load.js';
import { ThresholdsFileSchema, type ThresholdsFile } from '../../src/thresholds/schema.js';
import { formatThresholds, updateThresholds, writeThresholds } from '../../src/thresholds/update.js';
import { CONTEXTS, K, sglangResult } from '../results/fixtures/sglang-h200.js';

const dir = mkdtempSync(join(tmpdir(), 'sm-cap-thr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const keys = { cellKeys: ['8K/1', '8K/16', '32K/16'], prefillKeys: ['8K'], contextKeys: ['8K', '32K'] };

function parseError(json: unknown, matrix: Parameters<typeof parseThresholds>[2] = keys): string {
  try {
    parseThresholds(JSON.stringify(json), 'thresholds/t.json', matrix);
  } catch (error) {
    expect(error).toBeInstanceOf(ThresholdsError);
    return (error as Error).message;
  }
  throw new Error('expected a parse error');
}

function ttftMiss(at: number): SloMiss {
  const value = 1000 + at * 50;
  return { constraint: 'ttftMs', label: 'TTFT p90', value, bound: 1000, detail: `TTFT p90 ${value.toLocaleString('en-US')} ms > 1,000 ms` };
}

function capRow(context: number, capacity: number, atLeast = false): CapacityRow {
  const row: CapacityRow = {
    context,
    contextLabel: contextLabel(context),
    capacity,
    atLeast,
    searched: [{ concurrency: Math.max(1, capacity), meets: true, adaptive: false }],
    adaptiveCells: 0,
    resolution: resolutionAt(capacity),
  };
  if (!atLeast) {
    row.binding = ttftMiss(capacity + 1);
    row.bindingConcurrency = capacity + 1;
  }
  return row;
}

/** the reference result judged at an SLO, with these capacity rows and one adaptive cell (8K/42) */
function withCapacity(rows: CapacityRow[]): SpeedMatrixResult {
  const result = sglangResult();
  result.info.run.slo = parseSloText('ttftP90<=1000');
  result.capacity = { rows };
  const adaptive: CellResult = structuredClone(result.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 32)!);
  adaptive.concurrency = 42;
  adaptive.adaptive = true;
  result.cells.splice(result.cells.indexOf(result.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 64)!), 0, adaptive);
  return result;
}

const file = (capacity: ThresholdsFile['capacity'], extra: Partial<ThresholdsFile> = {}): ThresholdsFile => ({ cells: {}, prefill: {}, ...extra, ...(capacity ? { capacity } : {}) });

describe('threshold file schema: capacity', () => {
  test('a capacity budget per context label parses; the block is optional', () => {
    const parsed = parseThresholds(JSON.stringify({ capacity: { '32K': { min: 20 }, '8K': { min: 0 } } }), 't.json', keys);
    expect(parsed.capacity).toEqual({ '32K': { min: 20 }, '8K': { min: 0 } });
    expect(parseThresholds('{}', 't.json', keys).capacity).toBeUndefined();
  });

  test('min is a whole, non-negative number of users', () => {
    expect(parseError({ capacity: { '32K': { min: 20.5 } } })).toContain('capacity["32K"].min');
    expect(parseError({ capacity: { '32K': { min: -1 } } })).toContain('capacity["32K"].min');
    expect(parseError({ capacity: { '32K': { min: '20' } } })).toContain('capacity["32K"].min');
    expect(parseError({ capacity: { '32K': {} } })).toContain('capacity["32K"].min');
  });

  test('keys are context labels with K = 1024', () => {
    for (const bad of ['32k', 'abc', '32K/16', '-1', '032K']) {
      expect(parseError({ capacity: { [bad]: { min: 1 } } })).toContain('capacity keys are context labels with K = 1024, e.g. "32K" or "0"');
    }
  });

  test('an unknown property in an entry names its path and the allowed key', () => {
    const msg = parseError({ capacity: { '32K': { min: 20, max: 40 } } });
    expect(msg).toContain('thresholds/t.json: invalid threshold file');
    expect(msg).toContain('capacity["32K"]: unknown key "max"; allowed: min');
  });

  test('capacity is an allowed top-level key', () => {
    expect(parseError({ capacities: {} })).toContain('(top level): unknown key "capacities"; allowed: $schema, target, headroom, tolerances, cells, prefill, slo, capacity');
  });

  test('tolerances.regression.capacity: a fraction, or a fraction with a floor in users', () => {
    expect(parseThresholds(JSON.stringify({ tolerances: { regression: { capacity: 0.1 } } }), 't.json').tolerances?.regression?.capacity).toBe(0.1);
    expect(parseThresholds(JSON.stringify({ tolerances: { regression: { capacity: { relative: 0.1, absolute: 2 } } } }), 't.json').tolerances?.regression?.capacity).toEqual({ relative: 0.1, absolute: 2 });
    expect(parseError({ tolerances: { regression: { capacity: -0.1 } } })).toContain('tolerances.regression.capacity');
    expect(parseError({ tolerances: { regression: { capacity: { relative: 0.1, abs: 1 } } } })).toContain(
      'tolerances.regression.capacity: unknown key "abs"; allowed: relative, absolute',
    );
  });

  test("an unknown key in one figure's tolerance object lists relative and absolute", () => {
    expect(parseError({ tolerances: { regression: { cells: { ttftMs: { relative: 0.1, abs: 5 } } } } })).toContain(
      'tolerances.regression.cells.ttftMs: unknown key "abs"; allowed: relative, absolute',
    );
  });

  test('an unknown key in tolerances.regression lists capacity among the allowed ones', () => {
    expect(parseError({ tolerances: { regression: { capcity: 0.1 } } })).toContain('tolerances.regression: unknown key "capcity"; allowed: cells, prefill, rates, capacity');
  });

  test('tolerances.regression.rates: per open-loop rate cell figure; the achieved rate falls by at most all of itself', () => {
    const parsed = parseThresholds(JSON.stringify({ tolerances: { regression: { rates: { ttftFromScheduleP99Ms: { relative: 0.5, absolute: 20 }, completedRate: 0.1 } } } }), 't.json');
    expect(parsed.tolerances?.regression?.rates).toEqual({ ttftFromScheduleP99Ms: { relative: 0.5, absolute: 20 }, completedRate: 0.1 });
    expect(parseError({ tolerances: { regression: { rates: { completedRate: 5 } } } })).toContain('tolerances.regression.rates.completedRate');
    expect(parseError({ tolerances: { regression: { rates: { ttftMs: 0.1 } } } })).toContain(
      'tolerances.regression.rates: unknown key "ttftMs"; allowed: completedRate, totalTokensPerSecond, ttftFromScheduleMs, ttftFromScheduleP99Ms, tbtMs',
    );
  });

  test('the generated JSON Schema (for editors) agrees', () => {
    const schema = z.fromJSONSchema(JSON.parse(readFileSync(new URL('../../src/thresholds/thresholds.schema.json', import.meta.url), 'utf8')));
    expect(schema.safeParse({ cells: {}, prefill: {}, capacity: { '32K': { min: 20 } } }).success).toBe(true);
    expect(schema.safeParse({ capacity: { '32K': { min: 2.5 } } }).success).toBe(false);
    expect(schema.safeParse({ capacity: { '32K': { min: -1 } } }).success).toBe(false);
    expect(schema.safeParse({ capacity: { '32k': { min: 1 } } }).success).toBe(false);
    expect(schema.safeParse({ capacity: { '32K': { min: 1, max: 2 } } }).success).toBe(false);
    expect(ThresholdsFileSchema.safeParse({ capacity: { '32K': { min: 1 } } }).success).toBe(true);
  });
});

describe('capacity keys against the matrix (contextKeys)', () => {
  test('a row outside the matrix is an error listing its rows, and says how to run a smaller matrix without losing the file\'s budgets', () => {
    const msg = parseError({ capacity: { '64K': { min: 1 } } });
    expect(msg).toContain('capacity["64K"]: not a context row of the current matrix (it has 8K, 32K)');
    expect(msg).toContain("give the run its own threshold file: LLM_BENCH_NAME=<name> (thresholds/<name>.json) or LLM_BENCH_THRESHOLDS=<path>");
    expect(msg).toContain('-u on this run would drop them and their budgets');
  });

  test('a row written in tokens is pointed to its label', () => {
    const msg = parseError({ capacity: { '32768': { min: 1 } } });
    expect(msg).toContain('capacity["32768"]: write this row as "32K" (K = 1024)');
    // the matrix is the file's: no advice about another matrix
    expect(msg).not.toContain('LLM_BENCH_NAME');
  });

  test('the problems are listed together with those of cells', () => {
    const msg = parseError({ cells: { '8192/16': {} }, capacity: { '32768': { min: 1 }, '1K': { min: 1 } } });
    expect(msg).toContain('cells["8192/16"]: write this cell as "8K/16"');
    expect(msg).toContain('capacity["32768"]: write this row as "32K"');
    expect(msg).toContain('capacity["1K"]: not a context row');
  });

  test('without contextKeys, or with allowUnknown, capacity keys are not checked', () => {
    const text = JSON.stringify({ capacity: { '64K': { min: 1 } } });
    expect(parseThresholds(text, 't.json', { cellKeys: [], prefillKeys: [] }).capacity).toEqual({ '64K': { min: 1 } });
    expect(parseThresholds(text, 't.json', { ...keys, allowUnknown: true }).capacity).toEqual({ '64K': { min: 1 } });
  });

  test('loadThresholds checks them too', () => {
    const path = join(dir, 'cap.json');
    writeFileSync(path, JSON.stringify({ capacity: { '32768': { min: 3 } } }));
    expect(() => loadThresholds(path, keys)).toThrow(/capacity\["32768"\]: write this row as "32K"/);
    writeFileSync(path, JSON.stringify({ capacity: { '32K': { min: 3 } } }));
    expect(loadThresholds(path, keys).capacity).toEqual({ '32K': { min: 3 } });
  });
});

describe('-u writes capacity budgets', () => {
  test('min = ⌊min(capacity × (1 − headroom), capacity − 1)⌋ users, never below 0', () => {
    for (const headroom of [0.1, 0.2, 0.5]) {
      for (const capacity of [0, 1, 2, 3, 5, 6, 10, 12, 16, 20, 42, 64, 100, 128, 500, 999]) {
        const { file: out } = updateThresholds(withCapacity([capRow(8 * K, capacity)]), undefined, { headroom });
        const expected = Math.max(0, Math.floor(Math.min(capacity * (1 - headroom), capacity - 1)));
        expect({ headroom, capacity, min: out.capacity?.['8K']?.min }).toEqual({ headroom, capacity, min: expected });
      }
    }
  });

  test('new budgets, one move line each, in context order', () => {
    const { file: out, moves } = updateThresholds(withCapacity([capRow(32 * K, 6), capRow(8 * K, 42), capRow(16 * K, 16, true)]));
    expect(out.capacity).toEqual({ '8K': { min: 37 }, '16K': { min: 14 }, '32K': { min: 5 } });
    expect(Object.keys(out.capacity!)).toEqual(['8K', '16K', '32K']);
    expect(moves.filter((m) => m.startsWith('capacity'))).toEqual(['capacity 8K min new → 37.0', 'capacity 16K min new → 14.0', 'capacity 32K min new → 5.0']);
  });

  test("the file's headroom and capacity tolerance floor apply", () => {
    expect(updateThresholds(withCapacity([capRow(8 * K, 42)]), file(undefined, { headroom: 0.5 })).file.capacity).toEqual({ '8K': { min: 21 } });
    // an absolute floor of 5 users: 12 − 5 = 7 (the headroom alone gives 10)
    const floor = file(undefined, { tolerances: { regression: { capacity: { relative: 0.05, absolute: 5 } } } });
    expect(updateThresholds(withCapacity([capRow(8 * K, 12)]), floor).file.capacity).toEqual({ '8K': { min: 7 } });
  });

  test('an existing budget that still holds within noise is kept', () => {
    const existing = file({ '8K': { min: 37 } });
    for (const measured of [42, 43]) {
      const { file: out, moves } = updateThresholds(withCapacity([capRow(8 * K, measured)]), existing);
      expect(out.capacity).toEqual({ '8K': { min: 37 } });
      expect(moves.filter((m) => m.startsWith('capacity'))).toEqual([]);
    }
    const counted = updateThresholds(withCapacity([capRow(8 * K, 43)]), existing).kept;
    const without = updateThresholds(withCapacity([]), existing).kept;
    expect(counted - without).toBe(1);
  });

  test('a breached budget is rewritten with a move line', () => {
    const { file: out, moves } = updateThresholds(withCapacity([capRow(8 * K, 30)]), file({ '8K': { min: 37 } }));
    expect(out.capacity).toEqual({ '8K': { min: 27 } });
    expect(moves).toContain('capacity 8K min 37.0 → 27.0 (breached: measured 30.0)');
  });

  test('a budget only just met, or left far behind, is rewritten too; force rewrites all', () => {
    expect(updateThresholds(withCapacity([capRow(8 * K, 38)]), file({ '8K': { min: 37 } })).moves).toContain('capacity 8K min 37.0 → 34.0 (too close: measured 38.0)');
    expect(updateThresholds(withCapacity([capRow(8 * K, 60)]), file({ '8K': { min: 37 } })).moves).toContain('capacity 8K min 37.0 → 54.0 (moved beyond noise)');
    const forced = updateThresholds(withCapacity([capRow(8 * K, 43)]), file({ '8K': { min: 37 } }), { force: true });
    expect(forced.file.capacity).toEqual({ '8K': { min: 38 } });
    expect(forced.moves).toContain('capacity 8K min 37.0 → 38.0 (all rewritten)');
  });

  test('entries of matrix rows not searched in this run are kept; rows outside the matrix are dropped', () => {
    const existing = file({ '8K': { min: 37 }, '32K': { min: 5 }, '123K': { min: 1 }, '999K': { min: 3 }, '0': { min: 2 } });
    const { file: out } = updateThresholds(withCapacity([capRow(8 * K, 42)]), existing);
    expect(out.capacity).toEqual({ '8K': { min: 37 }, '32K': { min: 5 }, '123K': { min: 1 } });
    expect(Object.keys(out.capacity!)).toEqual(['8K', '32K', '123K']);
    // a run without an SLO keeps the budgets of the matrix's rows as they are
    const plain = updateThresholds(sglangResult(), existing).file;
    expect(plain.capacity).toEqual({ '8K': { min: 37 }, '32K': { min: 5 }, '123K': { min: 1 } });
    // and writes no capacity block when there is none
    expect(updateThresholds(sglangResult()).file.capacity).toBeUndefined();
    expect(updateThresholds(sglangResult(), file({ '999K': { min: 3 } })).file.capacity).toBeUndefined();
  });

  test('adaptive cells get no cell budgets', () => {
    const result = withCapacity([capRow(8 * K, 42)]);
    expect(result.cells.some((c) => c.adaptive && c.contextLabel === '8K' && c.concurrency === 42)).toBe(true);
    const { file: out, moves } = updateThresholds(result);
    expect(out.cells['8K/42']).toBeUndefined();
    expect(Object.keys(out.cells)).toHaveLength(CONTEXTS.length * 8);
    expect(moves.some((m) => m.startsWith('8K/42'))).toBe(false);
    // an existing budget for a key the search measured (not a matrix cell) is dropped, not rewritten
    const stale = updateThresholds(result, file(undefined, { cells: { '8K/42': { min: { totalTokensPerSecond: 1 } } } })).file;
    expect(stale.cells['8K/42']).toBeUndefined();
  });

  test('formatThresholds puts capacity after prefill; the written file parses against the matrix and holds', () => {
    const result = withCapacity([capRow(8 * K, 42), capRow(16 * K, 16, true)]);
    const existing = file(undefined, { target: 'sglang', headroom: 0.1, tolerances: { slack: 0 } });
    const text = formatThresholds(updateThresholds(result, existing).file);
    expect(Object.keys(JSON.parse(text))).toEqual(['target', 'headroom', 'tolerances', 'cells', 'prefill', 'slo', 'capacity']);
    expect(text).toContain('  "capacity": {\n    "8K": {\n      "min": 37\n    },\n    "16K": {\n      "min": 14\n    }\n  }\n}\n');
    expect(Object.keys(JSON.parse(formatThresholds(updateThresholds(sglangResult()).file)))).not.toContain('capacity');

    const path = join(dir, 'written.json');
    writeThresholds(path, updateThresholds(result).file);
    const matrix = {
      cellKeys: result.cells.filter((c) => !c.adaptive).map((c) => `${c.contextLabel}/${c.concurrency}`),
      prefillKeys: result.prefill.map((p) => p.contextLabel),
      contextKeys: CONTEXTS.map(contextLabel),
    };
    const loaded = loadThresholds(path, matrix);
    for (const row of result.capacity!.rows) expect(capacityBudgetFailures(row, loaded.capacity?.[row.contextLabel]?.min, 0)).toEqual([]);
    // a second -u from the same run leaves the file as it is
    expect(formatThresholds(updateThresholds(result, loaded).file)).toBe(readFileSync(path, 'utf8'));
  });
});

describe('capacityBudgetFailures', () => {
  test('no budget, or a capacity at or above it: no failure', () => {
    expect(capacityBudgetFailures(capRow(8 * K, 5), undefined, 0)).toEqual([]);
    expect(capacityBudgetFailures(capRow(8 * K, 10), 10, 0)).toEqual([]);
    expect(capacityBudgetFailures(capRow(8 * K, 11), 10, 0)).toEqual([]);
    expect(capacityBudgetFailures(capRow(8 * K, 0), 0, 0)).toEqual([]);
  });

  test('below the budget: the users, the budget and what binds', () => {
    expect(capacityBudgetFailures(capRow(8 * K, 5), 10, 0)).toEqual(['capacity 8K: 5 users < budget 10; binds: TTFT p90 1,300 ms > 1,000 ms at 6']);
    expect(capacityBudgetFailures(capRow(8 * K, 9), 10, 0)).toHaveLength(1);
    const unbound = capRow(8 * K, 5);
    delete unbound.binding;
    delete unbound.bindingConcurrency;
    expect(capacityBudgetFailures(unbound, 10, 0)).toEqual(['capacity 8K: 5 users < budget 10']);
  });

  test("the file's slack lowers the bound and is named", () => {
    expect(capacityBudgetFailures(capRow(8 * K, 9), 10, 0.1)).toEqual([]);
    expect(capacityBudgetFailures(capRow(8 * K, 8), 10, 0.1)).toEqual(['capacity 8K: 8 users < budget 10 (slack 10 %: 9); binds: TTFT p90 1,450 ms > 1,000 ms at 9']);
    expect(capacityBudgetFailures(capRow(8 * K, 16), 20, 0.15)).toEqual(['capacity 8K: 16 users < budget 20 (slack 15 %: 17); binds: TTFT p90 1,850 ms > 1,000 ms at 17']);
  });

  test('a lower bound below the budget fails too, naming the column to add', () => {
    expect(capacityBudgetFailures(capRow(32 * K, 16, true), 20, 0)).toEqual([
      'capacity 32K: every column met the SLO, but the largest is 16 < budget 20; add a column of at least 20 to measure it',
    ]);
    expect(capacityBudgetFailures(capRow(32 * K, 32, true), 20, 0)).toEqual([]);
  });
});

describe('capacity budgets and the SLO they were measured at', () => {
  test('-u writes the SLO beside the capacity budgets, before them in the file', () => {
    const { file: out } = updateThresholds(withCapacity([capRow(8 * K, 40)]));
    expect(out.slo).toBe('ttftP90<=1000');
    const text = formatThresholds(out);
    expect(text.indexOf('"slo"')).toBeGreaterThan(text.indexOf('"prefill"'));
    expect(text.indexOf('"slo"')).toBeLessThan(text.indexOf('"capacity"'));
    expect(parseThresholds(text, 't.json').slo).toBe('ttftP90<=1000');
  });

  test('at another SLO, -u rewrites every capacity budget (even ones that still hold) and says so', () => {
    const existing = file({ '8K': { min: 30 }, '32K': { min: 5 } }, { slo: 'perRequest>=20' });
    const { file: out, moves } = updateThresholds(withCapacity([capRow(8 * K, 40)]), existing);
    expect(out.slo).toBe('ttftP90<=1000');
    // 40 users: 36, not the 30 that would have been kept at the same SLO
    expect(out.capacity).toEqual({ '8K': { min: 36 } });
    expect(moves).toContain('capacity budgets were for the SLO perRequest>=20; rewritten for ttftP90<=1000');
  });

  test('a capacity bounded by a cell that was not measured keeps the budget it had', () => {
    const row = capRow(8 * K, 12);
    row.binding = { constraint: 'unmeasured', label: 'not measured', detail: '8K/16 has no result in this run' };
    const { file: out } = updateThresholds(withCapacity([row]), file({ '8K': { min: 30 } }, { slo: 'ttftP90<=1000' }));
    expect(out.capacity).toEqual({ '8K': { min: 30 } });
  });
});
