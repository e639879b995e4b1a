/**
 * The sampling spread of a median over a rate cell's requests (src/judge/median-interval.ts): read
 * from each run's median, p90, p99 and sample count; it widens the comparison of two medians, so
 * an unchanged server whose requests came alone or in pairs is within noise, and a slower one is
 * still caught.
 */
import { describe, expect, test } from 'vitest';
import { MAX_MEDIAN_SPREAD, medianHalfWidth, medianSamplingSpread } from '../../src/judge/median-interval.js';
import { compareFigure } from '../../src/judge/compare-figure.js';

type Dist = { median: number; p90: number; p99: number; samples: number };
/** the rate cells' time-between-tokens tolerance (5 %, at least 0.5 ms) */
const TBT = { relative: 0.05, absolute: 0.5 };
/** the verdict on two runs' median time between tokens, with the sampling spread */
const tbtVerdict = (base: Dist, next: Dist) =>
  compareFigure({ label: '0@2/s', figure: 'tbtMs', base: base.median, next: next.median, tolerance: TBT, spread: medianSamplingSpread(base, next), nextPresent: true }).verdict;

describe('medianHalfWidth and medianSamplingSpread', () => {
  test('the quantile 0.5 + 0.98/√n, between the median and p90 (p90 and p99 under 7 samples)', () => {
    // 25 samples: 0.5 + 0.196, half of the way to p90
    expect(medianHalfWidth({ median: 10, p90: 14, p99: 20, samples: 25 })).toBeCloseTo(4 * (0.196 / 0.4), 9);
    // 100 samples: a quarter of the way
    expect(medianHalfWidth({ median: 10, p90: 14, p99: 20, samples: 100 })).toBeCloseTo(4 * (0.098 / 0.4), 9);
    // 4 samples: 0.5 + 0.49, past p90 by (0.49 − 0.4) / 0.09 of the way to p99, capped there
    expect(medianHalfWidth({ median: 10, p90: 14, p99: 20, samples: 4 })).toBeCloseTo(4 + 6, 9);
    expect(medianHalfWidth({ median: 10, p90: 14, p99: 20, samples: 6 })).toBeCloseTo(4 + 6 * ((0.98 / Math.sqrt(6) - 0.4) / 0.09), 9);
    // a tight distribution has no spread to read; no samples, none either
    expect(medianHalfWidth({ median: 10, p90: 10, p99: 10, samples: 30 })).toBe(0);
    expect(medianHalfWidth({ median: 10, p90: 14, p99: 20, samples: 0 })).toBe(0);
    expect(medianSamplingSpread({ median: 10, p90: 14, p99: 20, samples: 25 }, undefined)).toBe(0);
  });

  test('a real llama.cpp at 2 req/s, one schedule, an unchanged server: 1.25 then 1.89 ms between tokens is within noise; twice as slow is not', () => {
    const base = { median: 1.248, p90: 3.511, p99: 4.085, samples: 14 };
    const next = { median: 1.892, p90: 3.489, p99: 4.502, samples: 14 };
    // √2 × 2.263 × (0.262 / 0.4) / 1.248 = 168 %, capped at 50 %
    expect(medianSamplingSpread(base, next)).toBe(MAX_MEDIAN_SPREAD);
    expect(compareFigure({ label: '256@2/s', figure: 'tbtMs', base: base.median, next: next.median, tolerance: TBT, spread: 0, nextPresent: true }).verdict).toBe('regressed');
    expect(tbtVerdict(base, next)).toBe('within-noise');
    // every request twice as slow: the new run's wider distribution does not widen the allowance
    expect(tbtVerdict(base, { median: 2 * base.median, p90: 2 * base.p90, p99: 2 * base.p99, samples: 14 })).toBe('regressed');
  });

  test('a slower server whose distribution widens is caught: 30 requests, median 10 → 13 ms, p90 12 → 20', () => {
    const base = { median: 10, p90: 12, p99: 15, samples: 30 };
    // the baseline's half-width only: √2 × 2 × (0.179 / 0.4) / 10 = 12.7 %
    expect(medianSamplingSpread(base, base)).toBeCloseTo((Math.SQRT2 * 2 * (0.98 / Math.sqrt(30) / 0.4)) / 10, 9);
    expect(tbtVerdict(base, { median: 13, p90: 20, p99: 26, samples: 30 })).toBe('regressed');
  });

  test('a narrow distribution keeps a narrow gate: 60 requests, p90 5 % over the median, and steps 60 % slower still fail', () => {
    const base = { median: 10, p90: 10.5, p99: 11, samples: 60 };
    // √2 × 0.5 ms to p90, a third of the way (0.98/√60 = 0.127 of 0.4): 2.2 % of the baseline's 10 ms
    expect(medianSamplingSpread(base, base)).toBeCloseTo((Math.SQRT2 * 0.5 * (0.98 / Math.sqrt(60) / 0.4)) / 10, 9);
    expect(tbtVerdict(base, { median: 16, p90: 16.8, p99: 17.6, samples: 60 })).toBe('regressed');
  });
});
