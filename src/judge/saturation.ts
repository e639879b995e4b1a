/**
 * Saturated (open-loop rate cells, issue 22): the server cannot keep up with the offered rate, so
 * the requests in the system grow through the window instead of holding steady.
 *
 * The decision, with its confidence stated:
 *   1. the window (after its fill-up, below) is cut into equal blocks, and the time-weighted mean of the
 *      requests in the system (scheduled and not yet finished) is taken per block: block means
 *      are far less autocorrelated than raw samples, which a trend test assumes;
 *   2. a one-sided Mann–Kendall test on the block means must find an increasing trend at
 *      p < SATURATION.pValue (99 % confidence);
 *   3. and the growth over the span tested (Sen's slope × span) must be at least
 *      max(SATURATION.minGrowth requests, SATURATION.minGrowthShare × the mean in the system):
 *      a trend too small to matter is noise that a trend test over few blocks can still find.
 * A stable queue wanders but does not climb for a whole window; a queue fed faster than it is
 * served climbs at (offered − served) requests/s, by Little's law.
 * Two things a short window gets wrong are kept out (judgeWindowSaturation), both measured against
 * a request's latency L without queueing (requestLatency): over the first FILL_UP.requests requests,
 * the shortest time to first token (one that did not wait) plus the p90 of their first token → end
 * (decoding, which a queue does not lengthen). Where the requests' timings are not given, the p90
 * end-to-end latency of the first requests stands in (fillUp).
 *   - the fill-up: a system that starts empty fills to λL over L. Without a ramp the test starts at
 *     the first request's scheduled time plus L; after a linear ramp of R ≥ L the system opens the
 *     window short by L/(2R) of its level, made up over L, and the test starts L·L/R in (L for R ≤ L);
 *   - blocks narrower than L: the requests in one block are still in the next, so block means are
 *     correlated and the trend test finds climbs in stable queues far more often than its 1 %
 *     (11 % over 3 L, 5 % over 5 L, measured on M/D/c queues). Blocks are at least L wide: as many
 *     as fit, up to SATURATION.blocks; under FILL_UP.minBlocks (a Mann–Kendall test on fewer
 *     cannot reach p < 0.01), Saturated is not judged, and the evidence says why and what to change
 *     (a longer window; with requests still running at the window's end, fewer output tokens).
 * Power: at 1.2 × the service limit the queue climbs 0.2 λW over a window of λW arrivals, while
 * Poisson arrivals alone wander √(λW); below about 400 arrivals in the window a climb cannot be
 * told from a lucky stretch, and the test (rightly) does not call it (test/judge/saturation.test.ts).
 */
import { mannKendall, senSlope } from '../metrics/trend.js';
import { mean, quantile } from '../metrics/stats.js';
import { maxOf, minOf } from '../extent.js';

export const SATURATION = {
  blocks: 10,
  pValue: 0.01,
  minGrowth: 2,
  minGrowthShare: 0.2,
} as const;

