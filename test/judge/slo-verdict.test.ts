import { describe, expect, test } from 'vitest';
import type { CellFigures } from '../../src/shapes/result.js';
import type { CellResult, Goodput, SloMiss } from '../../src/shapes/result.js';
import { parseSloText } from '../../src/slo/slo.js';
import { sloVerdict } from '../../src/judge/slo-verdict.js';

const FIGURES: CellFigures = {
  outputTokens: 30_000,
  tokenSource: 'usage',
  measuredForS: 30,
  totalTokensPerSecond: 1000,
  // per-request median 40 tok/s; TBT of the per-request means: median 25, p90 40, p99 80
  perRequestTokensPerSecond: 40,
  timeBetweenTokensMs: { median: 25, p90: 40, p99: 80, samples: 32 },
  ttftMs: { median: 800, p90: 2340, p99: 3100, samples: 32 },
  clientActiveRequests: 32,
  averageActiveRequests: 32,
  averageActiveRequestsSource: 'client',
  activeRequestsDisagree: false,
  completedRequests: 10,
  failedRequests: 0,
  startedRequests: 42,
};

function goodputOf(met: number, judged: number): Goodput {
  return { requests: { met, judged, share: met / judged }, tokens: { met: met * 100, total: judged * 100, share: met / judged } };
}

