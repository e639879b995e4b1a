/**
 * One request's own figures inside a cell's window (METHOD.md "Figures of a cell"): where its TTFT
 * starts, its tokens in the window, its mean time between tokens and the tok/s that follows from
 * it, and the p99 of its own gaps. The cell's figures (figures.ts) and the per-request SLO judge
 * (src/judge/goodput.ts) both take them from here. Pure: no I/O, no clock.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import { QUANTILES, quantile } from './stats.js';

/**
 * Where the matrix starts TTFT: when the request's headers were written to the socket, so the
 * load generator's own queueing is not the server's TTFT (docs/method.md: TTFT). The accuracy
 * tests check this same start against the simulator's ground truth.
 */
export const MATRIX_TTFT_FROM = 'sent-headers' as const;

/**
 * Where a request's TTFT starts: when it was handed to undici ('send'), or when its headers were
 * written to the socket ('sent-headers', falling back to the send time where that was not recorded).
 */
export function ttftStartMs(t: RequestTimeline, from: 'send' | 'sent-headers'): number {
  return from === 'sent-headers' ? (t.sentHeadersMs ?? t.sendMs) : t.sendMs;
}

/**
 * A request's mean time between tokens inside the window, in ms, or undefined.
 *
 * Uses only its token-carrying chunks inside the window; needs at least 2 of them and a positive
 * time span between the first and the last. Value = (last chunk time − first chunk time) /
 * (tokens in the window − tokens of the first chunk in the window).
 *
 * Deliberate departure from METHOD.md's (last − first) / (tokens − 1): with multi-token chunks
 * (k tokens per chunk: speculative decoding, stream intervals) all k tokens of the first chunk
 * arrive at its time, so the span is covered by the tokens after the first chunk only. With one
 * token per chunk both formulas agree.
 */
export function requestTimeBetweenTokensMs(t: RequestTimeline, windowStartMs: number, windowEndMs: number): number | undefined {
  let firstMs: number | undefined;
  let firstTokens = 0;
  let lastMs = 0;
  let tokens = 0;
  let chunks = 0;
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  for (let i = 0; i < n; i++) {
    const at = t.chunkMs[i]!;
    const k = t.chunkTokens[i]!;
    if (k <= 0 || at < windowStartMs || at > windowEndMs) continue;
    if (firstMs === undefined) {
      firstMs = at;
      firstTokens = k;
    }
    lastMs = at;
    tokens += k;
    chunks++;
  }
  if (firstMs === undefined || chunks < 2) return undefined;
  const spanMs = lastMs - firstMs;
  const after = tokens - firstTokens;
  if (!(spanMs > 0) || after <= 0) return undefined;
  return spanMs / after;
}

/** tokens of a request whose chunk arrival time is inside the window */
export function tokensInWindow(t: RequestTimeline, windowStartMs: number, windowEndMs: number): number {
  let sum = 0;
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  for (let i = 0; i < n; i++) {
    const at = t.chunkMs[i]!;
    if (at >= windowStartMs && at <= windowEndMs) sum += t.chunkTokens[i]!;
  }
  return sum;
}

/**
 * A request's own speed, tokens per second, from its mean time between tokens in ms: 1000 / TBT.
 * The cell's per-request tok/s is the median of these; goodput judges each request on its own.
 */
export function tokensPerSecondOfTbt(tbtMs: number): number {
  return 1000 / tbtMs;
}

/** p99 of a request's gaps between tokens inside the window, per token (a k-token chunk's gap counts k times, each gap / k). */
export function requestTbtP99Ms(t: RequestTimeline, windowStartMs: number, windowEndMs: number): number | undefined {
  const gaps: number[] = [];
  let prev: number | undefined;
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  for (let i = 0; i < n; i++) {
    const at = t.chunkMs[i]!;
    const k = t.chunkTokens[i]!;
    if (k <= 0 || at < windowStartMs || at > windowEndMs) continue;
    if (prev !== undefined) for (let j = 0; j < k; j++) gaps.push((at - prev) / k);
    prev = at;
  }
  return quantile(gaps.sort((a, b) => a - b), QUANTILES.p99);
}
