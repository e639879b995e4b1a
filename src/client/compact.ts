/**
 * A finished request's timeline in little memory (issue 19: a worker held about 48 B per token
 * received and grew without end over a long window). While a request streams its chunk arrays are
 * plain arrays (cheap to push to); once it has ended nothing appends to them, so they become typed
 * arrays of exactly their length:
 * - arrival times: Float64Array (8 B a chunk: monoMs values stay exact);
 * - tokens per chunk: Uint16Array (2 B a chunk), or Uint32Array where a chunk carries more;
 * - the chunks' text (kept for the local tokenizer's recount, already done at the end) is dropped.
 * So a finished request holds 10 B per chunk, at most 10 B per token.
 */
import type { RequestTimeline } from '../shapes/timeline.js';

export function compactTimeline(t: RequestTimeline): RequestTimeline {
  if (Array.isArray(t.chunkMs)) t.chunkMs = Float64Array.from(t.chunkMs);
  if (Array.isArray(t.chunkTokens)) {
    let max = 0;
    for (const k of t.chunkTokens) if (k > max) max = k;
    t.chunkTokens = max <= 0xffff ? Uint16Array.from(t.chunkTokens) : Uint32Array.from(t.chunkTokens);
  }
  delete t.chunkText;
  return t;
}