function cell(over: Partial<CellResult> = {}, figures: Partial<CellFigures> = {}): CellResult {
  return {
    context: 8192,
    contextLabel: '8K',
    concurrency: 48,
    status: 'valid',
    statuses: ['valid'],
    evidence: {},
    figures: { ...FIGURES, ...figures },
    finishedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

const judge = (c: CellResult, slo: string) => sloVerdict(c, parseSloText(slo));

describe('sloVerdict: a cell that meets', () => {
  test.each([
    'perRequest>=40',
    'perRequestP10>=25', // 1000 / TBT p90 40 = 25
    'perRequestP1>=12.5', // 1000 / TBT p99 80
    'ttft<=800',
    'ttftP90<=2340',
    'ttftP99<=3100',
    'tbt<=25',
    'tbtP90<=40',
    'tbtP99<=80',
    'errors=0',
    'perRequest>=20,ttftP90<=2500,tbtP99<=100,errors=0',
  ])('%s (bounds are inclusive)', (slo) => {
    expect(judge(cell(), slo)).toEqual({ meets: true, misses: [] });
  });

  test('goodput at its bound meets', () => {
    expect(judge(cell({ goodput: goodputOf(9, 10) }), 'goodput>=90%')).toEqual({ meets: true, misses: [] });
    expect(judge(cell({ goodput: goodputOf(999, 1000) }), 'goodput>=99.9%')).toEqual({ meets: true, misses: [] });
  });

  test('errors within the allowance meet; other statuses with figures are judged on them', () => {
    const errored = cell({ status: 'errors', statuses: ['errors'] }, { failedRequests: 2 });
    expect(judge(errored, 'errors<=2').meets).toBe(true);
    const queued = cell({ status: 'requests-queued', statuses: ['requests-queued'] });
    expect(judge(queued, 'ttftP90<=2340').meets).toBe(true);
    expect(judge(queued, 'ttftP90<=2000').meets).toBe(false);
  });
});

describe('sloVerdict: each constraint’s miss', () => {
  test('per-request tok/s (median)', () => {
    expect(judge(cell(), 'perRequest>=50')).toEqual({
      meets: false,
      misses: [{ constraint: 'perRequestTokensPerSecond', label: 'per-request tok/s', value: 40, bound: 50, detail: 'per-request tok/s 40.0 < 50.0' }],
      binding: { constraint: 'perRequestTokensPerSecond', label: 'per-request tok/s', value: 40, bound: 50, detail: 'per-request tok/s 40.0 < 50.0' },
    });
  });

  test('per-request tok/s p10 is 1000 / TBT p90; p1 is 1000 / TBT p99', () => {
    const p10 = judge(cell(), 'perRequestP10>=30');
    expect(p10.misses).toEqual([
      { constraint: 'perRequestTokensPerSecond', label: 'per-request tok/s p10', value: 25, bound: 30, detail: 'per-request tok/s p10 25.0 < 30.0' },
    ]);
    const p1 = judge(cell(), 'perRequestP1>=15');
    expect(p1.misses).toEqual([
      { constraint: 'perRequestTokensPerSecond', label: 'per-request tok/s p1', value: 12.5, bound: 15, detail: 'per-request tok/s p1 12.5 < 15.0' },
    ]);
    // the median is not what p10 reads: a 40 tok/s median meets perRequest>=30 though p10 misses it
    expect(judge(cell(), 'perRequest>=30').meets).toBe(true);
  });

  test('TTFT at each stat', () => {
    expect(judge(cell(), 'ttftP90<=2000').misses).toEqual([
      { constraint: 'ttftMs', label: 'TTFT p90', value: 2340, bound: 2000, detail: 'TTFT p90 2,340 ms > 2,000 ms' },
    ]);
    expect(judge(cell(), 'ttft<=500').misses).toEqual([{ constraint: 'ttftMs', label: 'TTFT', value: 800, bound: 500, detail: 'TTFT 800 ms > 500 ms' }]);
    expect(judge(cell(), 'ttftP99<=3000').misses).toEqual([
      { constraint: 'ttftMs', label: 'TTFT p99', value: 3100, bound: 3000, detail: 'TTFT p99 3,100 ms > 3,000 ms' },
    ]);
  });

  test('TBT at each stat, with one decimal', () => {
    expect(judge(cell(), 'tbtP99<=50').misses).toEqual([
      { constraint: 'timeBetweenTokensMs', label: 'TBT p99', value: 80, bound: 50, detail: 'TBT p99 80.0 ms > 50.0 ms' },
    ]);
    expect(judge(cell(), 'tbt<=20.5').misses).toEqual([
      { constraint: 'timeBetweenTokensMs', label: 'TBT', value: 25, bound: 20.5, detail: 'TBT 25.0 ms > 20.5 ms' },
    ]);
    expect(judge(cell(), 'tbtP90<=39.9').misses[0]).toMatchObject({ label: 'TBT p90', value: 40, bound: 39.9 });
  });

  test('failed requests', () => {
    expect(judge(cell({}, { failedRequests: 3 }), 'errors<=1').misses).toEqual([
      { constraint: 'failedRequests', label: 'failed requests', value: 3, bound: 1, detail: 'failed requests 3 > 1' },
    ]);
  });

  test('goodput, and a cell without goodput misses it without a value', () => {
    expect(judge(cell({ goodput: goodputOf(85, 100) }), 'goodput>=90%').misses).toEqual([
      { constraint: 'goodput', label: 'goodput', value: 0.85, bound: 0.9, detail: 'goodput 85.0 % < 90.0 %' },
    ]);
    expect(judge(cell(), 'goodput>=90%').misses).toEqual([{ constraint: 'goodput', label: 'goodput', bound: 0.9, detail: 'goodput — < 90.0 %' }]);
  });

  test('a figure the cell lacks is a miss without a value, and it binds', () => {
    const noTtft = cell({}, { ttftMs: undefined, timeBetweenTokensMs: undefined, perRequestTokensPerSecond: undefined });
    const v = judge(noTtft, 'perRequestP10>=1,ttftP90<=1000000000');
    expect(v.misses).toEqual([
      { constraint: 'perRequestTokensPerSecond', label: 'per-request tok/s p10', bound: 1, detail: 'per-request tok/s p10 — < 1.0' },
      { constraint: 'ttftMs', label: 'TTFT p90', bound: 1_000_000_000, detail: 'TTFT p90 — > 1,000,000,000 ms' },
    ]);
    expect(v.binding).toBe(v.misses[0]);
    expect(judge(noTtft, 'tbt<=10').misses).toEqual([{ constraint: 'timeBetweenTokensMs', label: 'TBT', bound: 10, detail: 'TBT — > 10.0 ms' }]);
    expect(judge(noTtft, 'perRequest>=10').misses[0]).not.toHaveProperty('value');
  });

  test('misses are listed in a fixed order: per-request, TTFT, TBT, errors, goodput', () => {
    const v = judge(cell({ goodput: goodputOf(1, 2) }, { failedRequests: 1 }), 'goodput>=90%,errors=0,tbtP99<=10,ttftP99<=10,perRequest>=100');
    expect(v.meets).toBe(false);
    expect(v.misses.map((m) => m.constraint)).toEqual(['perRequestTokensPerSecond', 'ttftMs', 'timeBetweenTokensMs', 'failedRequests', 'goodput']);
  });
});

describe('sloVerdict: the binding miss', () => {
  const binding = (c: CellResult, slo: string): SloMiss | undefined => judge(c, slo).binding;

  test('the miss furthest past its bound, relative to the bound', () => {
    // TTFT p90 2340 vs 2000: 17 % past; per-request 40 vs 50: 20 % short → per-request binds
    expect(binding(cell(), 'perRequest>=50,ttftP90<=2000')?.constraint).toBe('perRequestTokensPerSecond');
    // per-request 40 vs 44: 9 % → TTFT binds
    expect(binding(cell(), 'perRequest>=44,ttftP90<=2000')?.constraint).toBe('ttftMs');
    // TBT p99 80 vs 40: 100 % past, TTFT 17 %
    expect(binding(cell(), 'ttftP90<=2000,tbtP99<=40')).toMatchObject({ constraint: 'timeBetweenTokensMs', value: 80, bound: 40 });
    // the order of the constraints does not matter
    expect(binding(cell(), 'tbtP99<=79,ttftP90<=2000')?.constraint).toBe('ttftMs');
  });

  test('minimums and maximums are weighed alike: a speed 10× short binds over a TTFT 2× over', () => {
    // per-request 40 vs 400: bound / value − 1 = 9; TTFT p90 2340 vs 1000: value / bound − 1 = 1.34
    expect(binding(cell(), 'perRequest>=400,ttftP90<=1000')?.constraint).toBe('perRequestTokensPerSecond');
    // TTFT p90 2340 vs 200: 10.7 past; per-request 40 vs 400: 9 → TTFT binds
    expect(binding(cell(), 'perRequest>=400,ttftP90<=200')?.constraint).toBe('ttftMs');
  });

  test('the binding miss is one of the misses, and there is one exactly when the cell misses', () => {
    const v = judge(cell(), 'perRequest>=50,ttftP90<=2000,tbtP99<=70');
    expect(v.misses).toHaveLength(3);
    expect(v.misses).toContain(v.binding);
    expect(judge(cell(), 'ttftP90<=5000')).not.toHaveProperty('binding');
  });

  test('failed requests over the allowance outrank a small relative miss', () => {
    expect(binding(cell({}, { failedRequests: 1 }), 'errors=0,ttftP90<=2000')?.constraint).toBe('failedRequests');
  });

  test('goodput binds by its relative shortfall', () => {
    // goodput 0.5 vs 0.9: 44 % short; TTFT 17 % past
    expect(binding(cell({ goodput: goodputOf(1, 2) }), 'goodput>=90%,ttftP90<=2000')?.constraint).toBe('goodput');
    // goodput 0.85 vs 0.9: 5.6 % short
    expect(binding(cell({ goodput: goodputOf(85, 100) }), 'goodput>=90%,ttftP90<=2000')?.constraint).toBe('ttftMs');
  });
});

describe('sloVerdict: cells without figures to judge', () => {
  test('over capacity binds as kvCapacity, the detail naming the numbers', () => {
    const over = cell({
      concurrency: 128,
      status: 'over-capacity',
      statuses: ['over-capacity'],
      evidence: { capacity: { requiredTokens: 1_572_864, kvCapacityTokens: 1_000_000 } },
      figures: undefined,
    });
    const v = judge(over, 'ttftP90<=2000');
    const miss: SloMiss = {
      constraint: 'kvCapacity',
      label: 'KV capacity',
      detail: '128 would not fit: 128 × (8,192 + max output) = 1,572,864 tokens > KV capacity 1,000,000',
    };
    expect(v).toEqual({ meets: false, misses: [miss], binding: miss });
  });

  test('over capacity without the numbers, and even with figures, is judged kvCapacity only', () => {
    const v = judge(cell({ status: 'over-capacity', statuses: ['over-capacity'] }), 'ttftP90<=2000,perRequest>=50');
    expect(v.misses).toEqual([{ constraint: 'kvCapacity', label: 'KV capacity', detail: '48 would not fit in the KV cache' }]);
    expect(v.binding?.constraint).toBe('kvCapacity');
  });

  test('not run: unmeasured', () => {
    const notRun = cell({ status: 'not-run', statuses: ['not-run'], figures: undefined });
    expect(judge(notRun, 'perRequest>=1')).toEqual({
      meets: false,
      misses: [{ constraint: 'unmeasured', label: 'not measured', detail: '8K/48 has no figures (not-run)' }],
      binding: { constraint: 'unmeasured', label: 'not measured', detail: '8K/48 has no figures (not-run)' },
    });
    // a not-run cell with leftover figures is still unmeasured
    expect(judge(cell({ status: 'not-run', statuses: ['not-run'] }), 'perRequest>=1').misses[0]!.constraint).toBe('unmeasured');
  });

  test('no figures (e.g. warm-up timed out): unmeasured, naming the status', () => {
    const v = judge(cell({ status: 'warmup-timed-out', statuses: ['warmup-timed-out'], figures: undefined }), 'ttft<=99999');
    expect(v.misses).toEqual([{ constraint: 'unmeasured', label: 'not measured', detail: '8K/48 has no figures (warmup-timed-out)' }]);
  });

  test('Client-limited: unmeasured, even when its figures would meet', () => {
    const limited = cell({ status: 'client-limited', statuses: ['client-limited'] });
    const v = judge(limited, 'perRequest>=1');
    expect(v.meets).toBe(false);
    expect(v.misses).toEqual([{ constraint: 'unmeasured', label: 'Client-limited', detail: '8K/48 is Client-limited: its figures may be wrong' }]);
    expect(v.binding).toEqual(v.misses[0]);
  });
});
