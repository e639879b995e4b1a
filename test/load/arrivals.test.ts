/**
 * The arrival schedule follows its process (issue 22): Kolmogorov–Smirnov on the gaps at p > 0.01
 * over ≥ 500 arrivals for poisson and gamma, constant within 1 ms; the ramp stays before the window;
 * a mismatched process is rejected by the same test (so the test has teeth).
 */
import { describe, expect, test } from 'vitest';
import { arrivalSchedule, gammaDraw, type Arrival } from '../../src/load/arrivals.js';
import { exponentialCdf, gammaCdf, gammaP, ksTest, lnGamma } from '../../src/metrics/distributions.js';
import { mulberry32 } from '../../src/random.js';
import { arrivalText, parseArrival } from '../../src/shapes/arrival.js';

function gapsS(atMs: ArrayLike<number>, from = 0): number[] {
  const out: number[] = [];
  for (let i = from + 1; i < atMs.length; i++) out.push((atMs[i]! - atMs[i - 1]!) / 1000);
  return out;
}

describe('distributions', () => {
  test('ln Γ and P(a, x) agree with known values', () => {
    expect(lnGamma(1)).toBeCloseTo(0, 12);
    expect(lnGamma(5)).toBeCloseTo(Math.log(24), 12);
    expect(lnGamma(0.5)).toBeCloseTo(Math.log(Math.sqrt(Math.PI)), 12);
    // P(1, x) is the exponential CDF; P(a, a) near 1/2 for large a
    expect(gammaP(1, 2)).toBeCloseTo(1 - Math.exp(-2), 12);
    expect(gammaP(3, 2.5)).toBeCloseTo(0.456186884, 8);
    expect(gammaP(0.5, 0.3)).toBeCloseTo(0.5614219739, 9); // erf(√0.3)
    expect(gammaP(10, 15)).toBeCloseTo(0.930146339, 8);
  });
});

