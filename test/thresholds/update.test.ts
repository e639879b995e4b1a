import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { collectResult } from '../../src/results/collect.js';
import { evaluateCell, evaluatePrefill } from '../../src/judge/thresholds.js';
import { loadThresholds, parseThresholds } from '../../src/thresholds/load.js';
import { formatThresholds, roundBudget, updateThresholds, writeThresholds } from '../../src/thresholds/update.js';
import { sglangCells, sglangInfo, sglangResult } from '../results/fixtures/sglang-h200.js';

const dir = mkdtempSync(join(tmpdir(), 'sm-upd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('roundBudget keeps 3 significant digits in the safe direction', () => {
  expect(roundBudget(771.57, 'down')).toBe(771);
  expect(roundBudget(2354.94, 'down')).toBe(2350);
  expect(roundBudget(1603.8, 'up')).toBe(1610);
  expect(roundBudget(18.48, 'up')).toBe(18.5);
  expect(roundBudget(0.01234, 'down')).toBe(0.0123);
  expect(roundBudget(123, 'up')).toBe(123);
});

test('budgets from measurements with 10% headroom, stable order, 2-space JSON with newline', () => {
  const { file } = updateThresholds(sglangResult());
  const text = formatThresholds(file);
  expect(text.endsWith('}\n')).toBe(true);
  expect(Object.keys(file.cells).slice(0, 3)).toEqual(['8K/1', '8K/2', '8K/4']);
  expect(Object.keys(file.cells).at(-1)).toBe('123K/128');
  expect(Object.keys(file.prefill)).toEqual(['8K', '16K', '32K', '64K', '123K', '128K']);
  expect(file.cells['8K/16']).toEqual({
    status: 'valid',
    min: { totalTokensPerSecond: 771, perRequestTokensPerSecond: 48.3 },
    max: { ttftMs: 465, timeBetweenTokensMs: 20.5 },
  });
  expect(file.cells['8K/1']?.status).toBe('requests-queued');
  expect(file.cells['8K/128']).toEqual({ status: 'over-capacity' });
  expect(file.prefill['8K']).toEqual({ status: 'valid', min: { promptTokensPerSecond: 9330 }, max: { ttftMs: 869 } });
  expect(text).toContain('    "8K/16": {\n      "status": "valid",\n      "min": {\n        "totalTokensPerSecond": 771,');
  expect(text.indexOf('"$schema"')).toBeLessThan(text.indexOf('"cells"'));
});

test('round trip: written file parses against the matrix and the same run passes it', () => {
  const result = sglangResult();
  const path = join(dir, 'sub', 'sglang.json');
  writeThresholds(path, updateThresholds(result).file);
  const cellKeys = result.cells.map((c) => `${c.contextLabel}/${c.concurrency}`);
  const prefillKeys = result.prefill.map((r) => r.contextLabel);
  const loaded = loadThresholds(path, { cellKeys, prefillKeys });
  for (const cell of result.cells) {
    const key = `${cell.contextLabel}/${cell.concurrency}`;
    expect(evaluateCell(key, cell, loaded.cells[key])).toEqual([]);
  }
  for (const row of result.prefill) expect(evaluatePrefill(row.contextLabel, row, loaded.prefill[row.contextLabel])).toEqual([]);
  // updating again from the same result is a no-op (stable output)
  expect(formatThresholds(updateThresholds(result, loaded).file)).toBe(readFileSync(path, 'utf8'));
});

test('-u keeps user entries it does not manage, drops cells outside the matrix, keeps unrun planned cells', () => {
  const existing = parseThresholds(
    JSON.stringify({
      target: 'h200',
      headroom: 0.2,
      tolerances: { slack: 0.05 },
      cells: {
        '8K/16': { max: { failedRequests: 0, ttftMs: 1 }, min: { completedRequests: 0 } },
        '8K/2': { min: { totalTokensPerSecond: 1 } },
        '999K/1': { min: { totalTokensPerSecond: 1 } },
      },
    }),
    'old.json',
  );
  // a filtered run: only 8K/16 finished
  const result = collectResult(
    [{ kind: 'run', info: sglangInfo() }, { kind: 'cell', cell: sglangCells().find((c) => c.contextLabel === '8K' && c.concurrency === 16)! }],
    { partial: false },
  )!;
  const { file } = updateThresholds(result, existing);
  expect(file).toMatchObject({ target: 'h200', headroom: 0.2, tolerances: { slack: 0.05 } });
  expect(Object.keys(file.cells)).toEqual(['8K/2', '8K/16']);
  expect(file.cells['8K/2']).toEqual({ min: { totalTokensPerSecond: 1 } });
  expect(file.cells['8K/16']).toEqual({
    status: 'valid',
    min: { totalTokensPerSecond: 685, perRequestTokensPerSecond: 42.9, completedRequests: 0 },
    max: { ttftMs: 507, timeBetweenTokensMs: 22.4, failedRequests: 0 },
  });
  expect(JSON.stringify(file.cells['8K/16'])).toBe(
    '{"status":"valid","min":{"totalTokensPerSecond":685,"perRequestTokensPerSecond":42.9,"completedRequests":0},"max":{"ttftMs":507,"timeBetweenTokensMs":22.4,"failedRequests":0}}',
  );
});

