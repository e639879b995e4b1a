/**
 * rateCapacity budgets in the threshold file: the schema (`rateCapacity: { "8K": { "min": 10.5 } }`),
 * the matrix check of their keys, and `-u` writing them as capacity budgets are written (requests/s,
 * 3 significant digits rounded down, kept while within the capacity's noise band).
 */
import { describe, expect, test } from 'vitest';
import { contextLabel } from '../../src/shapes/labels.js';
import type { RateCapacityRow, SpeedMatrixResult } from '../../src/shapes/result.js';
import { parseSloText } from '../../src/slo/slo.js';
import { parseThresholds, ThresholdsError } from '../../src/thresholds/load.js';
import { formatThresholds, updateThresholds } from '../../src/thresholds/update.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

const keys = { cellKeys: ['8K/1', '8K/16', '32K/16'], prefillKeys: ['8K'], contextKeys: ['8K', '32K'] };
const SLO = parseSloText('ttftP90<=2000');

function rateRow(context: number, capacity: number, over: Partial<RateCapacityRow> = {}): RateCapacityRow {
  return {
    context, contextLabel: contextLabel(context), capacity, atLeast: false, searched: [{ rate: capacity, meets: true, adaptive: true }], adaptiveCells: 5, resolution: 0.05 * capacity,
    binding: { constraint: 'ttftMs', label: 'TTFT p90', value: 2500, bound: 2000, detail: 'TTFT p90 2,500 ms > 2,000 ms' }, bindingRate: capacity * 1.05, ...over,
  };
}
function withRates(rows: RateCapacityRow[]): SpeedMatrixResult {
  const result = sglangResult();
  result.info.run.slo = SLO;
  result.rateCapacity = { rows };
  return result;
}

describe('rateCapacity in the threshold file', () => {
  test('parses budgets in requests/s, with context keys checked against the matrix', () => {
    const file = parseThresholds(JSON.stringify({ cells: {}, prefill: {}, slo: SLO.text, rateCapacity: { '8K': { min: 10.5 } } }), 't.json', keys);
    expect(file.rateCapacity).toEqual({ '8K': { min: 10.5 } });
    expect(() => parseThresholds(JSON.stringify({ rateCapacity: { '8192': { min: 1 } } }), 't.json', keys)).toThrow(/rateCapacity\["8192"\]: write this row as "8K"/);
    expect(() => parseThresholds(JSON.stringify({ rateCapacity: { '64K': { min: 1 } } }), 't.json', keys)).toThrow(ThresholdsError);
    expect(() => parseThresholds(JSON.stringify({ rateCapacity: { '8K': { max: 1 } } }), 't.json', keys)).toThrow(/rateCapacity\["8K"\]/);
    expect(() => parseThresholds(JSON.stringify({ rateCapacity: { '8K': { min: -1 } } }), 't.json', keys)).toThrow(/rateCapacity/);
  });

  test('-u writes them under the run\'s SLO, rounded down to 3 digits below the headroom', () => {
    const { file, moves } = updateThresholds(withRates([rateRow(8192, 11.2), rateRow(32768, 3.37)]), undefined, { headroom: 0.1 });
    expect(file.slo).toBe(SLO.text);
    expect(file.rateCapacity).toEqual({ '8K': { min: 10 }, '32K': { min: 3.03 } });
    expect(moves).toContain('rateCapacity 8K min new → 10.0');
    expect(formatThresholds(file)).toMatch(/"rateCapacity": \{\n {4}"8K": \{\n {6}"min": 10\n/);
  });

  test('-u keeps a budget within the noise band, rewrites a breached one, keeps one bounded by an unmeasured cell', () => {
    const existing = { cells: {}, prefill: {}, slo: SLO.text, rateCapacity: { '8K': { min: 10 }, '32K': { min: 3 } } };
    const same = updateThresholds(withRates([rateRow(8192, 11.3), rateRow(32768, 3.3)]), existing, { headroom: 0.1 });
    expect(same.file.rateCapacity).toEqual({ '8K': { min: 10 }, '32K': { min: 3 } });
    const slower = updateThresholds(withRates([rateRow(8192, 9.1), rateRow(32768, 3.3, { binding: { constraint: 'unmeasured', label: 'not measured', detail: 'x' } })]), existing, { headroom: 0.1 });
    expect(slower.file.rateCapacity).toEqual({ '8K': { min: 8.19 }, '32K': { min: 3 } });
    expect(slower.moves).toContain('rateCapacity 8K min 10.0 → 8.2 (breached: measured 9.1)');
  });

  test('a file without rateCapacity is written as before', () => {
    const { file } = updateThresholds(sglangResult(), undefined, {});
    expect(file.rateCapacity).toBeUndefined();
    expect(formatThresholds(file)).not.toMatch(/rateCapacity/);
  });
});
