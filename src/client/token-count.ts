/**
 * Attributes output tokens to stream chunks (METHOD.md "Output tokens"), best source first:
 *
 * 1. `usage` — continuous usage: the server puts the cumulative `usage.completion_tokens` on every
 *    chunk. The tokens of a chunk are the increase of that cumulative count over the tokens already
 *    attributed. Continuous usage is recognised at the first text-carrying chunk: it must carry
 *    `usage.completionTokens > 0` (vLLM/SGLang/TRT-LLM with continuous_usage_stats). The role chunk
 *    before it (usage 0) and the final usage chunk after it (same cumulative, increase 0) then add
 *    nothing. Ollama's all-zero usage on every chunk is therefore not continuous usage.
 * 2. `chunk-token-ids` — the chunk says how many tokens it carries (`tokenCount`, e.g. token_ids).
 * 3. `chunks` — one token per text-carrying chunk.
 *
 * Without continuous usage a usage chunk (the final usage-only chunk, or usage on the last text
 * chunk) never adds tokens at its arrival time: it only sets the timeline's prompt/completion/
 * cached token counts. The last usage seen wins (Ollama sends zeros first, the real counts last).
 * Reasoning deltas count as tokens and are added to `reasoningTokens` too.
 * A timeline's `tokenSource` is the weakest source over its token-carrying chunks.
 */
import type { DecodedChunk } from '../engines/types.js';
import { TOKEN_SOURCE_RANK, type RequestTimeline, type TokenSource } from './types.js';

export class TokenCounter {
  /** undefined until the first text-carrying chunk decides it */
  private continuous: boolean | undefined = undefined;
  /** tokens attributed to chunks so far */
  private attributed = 0;

  constructor(private readonly timeline: RequestTimeline) {}

  /**
   * Account one decoded chunk that arrived at `atMs`. Returns the tokens attributed to it (0 for
   * role-only and usage-only chunks). Sets `firstTokenMs` at the first text-carrying chunk.
   */
  add(chunk: DecodedChunk, atMs: number): number {
    const t = this.timeline;
    const usage = chunk.usage;
    const cum = usage?.completionTokens;
    if (usage !== undefined) {
      if (usage.promptTokens !== undefined) t.promptTokens = usage.promptTokens;
      if (cum !== undefined) t.completionTokens = cum;
      if (usage.cachedTokens !== undefined) t.cachedTokens = usage.cachedTokens;
    }
    if (chunk.hasText && this.continuous === undefined) {
      this.continuous = cum !== undefined && cum > 0;
    }

    let tokens = 0;
    let source: TokenSource | undefined;
    if (this.continuous === true && cum !== undefined) {
      tokens = cum > this.attributed ? cum - this.attributed : 0;
      source = 'usage';
    } else if (chunk.tokenCount !== undefined && chunk.tokenCount > 0) {
      tokens = chunk.tokenCount;
      source = 'chunk-token-ids';
    } else if (chunk.hasText) {
      tokens = 1;
      source = 'chunks';
    }

    if (chunk.hasText && t.firstTokenMs === undefined) t.firstTokenMs = atMs;
    if (t.firstOutputMs === undefined && (chunk.hasText || (cum !== undefined && cum > 0))) t.firstOutputMs = atMs;
    if (tokens > 0 && source !== undefined) {
      // the first token-carrying chunk sets the source; later ones can only weaken it
      if (this.attributed === 0 || TOKEN_SOURCE_RANK[source] < TOKEN_SOURCE_RANK[t.tokenSource]) t.tokenSource = source;
      this.attributed += tokens;
      t.chunkMs.push(atMs);
      t.chunkTokens.push(tokens);
      if (chunk.reasoning) t.reasoningTokens += tokens;
    }
    return tokens;
  }
}
