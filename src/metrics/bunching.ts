/**
 * Streams bunched on the way (issue 19): a proxy that buffers (nginx `proxy_buffering on`, a gzip
 * tier) hands the client many chunks of a request at one instant after a long silence. Timed at
 * the client, such a stream has a TTFT that includes the buffering, and gaps between tokens of zero:
 * the figures are the proxy's, not the server's.
 *
 * An engine cannot produce that: each of a request's chunks comes from its own decode step, a few
 * ms at least, and a step that makes several tokens (speculative decoding, a stream interval) puts
 * them into one chunk. So chunks of one request that arrive in the same socket read (the client
 * stamps a whole read with one time), within ZERO_GAP_MS of each other, or closer than
 * RHYTHM_SHARE of the request's own rhythm (its mean gap between token chunks in the window, its
 * longest gap left out) were
 * held on the way — or by the client itself, which the Client-limited rule judges first. The
 * rhythm catches a proxy that releases its bursts paced (20 tokens 1 ms apart every 400 ms: a
 * mean gap of 20 ms, so 1 ms is bunched; issue 60), where a fixed 0.5 ms did not; a server of
 * multi-token chunks has gaps near its mean, so none of them is.
 *
 * Evidence, over each request's token chunks inside the window:
 * - zero-gap share: the share of the gaps between consecutive chunks that are under ZERO_GAP_MS;
 * - bursts: maximal runs of chunks with zero gaps between them, sized in tokens (a lone chunk is a
 *   burst of its own tokens).
 * Whether that makes the cell Stream buffered is the judge's (src/judge/buffered.ts).
 */
import { countedDistribution } from './stats.js';
import type { RequestTimeline } from '../shapes/timeline.js';

/** two chunks of one request closer than this arrived together */
export const ZERO_GAP_MS = 0.5;
/** …or closer than this share of the request's mean gap between token chunks in the window… */
export const RHYTHM_SHARE = 0.25;
/** …and than this (ms): stalls and slow prefill steps raise a mean, and no engine step is this short under load */
export const RHYTHM_CAP_MS = 2;

/**
 * The gap under which two token chunks of request t arrived together: max(ZERO_GAP_MS,
 * min(RHYTHM_CAP_MS, RHYTHM_SHARE × its mean gap in the window without its longest one)). The cap:
 * several stalls, or prefill steps of 160 ms between decode steps of 20 ms, raise the mean far
 * above an engine's own steps, which are never under 2 ms but on a tiny model. Without the longest: one
 * stall in a short request (3 s among 31 gaps of 10 ms) would raise the mean tenfold and make its
 * steady gaps look bunched; a proxy's bursts repeat, so their pauses still set the rhythm.
 */
function togetherBelowMs(t: RequestTimeline, n: number, windowStartMs: number, windowEndMs: number): number {
  let prev: number | undefined;
  let span = 0;
  let longest = 0;
  let gaps = 0;
  for (let i = 0; i < n; i++) {
    const at = t.chunkMs[i]!;
    if (t.chunkTokens[i]! <= 0 || at < windowStartMs || at > windowEndMs) continue;
    if (prev !== undefined) {
      span += at - prev;
      longest = Math.max(longest, at - prev);
      gaps++;
    }
    prev = at;
  }
  const meanGap = gaps > 1 ? (span - longest) / (gaps - 1) : 0;
  return Math.max(ZERO_GAP_MS, Math.min(RHYTHM_CAP_MS, RHYTHM_SHARE * meanGap));
}

export interface StreamBunching {
  /** gaps between consecutive token chunks of one request, inside the window */
  gaps: number;
  zeroGapShare: number;
  /** tokens per burst (median, p90, p99; samples = bursts), and the largest */
  burstTokens: { median: number; p90: number; p99: number; max: number; bursts: number };
  /** requests with tokens in the window whose window tokens all arrived in one burst */
  oneBurstRequests: number;
  requests: number;
}

/** The bunching evidence of a cell's requests over the window; undefined when no token arrived in it. */
export function streamBunching(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number): StreamBunching | undefined {
  let gaps = 0;
  let zeroGaps = 0;
  let requests = 0;
  let oneBurstRequests = 0;
  // tokens per burst, counted (a burst is a few tokens; a cell holds millions of them)
  const bursts = new Map<number, number>();
  let largest = 0;
  const burstDone = (tokens: number): void => {
    bursts.set(tokens, (bursts.get(tokens) ?? 0) + 1);
    if (tokens > largest) largest = tokens;
  };
  for (const t of timelines) {
    const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
    const together = togetherBelowMs(t, n, windowStartMs, windowEndMs);
    let prevMs: number | undefined;
    let burst = 0;
    let requestBursts = 0;
    for (let i = 0; i < n; i++) {
      const at = t.chunkMs[i]!;
      const k = t.chunkTokens[i]!;
      if (k <= 0 || at < windowStartMs || at > windowEndMs) continue;
      if (prevMs !== undefined) {
        gaps++;
        if (at - prevMs < together) {
          zeroGaps++;
          burst += k;
          prevMs = at;
          continue;
        }
        burstDone(burst);
        requestBursts++;
      }
      burst = k;
      prevMs = at;
    }
    if (prevMs === undefined) continue;
    burstDone(burst);
    requestBursts++;
    requests++;
    if (requestBursts === 1) oneBurstRequests++;
  }
  if (requests === 0) return undefined;
  const d = countedDistribution(bursts)!;
  const zeroGapShare = gaps > 0 ? zeroGaps / gaps : 0;
  return {
    gaps,
    zeroGapShare,
    burstTokens: { median: d.median, p90: d.p90, p99: d.p99, max: largest, bursts: d.samples },
    oneBurstRequests,
    requests,
  };
}
