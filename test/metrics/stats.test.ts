import { describe, expect, it } from 'vitest';
import { distribution, mean, median, quantile } from '../../src/metrics/stats.js';

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
