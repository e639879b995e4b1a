/** The figures of a prefill row's cold request (METHOD.md "Prefill"): prompt tokens / TTFT. Pure. */
import type { RequestTimeline } from '../shapes/timeline.js';
import type { PrefillFigures } from '../shapes/result.js';
import { ttftStartMs } from './request.js';

/**
 * Prefill figures of one cold request: prompt tokens (server usage) / TTFT. Undefined when the
 * request failed, has no first token, no positive prompt token count, or a non-positive TTFT.
 * TTFT starts at the send time, or at sentHeadersMs with from = 'sent-headers' when recorded.
 * The first token is the first text chunk; when no chunk carried text (a reasoning parser that
 * swallowed the single `<think>` token of a max_tokens = 1 request) it is the first chunk whose
 * usage reports a generated token.
 */
export function prefillFigures(t: RequestTimeline, from: 'send' | 'sent-headers' = 'send'): PrefillFigures | undefined {
  if (t.end?.kind === 'error') return undefined;
  const firstMs = t.firstTokenMs ?? t.firstOutputMs;
  if (firstMs === undefined || t.promptTokens === undefined || !(t.promptTokens > 0)) return undefined;
  const startMs = ttftStartMs(t, from);
  const ttftMs = firstMs - startMs;
  if (!(ttftMs > 0)) return undefined;
  return { promptTokens: t.promptTokens, ttftMs, promptTokensPerSecond: t.promptTokens / (ttftMs / 1000) };
}
