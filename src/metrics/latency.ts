/**
 * The per-request latencies users of vLLM's `benchmark_serving` read (issue 59; docs/method.md
 * "TPOT, end-to-end latency, request throughput"), over the requests that completed inside the
 * window (those `completedRequests` counts), each whole:
 *
 * - end-to-end latency: from the request's TTFT start to its last token chunk (vLLM's `latency`,
 *   the time of its last chunk less the start);
 * - TPOT, time per output token after the first: (end-to-end latency − TTFT) / (tokens − 1), for
 *   requests of 2 or more tokens (vLLM's definition; tokens are the request's own count, as the
 *   cell counts them).
 *
 * Quantiles as every distribution (stats.ts). Pure: no I/O, no clock.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import type { Distribution } from '../shapes/result.js';
import { distribution } from './stats.js';
import { ttftStartMs } from './request.js';

export interface RequestLatencies {
  tpotMs?: Distribution;
  e2eLatencyMs?: Distribution;
}

/** One request's end-to-end latency and TPOT (vLLM's definitions), or undefined without a first token. */
export function requestLatency(t: RequestTimeline, from: 'send' | 'sent-headers'): { e2eMs: number; tpotMs?: number } | undefined {
  if (t.firstTokenMs === undefined) return undefined;
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  let tokens = 0;
  let lastMs = t.firstTokenMs;
  for (let i = 0; i < n; i++) {
    const k = t.chunkTokens[i]!;
    if (k <= 0) continue;
    tokens += k;
    lastMs = t.chunkMs[i]!;
  }
  const start = ttftStartMs(t, from);
  const e2eMs = lastMs - start;
  return tokens > 1 ? { e2eMs, tpotMs: (e2eMs - (t.firstTokenMs - start)) / (tokens - 1) } : { e2eMs };
}

/** TPOT and end-to-end latency over the requests that completed inside the window (with the chosen percentiles, LLM_BENCH_PERCENTILES). */
export function requestLatencies(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number, from: 'send' | 'sent-headers', percentiles?: readonly number[]): RequestLatencies {
  const e2e: number[] = [];
  const tpot: number[] = [];
  for (const t of timelines) {
    if (t.end?.kind !== 'done' || t.end.atMs < windowStartMs || t.end.atMs > windowEndMs) continue;
    const l = requestLatency(t, from);
    if (!l) continue;
    e2e.push(l.e2eMs);
    if (l.tpotMs !== undefined) tpot.push(l.tpotMs);
  }
  const out: RequestLatencies = {};
  const e = distribution(e2e, percentiles);
  if (e) out.e2eLatencyMs = e;
  const p = distribution(tpot, percentiles);
  if (p) out.tpotMs = p;
  return out;
}
