/**
 * Every gap between a request's tokens, beside METHOD.md's figures (issue 59; docs/method.md
 * "Inter-token latency and the longest gap"). METHOD's time between tokens is each request's mean
 * over the window, so one pause in a request is averaged away (or cut out by the window's edges).
 * Here each gap counts on its own:
 *
 * - inter-token latency (ITL): the time between two consecutive token-carrying chunks of one
 *   request, one gap per chunk as vLLM's `benchmark_serving` counts it (a chunk of k tokens is one
 *   gap, not k). A gap counts when its later chunk arrives inside the window, so a gap that
 *   straddles the window's start counts; the time to the first token is no gap.
 * - the longest gap: its request, when its later chunk arrived (seconds into the window), its
 *   length and that length in median gaps; or, where longer, a silence still running when the
 *   window closed (`open`: a stream frozen through the window's end has no later chunk).
 * - the gaps' distribution in fixed log-spaced bins, for the HTML report (a constant size,
 *   whatever the token count).
 *
 * Cost: two passes over the chunks and one sort of a Float32Array of the gaps (4 B a gap while the
 * figures are computed; nothing kept). Pure: no I/O, no clock.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import type { GapHistogram, InterTokenLatency, LongestGap } from '../shapes/result.js';
import { quantile } from './stats.js';
import { percentileName } from '../shapes/columns.js';

/** A longest gap this many median gaps long or more gets a note on the page… */
export const LONG_GAP_MULTIPLE = 10;
/**
 * …when it is this long too (ms): a pause a reader of the stream could notice. On a CPU server
 * streaming a token a millisecond, a 12 ms scheduler hiccup of a busy machine is 12 median gaps
 * (found on a real llama.cpp, issue 59) and no stall worth a note.
 */
export const LONG_GAP_MIN_MS = 100;

/** Bin edges of the gap histogram (ms), 1-2-5 steps from 0.1 ms to 100 s. */
export const GAP_EDGES_MS: readonly number[] = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];

export interface CellGaps {
  interTokenLatencyMs: InterTokenLatency;
  longestGap: LongestGap;
}

/**
 * Calls `each(gapMs, atMs)` for every counted gap of a request, in order; returns the time of its
 * last token chunk at or before the window's end (undefined: no token by then).
 */
function forEachGap(t: RequestTimeline, ws: number, we: number, each: (gapMs: number, atMs: number) => void): number | undefined {
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  let prev: number | undefined;
  for (let i = 0; i < n; i++) {
    if (t.chunkTokens[i]! <= 0) continue;
    const at = t.chunkMs[i]!;
    if (at > we) break;
    if (prev !== undefined && at >= ws) each(at - prev, at);
    prev = at;
  }
  return prev;
}

/** The bin of a gap in GAP_EDGES_MS: 0 below the first edge, edges.length at or above the last. */
function binOf(gapMs: number): number {
  let lo = 0;
  let hi = GAP_EDGES_MS.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (gapMs >= GAP_EDGES_MS[mid]!) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The cell's ITL and longest gap over its window, with the chosen percentiles (LLM_BENCH_PERCENTILES)
 * where any are given; undefined when no request had two token chunks with the later one inside it.
 */
export function cellGaps(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number, percentiles?: readonly number[]): CellGaps | undefined {
  let count = 0;
  for (const t of timelines) forEachGap(t, windowStartMs, windowEndMs, () => count++);
  if (count === 0) return undefined;
  const gaps = new Float32Array(count);
  let j = 0;
  let max = -Infinity;
  let maxAt = 0;
  let maxRequest: RequestTimeline | undefined;
  // the longest silence still running when the window closed: a request in flight then (not ended
  // before it), from its last token chunk to the window's end. No later chunk closes it, so it is no
  // ITL gap, but a stream frozen through the window's last seconds is a stall the longest gap must
  // show. A request with no token yet is waiting (queue, prefill), not silent.
  let open: { id: string; ms: number } | undefined;
  for (const t of timelines) {
    const last = forEachGap(t, windowStartMs, windowEndMs, (gap, at) => {
      gaps[j++] = gap;
      if (gap > max) {
        max = gap;
        maxAt = at;
        maxRequest = t;
      }
    });
    const stillIn = t.end === undefined || t.end.atMs >= windowEndMs;
    if (stillIn && last !== undefined && (!open || windowEndMs - last > open.ms)) open = { id: t.id, ms: windowEndMs - last };
  }
  gaps.sort();
  // to 0.1 µs: the sorted gaps are 4-byte floats (7 significant digits), their digits past that
  // are noise; never above the max, which is kept exactly
  const at = (q: number) => Math.min(max, Math.round(quantile(gaps, q)! * 1e4) / 1e4);
  const median = at(0.5);
  const longestGap: LongestGap = { requestId: maxRequest!.id, atS: (maxAt - windowStartMs) / 1000, ms: max, medianGaps: median > 0 ? max / median : null };
  if (open && open.ms > max) Object.assign(longestGap, { requestId: open.id, atS: (windowEndMs - windowStartMs) / 1000, ms: open.ms, medianGaps: median > 0 ? open.ms / median : null, open: true });
  const itl: InterTokenLatency = { median, p90: at(0.9), p95: at(0.95), p99: at(0.99), max, gaps: count };
  if (percentiles && percentiles.length > 0) itl.percentiles = Object.fromEntries(percentiles.map((p) => [percentileName(p), at(p / 100)]));
  return { interTokenLatencyMs: itl, longestGap };
}

/** The cell's gaps counted in GAP_EDGES_MS's bins (one pass, no copy); undefined without a gap. */
export function gapHistogram(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number): GapHistogram | undefined {
  const counts = new Array<number>(GAP_EDGES_MS.length + 1).fill(0);
  let any = false;
  for (const t of timelines) {
    forEachGap(t, windowStartMs, windowEndMs, (gap) => {
      counts[binOf(gap)]!++;
      any = true;
    });
  }
  return any ? { edgesMs: [...GAP_EDGES_MS], counts } : undefined;
}

/**
 * The gaps of several windows (a repeated cell's repeats) in one histogram: the bins' counts
 * summed (every histogram has GAP_EDGES_MS's bins); undefined when none has a gap.
 */
export function sumGapHistograms(list: ReadonlyArray<GapHistogram | undefined>): GapHistogram | undefined {
  const present = list.filter((h): h is GapHistogram => h !== undefined);
  if (present.length === 0) return undefined;
  const counts = new Array<number>(GAP_EDGES_MS.length + 1).fill(0);
  for (const h of present) h.counts.forEach((n, i) => (counts[i]! += n));
  return { edgesMs: [...GAP_EDGES_MS], counts };
}

/**
 * Whether a cell's longest gap is long enough for the page's note: LONG_GAP_MULTIPLE median gaps or
 * more, and LONG_GAP_MIN_MS or more. A median gap of 0 (chunks bunched on the way) has no such
 * multiple: Stream buffered says it.
 */
export function longGap(g: LongestGap | undefined): boolean {
  return g !== undefined && g.medianGaps !== null && g.medianGaps >= LONG_GAP_MULTIPLE && g.ms >= LONG_GAP_MIN_MS;
}
