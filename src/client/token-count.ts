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
 *
 * With `keepText` the text of each token-carrying chunk is kept (`chunkText`). With `recountTokens`
 * (a local tokenizer, src/tokenizer/recount.ts) a request whose tokens came from `chunks` (no
 * continuous usage, no token ids) is recounted from its text when it ends (`complete()`): each
 * chunk's tokens become its tokenized text, chunks left with no token are dropped, reasoning tokens
 * are recounted, and `tokenSource` becomes `local-tokenizer`. Arrival times stay per chunk.
 */
import type { DecodedChunk } from '../shapes/engine.js';
import { TOKEN_SOURCE_RANK, type RequestTimeline, type TokenSource } from '../shapes/timeline.js';

export interface TokenCounterOptions {
  /** keep each token-carrying chunk's text in `timeline.chunkText` */
  keepText?: boolean;
  /** tokens of each chunk from the chunks' texts (sum = tokens of the whole text); implies keepText */
  recountTokens?: (texts: readonly string[]) => number[];
}

export class TokenCounter {
  /** undefined until the first text-carrying chunk decides it */
  private continuous: boolean | undefined = undefined;
  /** tokens attributed to chunks so far */
  private attributed = 0;
  private readonly keepText: boolean;
  /** parallel to chunkTokens: the chunk was a reasoning delta (for the recount) */
  private readonly reasoningFlags: boolean[] = [];
  private completed = false;

  constructor(
    private readonly timeline: RequestTimeline,
    private readonly options: TokenCounterOptions = {},
  ) {
    this.keepText = options.keepText === true || options.recountTokens !== undefined;
    if (this.keepText) timeline.chunkText = [];
  }

  /**
   * The request has ended: recount its tokens from the text when a recount is given and the
   * tokens came from chunks. Once; later calls do nothing.
   */
  complete(): void {
    if (this.completed) return;
    this.completed = true;
    const t = this.timeline;
    const recount = this.options.recountTokens;
    if (!recount || t.tokenSource !== 'chunks' || !t.chunkText || t.chunkText.length === 0) return;
    const counts = recount(t.chunkText);
    if (counts.length !== t.chunkText.length) return; // a broken counter: keep the chunk counts
    const ms: number[] = [];
    const tokens: number[] = [];
    const texts: string[] = [];
    let reasoning = 0;
    counts.forEach((n, i) => {
      if (n <= 0) return;
      ms.push(t.chunkMs[i]!);
      tokens.push(n);
      texts.push(t.chunkText![i]!);
      if (this.reasoningFlags[i]) reasoning += n;
    });
    t.chunkMs = ms;
    t.chunkTokens = tokens;
    t.chunkText = texts;
    t.reasoningTokens = reasoning;
    t.tokenSource = 'local-tokenizer';
  }

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
      // the request is streaming: its arrays are still the plain ones it started with (compact.ts
      // makes them typed arrays only once it has ended)
      (t.chunkMs as number[]).push(atMs);
      (t.chunkTokens as number[]).push(tokens);
      if (chunk.reasoning) t.reasoningTokens += tokens;
      if (this.keepText) {
        t.chunkText!.push(chunk.text ?? '');
        this.reasoningFlags.push(chunk.reasoning);
      }
    }
    return tokens;
  }
}
