/**
 * How far the median over a cell's requests can move with the server unchanged: the sampling
 * spread the rate cells' comparison adds to a median figure's tolerance (compare-rate.ts).
 *
 * A median of n samples lies between the quantiles 0.5 ± 0.98/√n of the samples' distribution
 * about 95 % of the time (the count of samples below it is binomial: ± 1.96 × √(n/4)). A result
 * keeps each figure's median, p90, p99 and sample count, so that quantile is read from them,
 * linearly in the quantile: between the median and p90 (between p90 and p99 when n is under 7).
 * The upper side stands for both. With the server unchanged both runs draw from the baseline's
 * distribution, so the difference of their medians spreads √2 times one median's half-width, read
 * from the baseline alone: a slower server whose distribution widens does not widen its own
 * allowance. Linear between the median and p90 the quantile reads high for a convex tail (about
 * 1.2× for a normal distribution), which errs toward noise; the spread is capped at
 * MAX_MEDIAN_SPREAD, so a median of a few requests that far apart still fails a change beyond it
 * (a longer window, LLM_BENCH_DURATION_S, narrows it).
 *
 * Why: an open-loop cell's requests do not all see one batch. On a real llama.cpp at 2 req/s a
 * request alone read 1.2 ms between tokens and one beside another 3 ms; 14 requests of one
 * schedule, in two runs of an unchanged server, gave medians of 1.25 and 1.89 ms (p90 3.5 in
 * both), as the count of requests that overlapped crossed half: +51.7 %, within 5 % and the
 * capped spread of 50 %. Twice as slow still fails there. A decode cell's requests all run
 * at its concurrency, and its medians have no such second mode. Pure.
 */
import type { Distribution } from '../shapes/result.js';

/** the half-width of the median's interval, in the figure's unit; 0 without a spread to read */
export function medianHalfWidth(d: Pick<Distribution, 'median' | 'p90' | 'p99' | 'samples'>): number {
  if (!(d.samples > 0)) return 0;
  const h = 0.98 / Math.sqrt(d.samples);
  const toP90 = Math.max(0, d.p90 - d.median);
  if (h <= 0.4) return (toP90 * h) / 0.4;
  return toP90 + Math.max(0, d.p99 - d.p90) * Math.min(1, (h - 0.4) / 0.09);
}

/** the most the sampling spread adds to a median's tolerance */
export const MAX_MEDIAN_SPREAD = 0.5;

/**
 * The interval of the difference of two medians of the baseline's distribution, relative to its
 * median, at most MAX_MEDIAN_SPREAD (0 where either side is absent or the base median is 0).
 */
export function medianSamplingSpread(base: Distribution | undefined, next: Distribution | undefined): number {
  if (!base || !next || !(base.median > 0)) return 0;
  return Math.min(MAX_MEDIAN_SPREAD, (Math.SQRT2 * medianHalfWidth(base)) / base.median);
}
