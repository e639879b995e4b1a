/**
 * Seeded draws of a LengthDistribution (src/shapes/workload.ts): the prompt and output lengths of
 * a `lengths` workload, the think times of a multi-turn one. A stream of draws is named (e.g.
 * "in", "out", "think/3"), and request i of that stream always gets the same value for the same
 * distribution, seed and name, whatever order the requests ask in, so two runs send the same
 * lengths. Each stream is one mulberry32 (src/random.ts) seeded by FNV-1a of the seed and the
 * name; values are drawn in index order and kept, so asking for i costs at most the draws up to i
 * once.
 *
 * How each kind is drawn (the rules distributionCdf states, which the KS tests check):
 *   - fixed: the value;
 *   - uniform: every whole number min … max equally likely;
 *   - normal: Box–Muller (one normal from two uniforms), mean + sd·z rounded to the nearest whole
 *     number (halves up), then clamped to min … max (the clamped tails pile up on the bounds);
 *   - histogram: a bin with probability weight / Σ weights, then uniform over its whole numbers.
 */
import { distributionMean, type LengthDistribution } from '../shapes/workload.js';
import { fnv1a, mulberry32 } from '../random.js';
import { normalCdf } from '../metrics/distributions.js';

/** One draw of `d` from the uniform source `u` (floats in [0, 1)). */
export function drawLength(d: LengthDistribution, u: () => number): number {
  switch (d.kind) {
    case 'fixed':
      return d.value;
    case 'uniform':
      return d.min + Math.floor(u() * (d.max - d.min + 1));
    case 'normal': {
      // 1 − u is in (0, 1], so the logarithm is finite
      const z = Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
      return Math.min(d.max, Math.max(d.min, Math.round(d.mean + d.sd * z)));
    }
    case 'histogram': {
      const total = d.bins.reduce((s, b) => s + b.weight, 0);
      let pick = u() * total;
      const bin = d.bins.find((b) => (pick -= b.weight) < 0) ?? d.bins[d.bins.length - 1]!;
      return bin.min + Math.floor(u() * (bin.max - bin.min + 1));
    }
  }
}

/** The seed of a named stream: FNV-1a of the name, started from the workload's seed. */
export function streamSeed(seed: number, name: string): number {
  return fnv1a(name, 0, name.length, (0x811c9dc5 ^ seed) >>> 0);
}

/**
 * The draws of stream `name`: `(i) => value` for request index i (0-based), deterministic for
 * (d, seed, name) and memoised in order.
 */
export function lengthDraws(d: LengthDistribution, seed: number, name: string): (i: number) => number {
  if (d.kind === 'fixed') return () => d.value;
  const u = mulberry32(streamSeed(seed, name));
  const values: number[] = [];
  return (i) => {
    if (!Number.isSafeInteger(i) || i < 0) throw new RangeError(`request index ${i} is not a whole number ≥ 0`);
    while (values.length <= i) values.push(drawLength(d, u));
    return values[i]!;
  };
}

/** P(X ≤ k) for a whole number k: the distribution the draws follow, for a KS test (metrics/distributions.ts ksTestDiscrete). */
export function distributionCdf(d: LengthDistribution): (k: number) => number {
  const uniformCdf = (min: number, max: number) => (k: number) => (k < min ? 0 : k >= max ? 1 : (Math.floor(k) - min + 1) / (max - min + 1));
  switch (d.kind) {
    case 'fixed':
      return (k) => (k >= d.value ? 1 : 0);
    case 'uniform':
      return uniformCdf(d.min, d.max);
    case 'normal': {
      // round(y) ≤ k ⇔ y < k + 0.5; the clamps put the tails' mass on min and max
      const phi = normalCdf(d.mean, d.sd);
      return (k) => (k < d.min ? 0 : k >= d.max ? 1 : phi(Math.floor(k) + 0.5));
    }
    case 'histogram': {
      const total = d.bins.reduce((s, b) => s + b.weight, 0);
      const parts = d.bins.map((b) => ({ share: b.weight / total, cdf: uniformCdf(b.min, b.max) }));
      return (k) => parts.reduce((s, p) => s + p.share * p.cdf(k), 0);
    }
  }
}

/**
 * The exact mean of the draws (the normal's after rounding and clamping, summed over its support
 * when that is small enough, else its unclamped mean); `distributionMean` in shapes is the nominal one.
 */
export function drawnMean(d: LengthDistribution): number {
  if (d.kind !== 'normal' || d.max - d.min > 1_000_000) return distributionMean(d);
  const cdf = distributionCdf(d);
  let mean = 0;
  for (let k = d.min; k <= d.max; k++) mean += k * (cdf(k) - cdf(k - 1));
  return mean;
}