describe('-u keeps what still holds and has not moved beyond noise', () => {
  const first = updateThresholds(sglangResult()).file;
  const scaled = (tps: number, ttft: number) => {
    const r = sglangResult();
    for (const c of r.cells) {
      if (!c.figures) continue;
      c.figures.totalTokensPerSecond *= tps;
      if (c.figures.perRequestTokensPerSecond !== undefined) c.figures.perRequestTokensPerSecond *= tps;
      if (c.figures.ttftMs) c.figures.ttftMs = { ...c.figures.ttftMs, median: c.figures.ttftMs.median * ttft };
    }
    return r;
  };

  test('a rerun within noise (tok/s −2 %, TTFT +3 %) leaves the file byte-identical', () => {
    const again = updateThresholds(scaled(0.98, 1.03), first);
    expect(formatThresholds(again.file)).toBe(formatThresholds(first));
    expect(again.moves).toEqual([]);
    expect(again.kept).toBeGreaterThan(100);
  });

  test('a breached budget is rewritten and says so', () => {
    const slower = updateThresholds(scaled(0.8, 1), first);
    expect(slower.moves).toContainEqual(expect.stringMatching(/^8K\/16 min\.totalTokensPerSecond 771\.0 → 617\.0 \(breached: measured 685\.\d\)$/));
    expect(slower.file.cells['8K/16']!.min!.totalTokensPerSecond).toBe(617);
  });

  test('a budget left far behind by a faster server is tightened ("moved beyond noise")', () => {
    const faster = updateThresholds(scaled(1.3, 1), first);
    expect(faster.moves).toContainEqual(expect.stringMatching(/^8K\/16 min\.totalTokensPerSecond 771\.0 → 1000\.0 \(moved beyond noise\)$/));
  });

  test('force (LLM_BENCH_UPDATE=all) rewrites every managed budget', () => {
    const forced = updateThresholds(scaled(0.98, 1.03), first, { force: true });
    expect(forced.kept).toBe(0);
    expect(forced.file.cells['8K/16']!.min!.totalTokensPerSecond).toBe(756);
  });

  test('an expected Requests queued is kept when the cell reads Valid (it meets it); the other way round it moves', () => {
    const queued = Object.entries(first.cells).find(([, b]) => b.status === 'requests-queued')?.[0];
    expect(queued, 'the fixture has a Requests queued cell').toBeDefined();
    const valid = sglangResult();
    for (const c of valid.cells) if (`${c.contextLabel}/${c.concurrency}` === queued) c.status = 'valid';
    const again = updateThresholds(valid, first);
    expect(again.file.cells[queued!]!.status).toBe('requests-queued');
    expect(again.moves.filter((m) => m.includes('status'))).toEqual([]);
    // LLM_BENCH_UPDATE=all writes what was measured
    expect(updateThresholds(valid, first, { force: true }).file.cells[queued!]!.status).toBe('valid');
    // a cell that now queues where Valid was written: the status moves
    const back = updateThresholds(sglangResult(), updateThresholds(valid, first, { force: true }).file);
    expect(back.moves).toContain(`${queued} status valid → requests-queued`);
    // acceptStatuses lets a status pass the gate; -u still writes what was measured (as before)
    const accepting = { ...updateThresholds(valid, first, { force: true }).file, tolerances: { acceptStatuses: ['requests-queued' as const] } };
    const accepted = updateThresholds(sglangResult(), accepting);
    expect(accepted.file.cells[queued!]!.status).toBe('requests-queued');
    expect(accepted.moves).toContain(`${queued} status valid → requests-queued`);
  });
});

