/** The row entry points: judgePrefillRow (with prefillStatus) and judgeCapacityRow. */
import { describe, expect, test } from 'vitest';
import { judgeCapacityRow, judgePrefillRow, prefillStatus, type CapacityRules } from '../../src/judge/index.js';
import { asBaseline } from '../../src/compare/baseline.js';
import { parseSloText } from '../../src/slo/slo.js';
import type { Judged } from '../../src/slo/capacity.js';
import type { CapacityRow, CellResult, PrefillRowResult, SloVerdict } from '../../src/shapes/result.js';
import { K, sglangPrefill, sglangResult } from '../results/fixtures/sglang-h200.js';

const row8k = sglangPrefill().find((p) => p.contextLabel === '8K')!;

describe('judgePrefillRow', () => {
  test('a row whose request failed is Errors, and fails with its error (not stored)', () => {
    expect(prefillStatus({ failed: 0 })).toBe('valid');
    expect(prefillStatus({ failed: 1 })).toBe('errors');
    const failed: PrefillRowResult = { ...row8k, status: 'errors', error: 'http-status: 500' };
    expect(judgePrefillRow('8K', failed, {})).toEqual({ thresholdFailures: [], rowFailure: 'prefill 8K failed: http-status: 500' });
    expect(judgePrefillRow('8K', row8k, {})).toEqual({ thresholdFailures: [] });
  });

  test('its budget, and with a baseline the regression lines', () => {
    const tps = row8k.figures!.promptTokensPerSecond;
    const j = judgePrefillRow('8K', row8k, { budget: { min: { promptTokensPerSecond: tps * 2 } } });
    expect(j.thresholdFailures).toHaveLength(1);
    expect(j.thresholdFailures[0]).toMatch(/^prefill 8K promptTokensPerSecond .* < min .* \(50\.0% below\)$/);
    const slower: PrefillRowResult = { ...row8k, figures: { ...row8k.figures!, promptTokensPerSecond: tps / 2 } };
    const withBase = judgePrefillRow('8K', slower, { baseline: asBaseline('base.json', sglangResult()) });
    expect(withBase.baselineFailures).toHaveLength(1);
    expect(withBase.baselineFailures![0]).toMatch(/^prefill 8K promptTokensPerSecond .* vs baseline .*: −50\.0%/);
    expect(judgePrefillRow('8K', row8k, { baseline: asBaseline('base.json', sglangResult()) }).baselineFailures).toEqual([]);
  });
});

describe('judgeCapacityRow', () => {
  const slo = parseSloText('ttftP90<=1000');
  const meets: SloVerdict = { meets: true, misses: [] };
  const miss = (at: number): SloVerdict => {
    const m = { constraint: 'ttftMs' as const, label: 'TTFT p90', value: 1000 + at, bound: 1000, detail: `TTFT p90 ${1000 + at} ms > 1,000 ms` };
    return { meets: false, misses: [m], binding: m };
  };
  const judged: Judged[] = [1, 2, 4, 8].map((c) => ({ concurrency: c, adaptive: false, verdict: c <= 4 ? meets : miss(c) }));
  const input = { context: 8 * K, contextLabel: '8K', judged };
  const rules: CapacityRules = { slo, slack: 0 };

  test('the capacity is the largest concurrency meeting the SLO below the first miss, which binds', () => {
    const { row, unmeasured } = judgeCapacityRow(input, [], rules);
    expect(row.capacity).toBe(4);
    expect(row.atLeast).toBe(false);
    expect(row.bindingConcurrency).toBe(8);
    expect(row.thresholdFailures).toBeUndefined();
    expect(row.baselineFailures).toBeUndefined();
    expect(unmeasured).toEqual([]);
  });

  test('a capacity below its budget fails, slack applied', () => {
    expect(judgeCapacityRow(input, [], { ...rules, budgetMin: 6 }).row.thresholdFailures).toEqual([
      'capacity 8K: 4 users < budget 6; binds: TTFT p90 1008 ms > 1,000 ms at 8',
    ]);
    expect(judgeCapacityRow(input, [], { ...rules, budgetMin: 4 }).row.thresholdFailures).toBeUndefined();
    expect(judgeCapacityRow(input, [], { ...rules, budgetMin: 4.4, slack: 0.1 }).row.thresholdFailures).toBeUndefined();
  });

  test('a drop against the baseline at the same SLO fails; at another SLO it is not compared', () => {
    const base = sglangResult();
    base.info.run.slo = slo;
    const baseRow: CapacityRow = { context: 8 * K, contextLabel: '8K', capacity: 12, atLeast: false, searched: [], adaptiveCells: 0, resolution: 1 };
    base.capacity = { rows: [baseRow] };
    const { row } = judgeCapacityRow(input, [], { ...rules, baseline: asBaseline('base.json', base) });
    expect(row.baselineFailures).toEqual(['capacity 8K: 4 users vs baseline 12 (−8, allowed −1); binds: TTFT p90 1008 ms > 1,000 ms at 8']);
    base.info.run.slo = parseSloText('ttftP90<=2000');
    expect(judgeCapacityRow(input, [], { ...rules, baseline: asBaseline('base.json', base) }).row.baselineFailures).toBeUndefined();
  });

  test('a search cell that could not be measured leaves the capacity a lower bound: a failure line', () => {
    const notRun = { context: 8 * K, contextLabel: '8K', concurrency: 6, status: 'not-run', statuses: ['not-run'], evidence: {}, notRunReason: 'ECONNREFUSED', finishedAt: '' } as CellResult;
    expect(judgeCapacityRow(input, [notRun], rules).unmeasured).toEqual([
      "capacity 8K: the search's cell at 6 could not be measured (ECONNREFUSED), so 4 is only a lower bound",
    ]);
    // below the lowest column: no capacity was found at all, and the line does not call 0 a bound
    const unjudged: SloVerdict = { meets: false, misses: [], binding: { constraint: 'unmeasured', label: 'not measured', detail: '8K/1 has no figures (not-run)' } };
    const low = { context: 8 * K, contextLabel: '8K', judged: [{ concurrency: 1, adaptive: true, verdict: unjudged }, { concurrency: 2, adaptive: false, verdict: miss(2) }] };
    expect(judgeCapacityRow(low, [{ ...notRun, concurrency: 1 }], rules).unmeasured).toEqual([
      "capacity 8K: the search's cell at 1 could not be measured (ECONNREFUSED), so no capacity was found",
    ]);
  });
});
