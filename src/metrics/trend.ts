/**
 * Trend statistics for the open-loop Saturated status (judge/saturation.ts): the Mann–Kendall
 * test (non-parametric: no assumption on how the values are distributed) and Sen's slope.
 */

/** Φ, the standard normal CDF (Abramowitz–Stegun 7.1.26 through erf; |error| < 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

export interface MannKendall {
  /** S = Σ sign(x_j − x_i) over i < j */
  s: number;
  /** its variance under no trend, corrected for ties */
  variance: number;
  /** the continuity-corrected z score */
  z: number;
  /** one-sided p-value of an increasing trend */
  pIncreasing: number;
}

/** The Mann–Kendall trend test of a series (in order). */
export function mannKendall(values: readonly number[]): MannKendall {
  const n = values.length;
  let s = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) s += Math.sign(values[j]! - values[i]!);
  const ties = new Map<number, number>();
  for (const v of values) ties.set(v, (ties.get(v) ?? 0) + 1);
  let tieTerm = 0;
  for (const t of ties.values()) tieTerm += t * (t - 1) * (2 * t + 5);
  const variance = (n * (n - 1) * (2 * n + 5) - tieTerm) / 18;
  const z = variance <= 0 ? 0 : s > 0 ? (s - 1) / Math.sqrt(variance) : s < 0 ? (s + 1) / Math.sqrt(variance) : 0;
  return { s, variance, z, pIncreasing: 1 - normalCdf(z) };
}

/** Sen's slope: the median of the pairwise slopes (y_j − y_i) / (x_j − x_i). */
export function senSlope(xs: readonly number[], ys: readonly number[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < xs.length; i++) {
    for (let j = i + 1; j < xs.length; j++) if (xs[j] !== xs[i]) slopes.push((ys[j]! - ys[i]!) / (xs[j]! - xs[i]!));
  }
  if (slopes.length === 0) return 0;
  slopes.sort((a, b) => a - b);
  const m = slopes.length >> 1;
  return slopes.length % 2 === 1 ? slopes[m]! : (slopes[m - 1]! + slopes[m]!) / 2;
}
