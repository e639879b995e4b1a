/**
 * Pure statistics. Empty input gives `undefined`, never 0 or NaN. Non-finite values (NaN, ±∞)
 * are left out by `median`, `mean` and `distribution`.
 */
import type { Distribution } from '../shapes/result.js';

/** The quantiles a distribution reports (and the per-request p99 of goodput): written once here. */
export const QUANTILES = { median: 0.5, p90: 0.9, p99: 0.99 } as const;

function finiteSorted(values: readonly number[]): number[] {
  const out: number[] = [];
  for (const v of values) if (Number.isFinite(v)) out.push(v);
  return out.sort((a, b) => a - b);
}

/**
 * Quantile q ∈ [0, 1] of an ascending array, linear between closest ranks (Hyndman & Fan type 7,
 * the default of numpy, R and Excel's PERCENTILE.INC): h = (n − 1)·q, result =
 * sorted[⌊h⌋] + (h − ⌊h⌋)·(sorted[⌊h⌋ + 1] − sorted[⌊h⌋]). So q = 0 is the minimum, q = 1 the maximum,
 * and the median of an even count is the mean of the middle two. `undefined` for an empty array.
 * The array must already be sorted ascending (not checked).
 */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile q must be within [0, 1] (got ${q})`);
  const n = sorted.length;
  if (n === 0) return undefined;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const a = sorted[lo]!;
  if (lo + 1 >= n) return a;
  const b = sorted[lo + 1]!;
  return a + (h - lo) * (b - a);
}

/** Median (quantile 0.5) of the finite values; `undefined` when there are none. */
export function median(values: readonly number[]): number | undefined {
  return quantile(finiteSorted(values), QUANTILES.median);
}

/** Arithmetic mean of the finite values; `undefined` when there are none. */
export function mean(values: readonly number[]): number | undefined {
  let sum = 0;
  let n = 0;
  for (const v of values) {
    if (Number.isFinite(v)) {
      sum += v;
      n++;
    }
  }
  return n === 0 ? undefined : sum / n;
}

/** Median, p90 and p99 (type 7 quantiles) and the sample count; `undefined` without finite values. */
export function distribution(values: readonly number[]): Distribution | undefined {
  const s = finiteSorted(values);
  if (s.length === 0) return undefined;
  return { median: quantile(s, QUANTILES.median)!, p90: quantile(s, QUANTILES.p90)!, p99: quantile(s, QUANTILES.p99)!, samples: s.length };
}
