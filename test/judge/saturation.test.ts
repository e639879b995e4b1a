/**
 * The Saturated decision on queues whose truth is known: Poisson arrivals to c servers, each
 * serving one request in 1/μ₁ s (M/D/c: a forced output length makes an engine's service time
 * nearly fixed), simulated event by event, offered 0.8 and 1.2 times the service limit c·μ₁, at
 * three limits. Stable queues are called Valid, overloaded ones Saturated, in ≥ 19 of 20 seeds.
 * With exponential service (M/M/c) and a small limit, a 60 s window does not hold the evidence:
 * the queue's noise over the window is as large as its drift; the last case shows the detector
 * then stays silent rather than guessing.
 */
import { describe, expect, test } from 'vitest';
import { blockMeans, judgeSaturation } from '../../src/judge/saturation.js';
import { mulberry32 } from '../../src/random.js';
import { mannKendall, normalCdf, senSlope } from '../../src/metrics/trend.js';

/** [arrival, departure] of every request of an M/D/c (or M/M/c) queue over `totalMs`, first-come first-served. */
function queue(rate: number, servers: number, perServer: number, totalMs: number, seed: number, service: 'fixed' | 'exponential' = 'fixed'): Array<[number, number]> {
  const u = mulberry32(seed);
  const exp = (r: number) => (-Math.log(1 - u()) / r) * 1000;
  const free = new Array<number>(servers).fill(0); // when each server is next free
  const out: Array<[number, number]> = [];
  for (let t = exp(rate); t < totalMs; t += exp(rate)) {
    let k = 0;
    for (let i = 1; i < servers; i++) if (free[i]! < free[k]!) k = i;
    const start = Math.max(t, free[k]!);
    free[k] = start + (service === 'fixed' ? 1000 / perServer : exp(perServer));
    out.push([t, free[k]!]);
  }
  return out;
}

describe('trend statistics', () => {
  test('Φ, Mann–Kendall and Sen agree with hand values', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(normalCdf(-2.326348)).toBeCloseTo(0.01, 6);
    const up = mannKendall([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(up.s).toBe(45);
    expect(up.pIncreasing).toBeLessThan(1e-4);
    expect(mannKendall([5, 5, 5, 5]).pIncreasing).toBeCloseTo(0.5, 6);
    expect(mannKendall([10, 9, 8, 7, 6]).pIncreasing).toBeGreaterThan(0.95);
    expect(senSlope([0, 1, 2, 3, 4], [0, 2, 4, 6, 100])).toBe(2);
  });

  test('block means are time-weighted', () => {
    // one request over the whole first half, two over the last quarter
    const means = blockMeans([[0, 500], [750, 1000], [750, 2000]], 0, 1000, 4);
    expect(means).toEqual([1, 1, 0, 2]);
  });
});

describe('Saturated against a queue of known service limit', () => {
  const windowMs = 60_000;
  const warmMs = 30_000; // the queue settles before the window (the ramp's role in a rate cell)
  // The evidence grows with the arrivals in the window, λW: at 1.2 × the limit the queue climbs
  // 0.2 λW while Poisson arrivals alone wander √(λW). Below about 400 arrivals a window cannot
  // tell 1.2 × from a lucky stable stretch, so the 2/s limit gets a 4-minute window.
  const limits: Array<[number, number, number]> = [
    [4, 0.5, 240_000], // 4 servers × 0.5/s: limit 2 requests/s
    [16, 0.5, 60_000], // 8/s
    [32, 1, 60_000], // 32/s
  ];
  test.each(limits)('c = %i, μ₁ = %s, window %i ms: 0.8 × the limit is Valid and 1.2 × is Saturated in ≥ 19 of 20 seeds', (c, mu1, windowMs) => {
    const limit = c * mu1;
    const calls = { stable: 0, overloaded: 0 };
    for (let seed = 1; seed <= 20; seed++) {
      for (const [load, key] of [[0.8, 'stable'], [1.2, 'overloaded']] as const) {
        const reqs = queue(load * limit, c, mu1, warmMs + windowMs, seed * 7 + (key === 'stable' ? 0 : 1));
        const verdict = judgeSaturation(blockMeans(reqs, warmMs, warmMs + windowMs), windowMs);
        if (verdict.saturated === (key === 'overloaded')) calls[key]++;
      }
    }
    expect(calls.stable, 'stable queues called Valid').toBeGreaterThanOrEqual(19);
    expect(calls.overloaded, 'overloaded queues called Saturated').toBeGreaterThanOrEqual(19);
  });

  test('M/M/c at a limit of 2/s: no stable queue is called Saturated (the overloaded ones mostly are)', () => {
    let falseCalls = 0;
    let found = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const stable = queue(1.6, 4, 0.5, warmMs + windowMs, seed, 'exponential');
      if (judgeSaturation(blockMeans(stable, warmMs, warmMs + windowMs), windowMs).saturated) falseCalls++;
      const over = queue(2.4, 4, 0.5, warmMs + windowMs, seed + 100, 'exponential');
      if (judgeSaturation(blockMeans(over, warmMs, warmMs + windowMs), windowMs).saturated) found++;
    }
    expect(falseCalls).toBeLessThanOrEqual(1);
    expect(found).toBeGreaterThanOrEqual(14);
  });
});
