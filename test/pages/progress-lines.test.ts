/**
 * The run's last line (progress-lines.ts runEndLine): `vitest bench` prints no tally of passed and
 * failed tests, so the reporter says how the cells ended and which tests failed.
 */
import { describe, expect, test } from 'vitest';
import { plannedCellCounts, runEndLine, timeLeftText, type TestTally } from '../../src/pages/progress-lines.js';
import { CellTimes } from '../../reporters/cell-times.js';
import { cellKey } from '../../src/shapes/labels.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';
import { rateResult } from '../results/fixtures/rate-cells.js';

const tally = (over: Partial<TestTally> = {}): TestTally => ({ passed: 46, failed: 0, skipped: 0, failedNames: [], ...over });

describe('runEndLine', () => {
  test('counts the cells by status, in the status labels\' order, and the prefill rows', () => {
    expect(runEndLine(sglangResult(), 40, tally())).toBe(
      '[speed-matrix] finished: 40 of 40 cells (28 Valid, 11 Over capacity, 1 Requests queued) · 6 prefill rows (6 Valid) · tests: 46 passed',
    );
  });

  test('names the failed tests, five at most, and counts the rest', () => {
    const names = ['decode 8K/1', 'decode 8K/2', 'decode 8K/4', 'decode 8K/8', 'decode 8K/16', 'decode 8K/32', 'prefill 8K'];
    const line = runEndLine(sglangResult(), 40, tally({ passed: 39, failed: 7, skipped: 2, failedNames: names }));
    expect(line).toMatch(/ · tests: 39 passed, 7 failed, 2 skipped \(decode 8K\/1, decode 8K\/2, decode 8K\/4, decode 8K\/8, decode 8K\/16, and 2 more\)$/);
  });

  test('an interrupted run says so, with the cells not run left out of the count', () => {
    const result = sglangResult();
    result.partial = true;
    for (const cell of result.cells.slice(30)) cell.status = 'not-run';
    expect(runEndLine(result, 40, undefined)).toMatch(/^\[speed-matrix\] interrupted: 30 of 40 cells \(/);
    expect(runEndLine(result, 40, undefined)).not.toContain('tests:');
  });

  test('a resumed run says how many cells and rows it kept rather than measured', () => {
    const result = sglangResult();
    result.cells[0]!.resumed = true;
    result.cells[1]!.resumed = true;
    result.prefill[0]!.resumed = true;
    expect(runEndLine(result, 40, undefined)).toMatch(/^\[speed-matrix\] finished: 40 of 40 cells \([^)]*\) · 3 kept from the resumed run · 6 prefill rows/);
  });

  test("the capacity search's adaptive cells are not the matrix's: left out of both counts", () => {
    const result = sglangResult();
    const extra = { ...structuredClone(result.cells[0]!), concurrency: 3, adaptive: true };
    result.cells.push(extra);
    const rates = rateResult();
    rates.rateCells!.push({ ...structuredClone(rates.rateCells![0]!), rate: 0.75, adaptive: true });
    expect(runEndLine(result, 40, undefined)).toMatch(/^\[speed-matrix\] finished: 40 of 40 cells \(28 Valid, 11 Over capacity, 1 Requests queued\)/);
    expect(runEndLine(rates, 40, undefined)).toContain(' · 8 rate cells (3 Valid, ');
  });

  test('rate cells are counted apart, planned ones only, with their own status words', () => {
    const line = runEndLine(rateResult(), 40, tally());
    // rate-cells.ts: 2 Valid and 2 Saturated at 8K, then Valid, Errors, Client-limited, Over capacity and one not run
    expect(line).toContain(' · 8 rate cells (3 Valid, 2 Saturated, 1 Over capacity, 1 Client-limited, 1 Errors) · ');
  });
});

describe('the time left on a cell line', () => {
  test('cellsLeftToMeasure: planned cells without a result, less those the plan found Over capacity (no window)', () => {
    const r = sglangResult();
    const over = r.cells.filter((c) => c.status === 'over-capacity').map((c) => cellKey(c.context, c.concurrency));
    expect(over).toHaveLength(11);
    expect(plannedCellCounts(r).left).toBe(0);
    const partial = { ...r, cells: r.cells.slice(0, 10) };
    // no plan of Over capacity: every cell without a result counts
    expect(plannedCellCounts(partial).left).toBe(30);
    partial.info = { ...r.info, plannedOverCapacity: over };
    const overLeft = over.filter((k) => !partial.cells.some((c) => cellKey(c.context, c.concurrency) === k)).length;
    expect(overLeft).toBeGreaterThan(0);
    expect(plannedCellCounts(partial).left).toBe(30 - overLeft);
    // a shard, or a -t filter: only the tests this process runs
    const here = new Set(r.cells.slice(0, 14).map((c) => `decode ${cellKey(c.context, c.concurrency)}`));
    const hereLeft = r.cells.slice(10, 14).filter((c) => !over.includes(cellKey(c.context, c.concurrency))).length;
    expect(plannedCellCounts(partial, here).left).toBe(hereLeft);
    // the N of N/M done: this process's cells, and those with a result (kept from a resumed run, say)
    expect(plannedCellCounts(partial).planned).toBe(40);
    expect(plannedCellCounts(partial, here).planned).toBe(14);
    expect(plannedCellCounts(partial, new Set(['decode 123K/1'])).planned).toBe(11);
  });

  test('timeLeftText: minutes, hours past 90 minutes, and nothing before a measured cell or with none left', () => {
    expect(timeLeftText(35_000, 24, false)).toBe('about 14 min left');
    expect(timeLeftText(20_000, 2, false)).toBe('under a minute left');
    expect(timeLeftText(35_000, 200, false)).toBe('about 1.9 h left');
    expect(timeLeftText(35_000, 24, true)).toBe('about 14 min left for the matrix cells');
    expect(timeLeftText(undefined, 24, false)).toBeUndefined();
    expect(timeLeftText(35_000, 0, false)).toBeUndefined();
  });

  test("CellTimes: the mean of the cells measured here; Over capacity, Not run, resumed and a capacity search's cells do not count", () => {
    const r = sglangResult();
    const times = new CellTimes();
    const partial = { ...r, cells: r.cells.slice(0, 1) };
    expect(times.progress(partial).left).toBeUndefined();
    const valid = r.cells.find((c) => c.status === 'valid')!;
    const over = r.cells.find((c) => c.status === 'over-capacity')!;
    times.add(valid, 30_000);
    times.add({ ...valid, resumed: true }, 10);
    times.add({ ...valid, adaptive: true }, 10);
    times.add({ ...valid, status: 'not-run' }, 10);
    times.add(over, 10);
    times.add(valid, undefined);
    times.add(valid, 40_000);
    // 39 cells left at 35 s each
    expect(times.progress(partial).left).toBe('about 23 min left');
    // the tests collected here (a shard's file, -t): those left out (skip, todo) and other files' do not count
    const test = (name: string, mode: string) => ({ name, options: { mode } }) as never;
    times.collected([test('decode 8K/2', 'run'), test('decode 8K/4', 'skip'), test('decode 8K/8', 'todo'), test('prefill 8K', 'run')]);
    expect(times.progress(partial).left).toBe('under a minute left');
    times.collected([test('decode 8K/4', 'run'), test('decode 8K/8', 'run')]);
    expect(times.progress(partial).left).toBe('about 2 min left');
    expect(times.progress({ ...partial, info: { ...r.info, run: { ...r.info.run, rates: { rates: [1] } as never } } }).left).toBe('about 2 min left for the matrix cells');
  });
});
