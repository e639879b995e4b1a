/**
 * Streams bunched on the way (issue 19): a proxy that buffers (nginx `proxy_buffering on`, a gzip
 * tier) hands the client many chunks of a request at one instant after a long silence. Timed at
 * the client, such a stream has a TTFT that includes the buffering, and gaps between tokens of zero:
 * the figures are the proxy's, not the server's.
 *
 * An engine cannot produce that: each of a request's chunks comes from its own decode step, a few
 * ms at least, and a step that makes several tokens (speculative decoding, a stream interval) puts
 * them into one chunk. So chunks of one request that arrive in the same socket read (the client
 * stamps a whole read with one time) or within ZERO_GAP_MS of each other were held on the way —
 * or by the client itself, which the Client-limited rule judges first.
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
    let prevMs: number | undefined;
    let burst = 0;
    let requestBursts = 0;
    for (let i = 0; i < n; i++) {
      const at = t.chunkMs[i]!;
      const k = t.chunkTokens[i]!;
      if (k <= 0 || at < windowStartMs || at > windowEndMs) continue;
      if (prevMs !== undefined) {
        gaps++;
        if (at - prevMs < ZERO_GAP_MS) {
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