describe('arrival schedules', () => {
  const windowMs = 600_000;
  const cases: Array<[string, Arrival, number, (rate: number) => (x: number) => number]> = [
    ['poisson', { kind: 'poisson' }, 2, (r) => exponentialCdf(1 / r)],
    ['gamma b=0.5 (bursty)', { kind: 'gamma', burstiness: 0.5 }, 4, (r) => gammaCdf(0.5, 1 / (r * 0.5))],
    ['gamma b=4 (smooth)', { kind: 'gamma', burstiness: 4 }, 1, (r) => gammaCdf(4, 1 / (r * 4))],
  ];
  // A right process fails the test at p < 0.01 once in 100 schedules: over 20 seeds, 3 or more
  // failures has probability 0.001, so the test allows 2.
  test.each(cases)('%s: gaps pass Kolmogorov–Smirnov at p > 0.01 over ≥ 500 arrivals (18 of 20 seeds or more)', (_, process, rate, cdf) => {
    const failed: string[] = [];
    for (let seed = 1; seed <= 20; seed++) {
      const s = arrivalSchedule({ rate, process, seed, windowMs });
      expect(s.atMs.length).toBeGreaterThanOrEqual(500);
      const ks = ksTest(gapsS(s.atMs), cdf(rate));
      if (ks.p <= 0.01) failed.push(`seed ${seed}: D = ${ks.d.toFixed(4)}, p = ${ks.p.toFixed(4)}`);
      // the count is the rate's, within 5 standard deviations (gaps of CV 1/√b)
      const expected = (rate * windowMs) / 1000;
      const cv = process.kind === 'gamma' ? 1 / Math.sqrt(process.burstiness) : 1;
      expect(Math.abs(s.atMs.length - expected)).toBeLessThan(5 * Math.sqrt(expected) * cv);
    }
    expect(failed.length, failed.join('; ')).toBeLessThanOrEqual(2);
  });

  test('the test has teeth: Poisson gaps are refused as gamma b=0.25, and as a rate 20 % off', () => {
    const s = arrivalSchedule({ rate: 2, process: { kind: 'poisson' }, seed: 9, windowMs });
    expect(ksTest(gapsS(s.atMs), gammaCdf(0.25, 1 / (2 * 0.25))).p).toBeLessThan(0.01);
    expect(ksTest(gapsS(s.atMs), exponentialCdf(1 / 2.4)).p).toBeLessThan(0.01);
  });

  test('constant: every gap is 1 / rate within 1 ms, the first at the window start', () => {
    const s = arrivalSchedule({ rate: 100, process: { kind: 'constant' }, seed: 1, windowMs: 30_000 });
    expect(s.atMs.length).toBe(3000);
    expect(s.atMs[0]).toBe(0);
    for (const g of gapsS(s.atMs)) expect(Math.abs(g * 1000 - 10)).toBeLessThan(1);
  });

  test('the same seed gives the same schedule; another seed another', () => {
    const a = arrivalSchedule({ rate: 3, process: { kind: 'poisson' }, seed: 42, windowMs: 10_000 });
    const b = arrivalSchedule({ rate: 3, process: { kind: 'poisson' }, seed: 42, windowMs: 10_000 });
    const c = arrivalSchedule({ rate: 3, process: { kind: 'poisson' }, seed: 43, windowMs: 10_000 });
    expect(Array.from(a.atMs)).toEqual(Array.from(b.atMs));
    expect(Array.from(a.atMs)).not.toEqual(Array.from(c.atMs));
  });

  test('a ramp comes before the window, climbing linearly: half the ramp holds a quarter of its arrivals', () => {
    const rampMs = 200_000;
    const s = arrivalSchedule({ rate: 5, process: { kind: 'poisson' }, seed: 5, windowMs: 100_000, rampMs });
    expect(s.windowStartMs).toBe(rampMs);
    const inRamp = s.firstInWindow;
    expect(Math.abs(inRamp - 500) / 500).toBeLessThan(0.15); // ∫ rate · t / ramp = rate · ramp / 2 = 500
    const firstHalf = Array.from(s.atMs).filter((t) => t < rampMs / 2).length;
    expect(firstHalf / inRamp).toBeGreaterThan(0.18);
    expect(firstHalf / inRamp).toBeLessThan(0.32);
    expect(s.atMs[s.firstInWindow]!).toBeGreaterThanOrEqual(rampMs);
    expect(s.atMs[s.firstInWindow - 1]!).toBeLessThan(rampMs);
    // the window's own arrivals are the plain process at the full rate
    expect(ksTest(gapsS(s.atMs, s.firstInWindow), exponentialCdf(1 / 5)).p).toBeGreaterThan(0.01);
  });

  test('gamma draws have mean shape and variance shape (shape below and above 1)', () => {
    for (const shape of [0.3, 1, 2.5, 9]) {
      const u = mulberry32(7);
      const xs = Array.from({ length: 20_000 }, () => gammaDraw(shape, u));
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
      expect(Math.abs(mean - shape) / shape).toBeLessThan(0.05);
      expect(Math.abs(variance - shape) / shape).toBeLessThan(0.1);
    }
  });
});

describe('arrival process text', () => {
  test('poisson, constant and gamma:B parse and print back', () => {
    for (const t of ['poisson', 'constant', 'gamma:0.5', 'gamma:4']) {
      const a = parseArrival(t);
      expect('error' in a).toBe(false);
      expect(arrivalText(a as Exclude<typeof a, { error: string }>)).toBe(t);
    }
    expect(parseArrival(' Gamma : 2 ')).toEqual({ kind: 'gamma', burstiness: 2 });
  });
  test('bad processes are refused with the fix', () => {
    expect(parseArrival('uniform')).toEqual({ error: expect.stringMatching(/"uniform" is not an arrival process: use poisson .* gamma:B/) });
    expect(parseArrival('gamma')).toEqual({ error: expect.stringMatching(/gamma needs a burstiness/) });
    expect(parseArrival('gamma:0')).toEqual({ error: expect.stringMatching(/burstiness must be a number above 0, got "0"/) });
    expect(parseArrival('gamma:-1')).toEqual({ error: expect.stringMatching(/above 0, got "-1"/) });
    expect(parseArrival('gamma:x')).toEqual({ error: expect.stringMatching(/got "x"/) });
  });
});
