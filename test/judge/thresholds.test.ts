import { describe, expect, test } from 'vitest';
import { evaluateCell, evaluatePrefill } from '../../src/judge/thresholds.js';
import type { CellResult } from '../../src/shapes/result.js';
import { sglangCells, sglangPrefill } from '../results/fixtures/sglang-h200.js';

const cells = sglangCells();
const c64x16 = cells.find((c) => c.contextLabel === '64K' && c.concurrency === 16)!; // 44.7 tok/s/req, TTFT 3354
const over = cells.find((c) => c.status === 'over-capacity')!;

describe('evaluateCell', () => {
  test('within budget: no failures; no budget: no failures', () => {
    expect(evaluateCell('64K/16', c64x16, { status: 'valid', min: { perRequestTokensPerSecond: 40 }, max: { ttftMs: 3400 } })).toEqual([]);
    expect(evaluateCell('64K/16', c64x16, undefined)).toEqual([]);
  });

  test('below min and above max name cell, figure, value, budget and margin', () => {
    expect(evaluateCell('64K/16', c64x16, { min: { perRequestTokensPerSecond: 50.4 }, max: { ttftMs: 3000, timeBetweenTokensMs: 20 } })).toEqual([
      '64K/16 perRequestTokensPerSecond 44.7 < min 50.4 (11.3% below)',
      '64K/16 ttftMs 3354.0 > max 3000.0 (11.8% above)',
      '64K/16 timeBetweenTokensMs 22.4 > max 20.0 (12.0% above)',
    ]);
  });

  test('slack widens budgets and is named', () => {
    expect(evaluateCell('64K/16', c64x16, { min: { perRequestTokensPerSecond: 47 } }, { slack: 0.1 })).toEqual([]);
    expect(evaluateCell('64K/16', c64x16, { min: { perRequestTokensPerSecond: 60 } }, { slack: 0.1 })).toEqual([
      '64K/16 perRequestTokensPerSecond 44.7 < min 60.0 (25.5% below, slack 10.0%)',
    ]);
  });

  test('a missing figure with a budget fails; status mismatch fails', () => {
    expect(evaluateCell('8K/128', over, { status: 'valid', min: { totalTokensPerSecond: 100 } })).toEqual([
      '8K/128 status over-capacity, expected valid',
      '8K/128 totalTokensPerSecond missing (budget min 100.0)',
    ]);
    const noTtft: CellResult = { ...c64x16, figures: { ...c64x16.figures!, ttftMs: undefined } };
    expect(evaluateCell('64K/16', noTtft, { max: { ttftMs: 1 } })).toEqual(['64K/16 ttftMs missing (budget max 1.0)']);
  });

  test('accepted statuses; client-limited fails through its status', () => {
    const queued = cells[0]!; // 8K/1 requests-queued
    expect(evaluateCell('8K/1', queued, { status: 'valid' })).toEqual(['8K/1 status requests-queued, expected valid']);
    expect(evaluateCell('8K/1', queued, { status: 'valid' }, { acceptStatuses: ['requests-queued'] })).toEqual([]);
    const limited: CellResult = { ...c64x16, status: 'client-limited', statuses: ['client-limited'] };
    expect(evaluateCell('64K/16', limited, { status: 'valid' })).toEqual(['64K/16 status client-limited, expected valid']);
    expect(evaluateCell('64K/16', limited, { status: 'valid' }, { acceptStatuses: ['client-limited'] })).toEqual([]);
    expect(evaluateCell('64K/16', limited, { status: 'client-limited' })).toEqual([]);
    // Valid where Requests queued was expected: the server queued nothing this time, no regression
    expect(evaluateCell('8K/1', { ...queued, status: 'valid', statuses: ['valid'] }, { status: 'requests-queued' })).toEqual([]);
    expect(evaluateCell('64K/16', limited, { status: 'requests-queued' })).toEqual(['64K/16 status client-limited, expected requests-queued']);
  });

  test('a budget for a cell that did not run fails', () => {
    expect(evaluateCell('8K/2', undefined, { max: { ttftMs: 10 } })).toEqual([
      '8K/2 did not run, but the threshold file has a budget for it',
      '8K/2 ttftMs missing (budget max 10.0)',
    ]);
  });
});

test('evaluatePrefill', () => {
  const row = sglangPrefill()[0]!; // 8K: 10,370 tok/s, 790 ms
  expect(evaluatePrefill('8K', row, { status: 'valid', min: { promptTokensPerSecond: 10_000 }, max: { ttftMs: 800 } })).toEqual([]);
  expect(evaluatePrefill('8K', row, { min: { promptTokensPerSecond: 11_000 }, max: { ttftMs: 700 } })).toEqual([
    'prefill 8K promptTokensPerSecond 10370.0 < min 11000.0 (5.7% below)',
    'prefill 8K ttftMs 790.0 > max 700.0 (12.9% above)',
  ]);
});
