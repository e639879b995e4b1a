/**
 * Length draws (issue 23 "Lengths"): seeded, the same for the same stream whatever order it is
 * asked in, and following the configured distribution: over 2,000 draws the mean within 2 % and a
 * Kolmogorov–Smirnov test at p > 0.01 for uniform, normal and histogram; the same test rejects
 * draws compared with a neighbouring distribution, so it can fail.
 */
import { describe, expect, test } from 'vitest';
import { distributionCdf, drawnMean, lengthDraws } from '../../src/workload/draw.js';
import { ksTestDiscrete, normalCdf } from '../../src/metrics/distributions.js';
import { distributionMean, type LengthDistribution } from '../../src/shapes/workload.js';

const N = 2000;
const sample = (d: LengthDistribution, seed = 1, name = 'in') => {
  const draw = lengthDraws(d, seed, name);
  return Array.from({ length: N }, (_, i) => draw(i));
};
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

const cases: Array<[string, LengthDistribution, LengthDistribution]> = [
  // [name, distribution, a neighbour the draws must NOT pass as]
  ['uniform(128,512)', { kind: 'uniform', min: 128, max: 512 }, { kind: 'uniform', min: 140, max: 512 }],
  ['normal(1024,256)', { kind: 'normal', mean: 1024, sd: 256, min: 1, max: 2048 }, { kind: 'normal', mean: 1060, sd: 256, min: 1, max: 2048 }],
  ['normal(300,200,200,600) (clamped hard)', { kind: 'normal', mean: 300, sd: 200, min: 200, max: 600 }, { kind: 'normal', mean: 300, sd: 200, min: 220, max: 600 }],
  [
    'hist(900-1000:3;1100-1300:1)',
    { kind: 'histogram', bins: [{ min: 900, max: 1000, weight: 3 }, { min: 1100, max: 1300, weight: 1 }] },
    { kind: 'histogram', bins: [{ min: 900, max: 1000, weight: 2 }, { min: 1100, max: 1300, weight: 1 }] },
  ],
];

describe('the draws follow their distribution (2,000 draws)', () => {
  test.each(cases)('%s: mean within 2 %, KS p > 0.01, and not its neighbour', (_, d, neighbour) => {
    const xs = sample(d);
    expect(xs.every((x) => Number.isInteger(x))).toBe(true);
    expect(Math.abs(mean(xs) - drawnMean(d)) / drawnMean(d)).toBeLessThan(0.02);
    const ks = ksTestDiscrete(xs, distributionCdf(d));
    expect(ks.n).toBe(N);
    expect(ks.p).toBeGreaterThan(0.01);
    expect(ksTestDiscrete(xs, distributionCdf(neighbour)).p).toBeLessThan(0.01);
  });

  test('the unclamped normal: its mean is the nominal one, within 2 %', () => {
    const d: LengthDistribution = { kind: 'normal', mean: 1024, sd: 256, min: 1, max: 2048 };
    expect(Math.abs(mean(sample(d)) - distributionMean(d)) / distributionMean(d)).toBeLessThan(0.02);
    expect(Math.abs(drawnMean(d) - 1024)).toBeLessThan(0.01);
  });

  test('values stay inside the bounds; the hard-clamped normal piles its tail on the lower bound', () => {
    const xs = sample({ kind: 'normal', mean: 300, sd: 200, min: 200, max: 600 });
    expect(Math.min(...xs)).toBe(200);
    expect(Math.max(...xs)).toBeLessThanOrEqual(600);
    // P(round(y) ≤ 200) = Φ((200.5 − 300) / 200) ≈ 0.31
    expect(xs.filter((x) => x === 200).length / N).toBeCloseTo(normalCdf(300, 200)(200.5), 1);
  });

  test('fixed is its value every time', () => {
    expect(new Set(sample({ kind: 'fixed', value: 256 }))).toEqual(new Set([256]));
  });
});

describe('determinism', () => {
  const d: LengthDistribution = { kind: 'uniform', min: 1, max: 1_000_000 };
  test('the same distribution, seed and name give the same draws; another seed or name others', () => {
    expect(sample(d)).toEqual(sample(d));
    expect(sample(d, 2)).not.toEqual(sample(d));
    expect(sample(d, 1, 'out')).not.toEqual(sample(d));
  });

  test('request i gets the same value whatever order the requests ask in', () => {
    const inOrder = sample(d);
    const draw = lengthDraws(d, 1, 'in');
    for (const i of [1999, 5, 0, 1000, 5]) expect(draw(i)).toBe(inOrder[i]);
  });

  test('a request index must be a whole number ≥ 0', () => {
    expect(() => lengthDraws(d, 1, 'in')(-1)).toThrow('request index -1');
  });
});

describe('the discrete KS test', () => {
  test('ties are not a jump: a sample exactly on a few values passes against its own distribution', () => {
    const xs = Array.from({ length: 1000 }, (_, i) => 1 + (i % 4));
    const ks = ksTestDiscrete(xs, distributionCdf({ kind: 'uniform', min: 1, max: 4 }));
    expect(ks.d).toBeCloseTo(0, 12);
    expect(ks.p).toBe(1);
  });

  test('Φ: 0.5 at the mean, 0.975 at 1.96 sd, a step for sd 0', () => {
    expect(normalCdf(10, 2)(10)).toBeCloseTo(0.5, 12);
    expect(normalCdf(0, 1)(1.96)).toBeCloseTo(0.975002, 5);
    expect(normalCdf(0, 1)(-1.96)).toBeCloseTo(0.024998, 5);
    expect([normalCdf(5, 0)(4.9), normalCdf(5, 0)(5)]).toEqual([0, 1]);
  });
});
