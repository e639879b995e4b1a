/**
 * A server that ignores `max_tokens` (issue 60, row 4): a request that streamed more tokens than it
 * asked for. Every figure is still counted from the stream, but the page says "Max output: 64
 * tokens" while requests ran to 871: the output lengths, and the end-to-end latencies and request
 * rates that rest on them, are not those the run asked for. Counted tokens are the stream's (as
 * the cell counts them, or the final usage where larger); counted by a local tokenizer they may
 * differ from the server's by a few, so those get usage-check.ts's tolerance.
 * Pure; the cell test puts the result in `evidence.maxTokensIgnored`.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import { usageTolerance } from './usage-check.js';
import { tokensInWindow } from './request.js';

export interface MaxTokensIgnored {
  /** requests that streamed more tokens than their max_tokens */
  requests: number;
  /** requests that asked for a max_tokens and streamed a token */
  of: number;
  /** the one that ran furthest past its cap */
  example: { tokens: number; asked: number };
}

/** undefined when every request kept to its max_tokens (or none asked for one). */
export function maxTokensIgnored(timelines: readonly RequestTimeline[]): MaxTokensIgnored | undefined {
  let of = 0;
  let requests = 0;
  let example: MaxTokensIgnored['example'] | undefined;
  for (const t of timelines) {
    const asked = t.askedMaxTokens;
    if (asked === undefined) continue;
    let tokens = tokensInWindow(t, -Infinity, Infinity);
    if (t.completionTokens !== undefined && t.completionTokens > tokens) tokens = t.completionTokens;
    if (tokens === 0) continue;
    of++;
    const slack = t.tokenSource === 'local-tokenizer' ? usageTolerance(asked) : 0;
    if (tokens <= asked + slack) continue;
    requests++;
    if (!example || tokens - asked > example.tokens - example.asked) example = { tokens, asked };
  }
  return example ? { requests, of, example } : undefined;
}
