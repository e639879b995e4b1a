import { describe, expect, it, test } from 'vitest';
import { countedDistribution, distribution, mean, median, quantile } from '../../src/metrics/stats.js';

describe('quantile (type 7: linear between closest ranks)', () => {
  it('gives exact values', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([1, 2, 3, 4], 0.9)).toBeCloseTo(3.7, 12);
    expect(quantile([1, 2, 3, 4], 0)).toBe(1);
    expect(quantile([1, 2, 3, 4], 1)).toBe(4);
    expect(quantile([10, 20, 30], 0.25)).toBe(15);
  });
  it('handles one sample and no sample', () => {
    expect(quantile([7], 0.99)).toBe(7);
    expect(quantile([], 0.5)).toBeUndefined();
  });
  it('rejects q outside [0, 1]', () => {
    expect(() => quantile([1], 1.5)).toThrow(RangeError);
    expect(() => quantile([1], Number.NaN)).toThrow(RangeError);
  });
});

describe('median / mean', () => {
  it('sorts a copy and leaves the input alone', () => {
    const v = [3, 1, 2];
    expect(median(v)).toBe(2);
    expect(v).toEqual([3, 1, 2]);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
  it('is undefined for empty input and skips non-finite values', () => {
    expect(median([])).toBeUndefined();
    expect(mean([])).toBeUndefined();
    expect(mean([1, 2, 3, 4])).toBe(2.5);
    expect(mean([Number.NaN, 2, Infinity])).toBe(2);
    expect(median([Number.NaN])).toBeUndefined();
  });
});

describe('distribution', () => {
  it('gives median, p90, p99 and the count', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted
    const d = distribution(values)!;
    expect(d.samples).toBe(100);
    expect(d.median).toBe(50.5);
    expect(d.p90).toBeCloseTo(90.1, 10);
    expect(d.p99).toBeCloseTo(99.01, 10);
  });
  it('is undefined for empty input; one sample gives that sample everywhere', () => {
    expect(distribution([])).toBeUndefined();
    expect(distribution([5])).toEqual({ median: 5, p90: 5, p99: 5, samples: 1 });
  });
});

describe('countedDistribution', () => {
  test('the same quantiles as distribution over the samples the counts stand for', () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (const n of [1, 2, 3, 10, 101, 5000]) {
      const values = Array.from({ length: n }, () => 1 + Math.floor(rnd() * rnd() * 40));
      const counts = new Map<number, number>();
      for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
      const want = distribution(values)!;
      const got = countedDistribution(counts)!;
      expect(got.samples).toBe(want.samples);
      for (const k of ['median', 'p90', 'p99'] as const) expect(got[k]).toBeCloseTo(want[k], 9);
    }
    expect(countedDistribution(new Map())).toBeUndefined();
    expect(countedDistribution(new Map([[3, 0], [NaN, 4]]))).toBeUndefined();
  });
});
