/**
 * Saturated (open-loop rate cells, issue 22): the server cannot keep up with the offered rate, so
 * the requests in the system grow through the window instead of holding steady.
 *
 * The decision, with its confidence stated:
 *   1. the window is cut into SATURATION.blocks equal blocks, and the time-weighted mean of the
 *      requests in the system (scheduled and not yet finished) is taken per block: block means
 *      are far less autocorrelated than raw samples, which a trend test assumes;
 *   2. a one-sided Mann–Kendall test on the block means must find an increasing trend at
 *      p < SATURATION.pValue (99 % confidence);
 *   3. and the growth over the window (Sen's slope × window) must be at least
 *      max(SATURATION.minGrowth requests, SATURATION.minGrowthShare × the mean in the system):
 *      a trend too small to matter is noise that a trend test over few blocks can still find.
 * A stable queue wanders but does not climb for a whole window; a queue fed faster than it is
 * served climbs at (offered − served) requests/s, by Little's law.
 * Power: at 1.2 × the service limit the queue climbs 0.2 λW over a window of λW arrivals, while
 * Poisson arrivals alone wander √(λW); below about 400 arrivals in the window a climb cannot be
 * told from a lucky stretch, and the test (rightly) does not call it (test/judge/saturation.test.ts).
 */
import { mannKendall, senSlope } from '../metrics/trend.js';

export const SATURATION = {
  blocks: 10,
  pValue: 0.01,
  minGrowth: 2,
  minGrowthShare: 0.2,
} as const;

export interface SaturationVerdict {
  saturated: boolean;
  /** one-sided Mann–Kendall p-value of an increasing trend over the block means */
  p: number;
  /** growth of the requests in the system over the window (Sen's slope × window) */
  growth: number;
  /** the growth it had to reach */
  growthBound: number;
  /** mean requests in the system over the window */
  meanInSystem: number;
  /** the block means the test ran on */
  blockMeans: number[];
}

/** Time-weighted mean of a count over each of `blocks` equal blocks of [startMs, endMs). */
export function blockMeans(
  intervals: ReadonlyArray<readonly [number, number]>,
  startMs: number,
  endMs: number,
  blocks: number = SATURATION.blocks,
): number[] {
  const width = (endMs - startMs) / blocks;
  const sums = new Array<number>(blocks).fill(0);
  for (const [from, to] of intervals) {
    const a = Math.max(from, startMs);
    const b = Math.min(to, endMs);
    if (b <= a) continue;
    const first = Math.min(blocks - 1, Math.floor((a - startMs) / width));
    const last = Math.min(blocks - 1, Math.floor((b - startMs) / width));
    for (let k = first; k <= last; k++) {
      const lo = Math.max(a, startMs + k * width);
      const hi = Math.min(b, startMs + (k + 1) * width);
      if (hi > lo) sums[k]! += hi - lo;
    }
  }
  return sums.map((s) => s / width);
}

/** The Saturated decision over the block means of the requests in the system. */
export function judgeSaturation(means: readonly number[], windowMs: number): SaturationVerdict {
  const mk = mannKendall(means);
  const width = windowMs / means.length;
  const xs = means.map((_, i) => (i + 0.5) * width);
  const growth = senSlope(xs, means) * windowMs;
  const meanInSystem = means.reduce((a, b) => a + b, 0) / Math.max(1, means.length);
  const growthBound = Math.max(SATURATION.minGrowth, SATURATION.minGrowthShare * meanInSystem);
  return {
    saturated: mk.pIncreasing < SATURATION.pValue && growth >= growthBound,
    p: mk.pIncreasing,
    growth,
    growthBound,
    meanInSystem,
    blockMeans: [...means],
  };
}
