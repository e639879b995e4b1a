/**
 * A server that accepts requests and answers nothing (issue 60, row 3): requests in flight inside
 * the window that never got response headers, after waiting NO_RESPONSE_MIN_MS or more. vLLM and
 * SGLang send a queued request its headers at once; Ollama, and llama.cpp with its HTTP threads
 * busy, send them with the first token, so a few such requests may be queued ones. Where none of
 * a cell's requests got a header at all, the server (or a gateway) took them and answered nothing;
 * its cell would otherwise read "no output tokens, 0 failed requests" with no cause. Pure; the cell
 * test puts the result in `evidence.noResponse`.
 */
import type { RequestTimeline } from '../shapes/timeline.js';

/** A wait without response headers this long or longer is named. */
export const NO_RESPONSE_MIN_MS = 5_000;

export interface NoResponse {
  /** requests in flight in the window that got no response headers in NO_RESPONSE_MIN_MS or more */
  requests: number;
  /** requests in flight in the window */
  of: number;
  /** the longest of those waits, seconds */
  longestWaitS: number;
}

export function noResponse(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number): NoResponse | undefined {
  let of = 0;
  let requests = 0;
  let longest = 0;
  for (const t of timelines) {
    if (t.sendMs > windowEndMs || (t.end !== undefined && t.end.atMs < windowStartMs)) continue;
    of++;
    if (t.headersMs !== undefined) continue;
    const waited = Math.min(t.end?.atMs ?? windowEndMs, windowEndMs) - t.sendMs;
    if (waited < NO_RESPONSE_MIN_MS) continue;
    requests++;
    longest = Math.max(longest, waited);
  }
  return requests > 0 ? { requests, of, longestWaitS: longest / 1000 } : undefined;
}
