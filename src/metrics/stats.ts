/**
 * Pure statistics. Empty input gives `undefined`, never 0 or NaN. Non-finite values (NaN, ±∞)
 * are left out by `median`, `mean` and `distribution`.
 */
import type { Distribution, Percentiles } from '../shapes/result.js';
import { percentileName } from '../shapes/columns.js';

/** The quantiles a distribution reports (and the per-request p99 of goodput): written once here. */
export const QUANTILES = { median: 0.5, p90: 0.9, p99: 0.99 } as const;

/**
 * The finite values, ascending, as a Float64Array: its sort is numeric and native (no comparator
 * call per comparison), several times faster than an array's over the millions of gaps a GPU
 * server's cell holds, in 8 B a value.
 */
function finiteSorted(values: ArrayLike<number>): Float64Array {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (Number.isFinite(values[i])) n++;
  const out = new Float64Array(n);
  let j = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isFinite(v)) out[j++] = v;
  }
  return out.sort();
}

/**
 * Quantile q ∈ [0, 1] of an ascending array, linear between closest ranks (Hyndman & Fan type 7,
 * the default of numpy, R and Excel's PERCENTILE.INC): h = (n − 1)·q, result =
 * sorted[⌊h⌋] + (h − ⌊h⌋)·(sorted[⌊h⌋ + 1] − sorted[⌊h⌋]). So q = 0 is the minimum, q = 1 the maximum,
 * and the median of an even count is the mean of the middle two. `undefined` for an empty array.
 * The array must already be sorted ascending (not checked).
 */
export function quantile(sorted: ArrayLike<number>, q: number): number | undefined {
  return rankedQuantile(sorted.length, q, (r) => sorted[r]!);
}

/** `quantile` over n ascending samples read by rank (`valueAt(r)`, r from 0): the one place type 7 is written. */
function rankedQuantile(n: number, q: number, valueAt: (rank: number) => number): number | undefined {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile q must be within [0, 1] (got ${q})`);
  if (n === 0) return undefined;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const a = valueAt(lo);
  if (lo + 1 >= n) return a;
  return a + (h - lo) * (valueAt(lo + 1) - a);
}

/**
 * The chosen percentiles (0 < p ≤ 100) of n ascending samples read by rank, by name (p50, p99.9),
 * type 7 as every quantile here.
 */
function rankedPercentiles(n: number, percentiles: readonly number[], valueAt: (rank: number) => number): Percentiles {
  const out: Percentiles = {};
  for (const p of percentiles) out[percentileName(p)] = rankedQuantile(n, p / 100, valueAt)!;
  return out;
}

/**
 * Median, p90 and p99 of n ascending samples read by rank, and n, and the chosen percentiles
 * (LLM_BENCH_PERCENTILES) where any are given; `undefined` for none.
 */
function rankedDistribution(n: number, valueAt: (rank: number) => number, percentiles?: readonly number[]): Distribution | undefined {
  if (n === 0) return undefined;
  const q = (p: number) => rankedQuantile(n, p, valueAt)!;
  const d: Distribution = { median: q(QUANTILES.median), p90: q(QUANTILES.p90), p99: q(QUANTILES.p99), samples: n };
  if (percentiles && percentiles.length > 0) d.percentiles = rankedPercentiles(n, percentiles, valueAt);
  return d;
}

/** Median (quantile 0.5) of the finite values; `undefined` when there are none. */
export function median(values: ArrayLike<number>): number | undefined {
  return quantile(finiteSorted(values), QUANTILES.median);
}

/** Arithmetic mean of the finite values; `undefined` when there are none. */
export function mean(values: ArrayLike<number>): number | undefined {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Number.isFinite(v)) {
      sum += v;
      n++;
    }
  }
  return n === 0 ? undefined : sum / n;
}

/**
 * Median, p90 and p99 (type 7 quantiles) and the sample count, and the chosen percentiles
 * (LLM_BENCH_PERCENTILES) where any are given; `undefined` without finite values.
 */
export function distribution(values: ArrayLike<number>, percentiles?: readonly number[]): Distribution | undefined {
  const s = finiteSorted(values);
  return rankedDistribution(s.length, (r) => s[r]!, percentiles);
}

/**
 * `distribution` of values given as counts (value → how many times), for values that repeat a lot
 * (tokens per burst: small whole numbers over millions of chunks): the same type 7 quantiles, in
 * memory that grows with the distinct values, not with the samples. Non-finite values and
 * non-positive counts are left out.
 */
export function countedDistribution(counts: ReadonlyMap<number, number>): Distribution | undefined {
  const entries = [...counts].filter(([v, n]) => Number.isFinite(v) && n > 0).sort((a, b) => a[0] - b[0]);
  let total = 0;
  for (const [, n] of entries) total += n;
  // the value at rank r of the samples the counts stand for
  return rankedDistribution(total, (r) => {
    let seen = 0;
    for (const [v, n] of entries) {
      seen += n;
      if (r < seen) return v;
    }
    return entries[entries.length - 1]![0];
  });
}