export const FILL_UP = {
  /** the first requests whose latency quantile is a request's latency L */
  requests: 10,
  /** p90: with spread latencies the system still fills after the median; after p90 what is left of the climb is about 10 % of the level, under the growth bound */
  quantile: 0.9,
  /**
   * the fewest blocks, each at least L wide, that the test runs on: 6 is the least n at which the
   * one-sided Mann–Kendall test of metrics/trend.ts (normal approximation, continuity correction)
   * can reach p < 0.01: a perfect climb gives p 0.004 over 6 blocks, 0.014 over 5
   */
  minBlocks: 6,
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
  /** where the test began, ms after the window opened: the fill-up left out (0: the whole window) */
  fromMs: number;
  /** why Saturated was not judged (the fill-up took too much of the window); absent when it was */
  notJudged?: string;
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

/** A request of the cell, for its latency: when it was due, its first token and its end (absent: not yet, or never) */
export interface FillRequest {
  scheduledMs: number;
  firstTokenMs?: number;
  endMs?: number;
}

/** A request's latency L (see the header) and whether it is only a lower bound: a request it was taken from had not ended by the window's end. */
export interface RequestLatency {
  latencyMs: number;
  unfinished: boolean;
}

/**
 * L without queueing, from the first FILL_UP.requests requests that had a first token: the
 * shortest scheduled → first token, plus the p90 (FILL_UP.quantile) of first token → end. A request
 * still running at the window's end counts only when it had already decoded longer than every
 * finished one (then L is a lower bound: `unfinished`); one that started late says nothing.
 * Undefined when none had a first token.
 */
export function requestLatency(requests: readonly FillRequest[], windowEndMs: number): RequestLatency | undefined {
  const first = [...requests]
    .filter((r) => r.firstTokenMs !== undefined)
    .sort((a, b) => a.scheduledMs - b.scheduledMs)
    .slice(0, FILL_UP.requests);
  if (first.length === 0) return undefined;
  const ttft = minOf(first.map((r) => Math.max(0, r.firstTokenMs! - r.scheduledMs)));
  const ended = (r: FillRequest) => r.endMs !== undefined && r.endMs <= windowEndMs;
  const decodeOf = (r: FillRequest) => Math.max(0, (ended(r) ? r.endMs! : windowEndMs) - r.firstTokenMs!);
  const finished = first.filter(ended).map(decodeOf);
  const longest = finished.length > 0 ? maxOf(finished) : -Infinity;
  const runningLonger = first.filter((r) => !ended(r)).map(decodeOf).filter((d) => d >= longest);
  const decode = [...finished, ...runningLonger].sort((a, b) => a - b);
  return { latencyMs: ttft + quantile(decode, FILL_UP.quantile)!, unfinished: runningLonger.length > 0 };
}

/**
 * Without the requests' timings: the p90 (FILL_UP.quantile) end-to-end latency of the first
 * FILL_UP.requests requests, each [scheduled, ended] (one still running ends at the window's end,
 * and is counted `unfinished`). Undefined without requests.
 */
export function fillUp(inSystem: ReadonlyArray<readonly [number, number]>, windowEndMs = Infinity): RequestLatency | undefined {
  if (inSystem.length === 0) return undefined;
  const first = [...inSystem].sort((a, b) => a[0] - b[0]).slice(0, FILL_UP.requests);
  const latencies = first.map(([from, to]) => Math.max(0, to - from)).sort((a, b) => a - b);
  return { latencyMs: quantile(latencies, FILL_UP.quantile)!, unfinished: first.some(([, to]) => to >= windowEndMs) };
}

export interface WindowSaturationOptions {
  /** the cell's requests, for L without queueing (requestLatency); else L comes from `inSystem` */
  requests?: readonly FillRequest[];
  /** the linear ramp before the window, ms (0: none) */
  rampMs?: number;
}

/**
 * The Saturated test over a cell's window: the fill-up left out, the rest cut into blocks at least a
 * request's latency wide (at most SATURATION.blocks); not judged, with the reason and the fix, when
 * fewer than FILL_UP.minBlocks fit.
 */
export function judgeWindowSaturation(
  inSystem: ReadonlyArray<readonly [number, number]>,
  windowStartMs: number,
  windowEndMs: number,
  options: WindowSaturationOptions = {},
): SaturationVerdict {
  const windowMs = windowEndMs - windowStartMs;
  const L = (options.requests ? requestLatency(options.requests, windowEndMs) : undefined) ?? fillUp(inSystem, windowEndMs);
  const latencyMs = L?.latencyMs ?? 0;
  // a loop, not Math.min(...): a long window at a high rate holds more requests than a call takes arguments
  const firstScheduled = inSystem.length > 0 ? inSystem.reduce((m, [from]) => Math.min(m, from), Infinity) : windowStartMs;
  const rampMs = options.rampMs ?? 0;
  // after a ramp of R ≥ L the window opens short by L/(2R) of the level, made up over L: leave out L·L/R
  const afterRamp = rampMs > 0 ? latencyMs * Math.min(1, latencyMs / rampMs) : latencyMs;
  const fillEnd = Math.max(firstScheduled + latencyMs, windowStartMs + afterRamp);
  const fromMs = Math.min(windowMs, Math.max(0, fillEnd - windowStartMs));
  const spanMs = windowMs - fromMs;
  const blocks = latencyMs > 0 ? Math.min(SATURATION.blocks, Math.floor(spanMs / latencyMs)) : SATURATION.blocks;
  if (blocks < FILL_UP.minBlocks || spanMs <= 0) {
    const means = windowMs > 0 ? blockMeans(inSystem, windowStartMs, windowEndMs) : [];
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    // whole seconds, rounded up, for the settings it names (a little over what is needed)
    const whole = (ms: number) => Math.max(1, Math.ceil(ms / 1000 + 0.05));
    const need = fromMs + FILL_UP.minBlocks * latencyMs;
    const unfinished = L?.unfinished === true;
    return {
      saturated: false,
      p: 1,
      growth: 0,
      growthBound: 0,
      meanInSystem: mean(means) ?? 0,
      blockMeans: means,
      fromMs,
      notJudged:
        `a request took ${unfinished ? 'at least' : 'about'} ${s(latencyMs)}${unfinished ? ' (some were still running when the window closed)' : ''}, and telling a climb from a stable queue's wander needs ${FILL_UP.minBlocks} such spans after the system has filled; ` +
        `this ${s(windowMs)} window had ${s(spanMs)} after ${s(fromMs)} of fill-up. ` +
        (unfinished
          ? `Cap the output (LLM_BENCH_MAX_TOKENS) so requests end within the window, or lengthen the window to well over ${whole(need)} s (LLM_BENCH_DURATION_S, which lengthens every cell's window)`
          : `Lengthen the window to ${whole(need)} s or more (LLM_BENCH_DURATION_S=${whole(need)}, which lengthens every cell's window)`),
    };
  }
  const verdict = judgeSaturation(blockMeans(inSystem, windowStartMs + fromMs, windowEndMs, blocks), spanMs);
  return { ...verdict, fromMs };
}

/** The Saturated decision over the block means of the requests in the system, over a span of `windowMs`. */
export function judgeSaturation(means: readonly number[], windowMs: number): Omit<SaturationVerdict, 'fromMs' | 'notJudged'> {
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
