/**
 * Distributions and the one-sample Kolmogorov–Smirnov test, for checking that requests arrived as
 * the chosen arrival process says (load/arrivals.ts; issue 22 "Arrivals match the process") and
 * that a workload's lengths follow their distribution (workload/draw.ts; issue 23), whose values
 * are whole numbers (ksTestDiscrete).
 * Pure numerics, no package: ln Γ by Lanczos (g = 7, 9 terms), the regularized lower incomplete
 * gamma P(a, x) by its series below a + 1 and its continued fraction above (the classic split),
 * the Kolmogorov distribution's tail by its alternating series, and Φ through erf(z) = P(1/2, z²).
 */

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(x) for x > 0. */
export function lnGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The regularized lower incomplete gamma function P(a, x), a > 0, x ≥ 0. */
export function gammaP(a: number, x: number): number {
  if (x <= 0) return 0;
  const lead = a * Math.log(x) - x - lnGamma(a);
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n < 1000; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-15) break;
    }
    return sum * Math.exp(lead);
  }
  // Lentz's continued fraction for Q(a, x)
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return 1 - Math.exp(lead) * h;
}

/** CDF of the exponential distribution of the given mean. */
export function exponentialCdf(mean: number): (x: number) => number {
  return (x) => (x <= 0 ? 0 : 1 - Math.exp(-x / mean));
}

/** CDF of Gamma(shape, scale). */
export function gammaCdf(shape: number, scale: number): (x: number) => number {
  return (x) => gammaP(shape, x / scale);
}

/** P(K > λ) for the Kolmogorov distribution: 2 Σ (−1)^(k−1) e^(−2 k² λ²). */
export function kolmogorovTail(lambda: number): number {
  if (lambda < 0.2) return 1;
  let sum = 0;
  for (let k = 1; k <= 100; k++) {
    const term = Math.exp(-2 * k * k * lambda * lambda);
    sum += k % 2 === 1 ? term : -term;
    if (term < 1e-12) break;
  }
  return Math.min(1, Math.max(0, 2 * sum));
}

export interface KsResult {
  /** the largest distance between the sample's CDF and the reference's */
  d: number;
  /** p-value (asymptotic, with Stephens' small-sample correction of λ) */
  p: number;
  n: number;
}

/** One-sample Kolmogorov–Smirnov test of `sample` against a continuous CDF. */
export function ksTest(sample: ArrayLike<number>, cdf: (x: number) => number): KsResult {
  const xs = Array.from(sample).sort((a, b) => a - b);
  const n = xs.length;
  if (n === 0) return { d: 0, p: 1, n: 0 };
  let d = 0;
  for (let i = 0; i < n; i++) {
    const f = cdf(xs[i]!);
    d = Math.max(d, (i + 1) / n - f, f - i / n);
  }
  const sn = Math.sqrt(n);
  return { d, p: kolmogorovTail((sn + 0.12 + 0.11 / sn) * d), n };
}

/** CDF of the normal distribution: Φ((x − mean) / sd), by erf(z) = P(1/2, z²). sd 0: a step at the mean. */
export function normalCdf(mean: number, sd: number): (x: number) => number {
  return (x) => {
    if (sd === 0) return x >= mean ? 1 : 0;
    const z = (x - mean) / (sd * Math.SQRT2);
    const erf = gammaP(0.5, z * z);
    return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
  };
}

/**
 * One-sample Kolmogorov–Smirnov test of whole-number `sample` (token lengths, ms) against a
 * distribution on the whole numbers, given by `cdf(k)` = P(X ≤ k). The continuous test's formula
 * would count a run of tied values as a jump the reference lacks; here the sample's CDF is
 * compared with the reference's on both sides of each value it takes (at v, and just below v
 * where the reference is cdf(v − 1)), which is the supremum over every point for a reference that
 * only steps at whole numbers. The p-value is the continuous test's, conservative for a discrete
 * reference (the true p is lower), so a sample it rejects is really off.
 */
export function ksTestDiscrete(sample: ArrayLike<number>, cdf: (k: number) => number): KsResult {
  const xs = Array.from(sample).sort((a, b) => a - b);
  const n = xs.length;
  if (n === 0) return { d: 0, p: 1, n: 0 };
  let d = 0;
  for (let i = 0; i < n; ) {
    const v = xs[i]!;
    let j = i;
    while (j < n && xs[j] === v) j++;
    d = Math.max(d, Math.abs(j / n - cdf(v)), Math.abs(i / n - cdf(v - 1)));
    i = j;
  }
  const sn = Math.sqrt(n);
  return { d, p: kolmogorovTail((sn + 0.12 + 0.11 / sn) * d), n };
}