test('-u rewrites a budget the measurement only just meets (less than half the headroom to spare)', () => {
  const first = updateThresholds(sglangResult()).file;
  const r = sglangResult();
  const cell = r.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 16)!;
  // 8K/16 min.totalTokensPerSecond is 771 (857.3 × 0.9): 780 still meets it, with 1 % to spare
  cell.figures!.totalTokensPerSecond = 780;
  const again = updateThresholds(r, first);
  expect(again.moves).toContainEqual('8K/16 min.totalTokensPerSecond 771.0 → 702.0 (too close: measured 780.0)');
});

describe('-u never writes a failed measurement', () => {
  const failing = (key: string, status: 'client-limited' | 'errors', line: string) => {
    const result = sglangResult();
    const cell = result.cells.find((c) => `${c.contextLabel}/${c.concurrency}` === key)!;
    cell.status = status;
    cell.statuses = [status];
    // what the -u run's judgement stored on it (src/matrix/cell-test.ts: the run's own rules)
    cell.thresholdFailures = [line];
    return result;
  };
  test('a Client-limited cell or one with failed requests keeps the budget it had, or gets none, and is listed', () => {
    const result = failing('8K/16', 'client-limited', '8K/16 is Client-limited: timing error estimate p99 6.1 ms');
    const fresh = updateThresholds(result);
    expect(fresh.file.cells['8K/16']).toBeUndefined();
    expect(fresh.file.cells['8K/8']?.status).toBe('valid');
    expect(fresh.notWritten).toEqual(['8K/16 (no budget): 8K/16 is Client-limited: timing error estimate p99 6.1 ms']);
    // an existing budget (written from a healthy run) stays exactly as it was: status valid, figures untouched
    const healthy = updateThresholds(sglangResult()).file;
    const crashed = failing('8K/16', 'errors', '8K/16 had 28 failed requests (28 socket)');
    const { file, moves, notWritten } = updateThresholds(crashed, healthy);
    expect(file.cells['8K/16']).toEqual(healthy.cells['8K/16']);
    expect(moves.filter((m) => m.startsWith('8K/16'))).toEqual([]);
    expect(notWritten).toEqual(['8K/16 (its budget stays as it was): 8K/16 had 28 failed requests (28 socket)']);
  });
  test('a Client-limited cell the run let pass (the simulator on a small machine) is not written, unless the file accepts the status', () => {
    const result = sglangResult();
    const cell = result.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 16)!;
    cell.status = 'client-limited';
    cell.statuses = ['client-limited'];
    const { file, notWritten } = updateThresholds(result);
    expect(file.cells['8K/16']).toBeUndefined();
    expect(notWritten).toEqual(["8K/16 (no budget): 8K/16 is Client-limited (the client could not time its tokens within its bound), so its figures are partly the client's"]);
    const accepting = parseThresholds(JSON.stringify({ cells: {}, tolerances: { acceptStatuses: ['client-limited'] } }), 'a.json');
    const accepted = updateThresholds(result, accepting);
    expect(accepted.file.cells['8K/16']?.status).toBe('client-limited');
    expect(accepted.notWritten).toEqual([]);
  });
  test('a failed prefill row is not written either', () => {
    const result = sglangResult();
    const row = result.prefill.find((r) => r.contextLabel === '8K')!;
    row.status = 'errors';
    row.error = 'socket closed';
    delete row.figures;
    const { file, notWritten } = updateThresholds(result);
    expect(file.prefill['8K']).toBeUndefined();
    expect(notWritten).toEqual(['prefill 8K (no budget): its request failed (socket closed)']);
  });
  test("the budgets a -u run still judges a cell on are the user's, not the ones it rewrites", async () => {
    const { unmanagedCellBudget } = await import('../../src/thresholds/schema.js');
    expect(unmanagedCellBudget({ status: 'valid', min: { totalTokensPerSecond: 9, completedRequests: 2 }, max: { ttftMs: 5, failedRequests: 3 } })).toEqual({
      min: { completedRequests: 2 },
      max: { failedRequests: 3 },
    });
    expect(unmanagedCellBudget({ status: 'client-limited', min: { totalTokensPerSecond: 9 } })).toBeUndefined();
    expect(unmanagedCellBudget(undefined)).toBeUndefined();
  });
});
