/**
 * -u and total tok/s: a closed loop's step phase moves a cell's total tok/s by up to one decode step
 * per completed request, so a budget within that band is kept (seen on the tiny simulator at 1K/2,
 * 16-token requests, 10 ms steps: 196.7 then 187.6 tok/s, the same 99.9 tok/s per request).
 */
import { describe, expect, test } from 'vitest';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { updateThresholds } from '../../src/thresholds/update.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

/** the reference result with one cell, 8K/2, measured at this total tok/s */
function run(total: number, completedRequests: number): SpeedMatrixResult {
  const result = sglangResult();
  const cell = structuredClone(result.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 2)!);
  cell.figures = { ...cell.figures!, totalTokensPerSecond: total, perRequestTokensPerSecond: 99.9, completedRequests, measuredForS: 2 };
  cell.figures.timeBetweenTokensMs = { ...cell.figures.timeBetweenTokensMs!, median: 10 };
  result.cells = [cell];
  result.prefill = [];
  result.info.plannedCells = ['8K/2'];
  result.info.plannedPrefill = [];
  return result;
}

describe('-u: total tok/s and step phase', () => {
  test('many short requests: a 4.6 % lower total keeps the budget (phase band 23 × 10 ms / (2 × 2 s) = 5.75 %)', () => {
    const first = updateThresholds(run(196.7, 23)).file;
    expect(first.cells['8K/2']!.min!.totalTokensPerSecond).toBe(177);
    const second = updateThresholds(run(187.6, 23), first);
    expect(second.moves.filter((m) => m.includes('totalTokensPerSecond'))).toEqual([]);
    // a drop beyond half the headroom is still 'too close', phase or not
    expect(updateThresholds(run(180, 23), first).moves).toContain('8K/2 min.totalTokensPerSecond 177.0 → 162.0 (too close: measured 180.0)');
    expect(second.file.cells['8K/2']!.min!.totalTokensPerSecond).toBe(177);
  });

  test('requests longer than the window (no restart, no phase): the same move is beyond noise and rewritten', () => {
    const first = updateThresholds(run(196.7, 0)).file;
    const second = updateThresholds(run(187.6, 0), first);
    expect(second.moves).toContain('8K/2 min.totalTokensPerSecond 177.0 → 168.0 (moved beyond noise)');
  });
});
