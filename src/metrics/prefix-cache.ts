/**
 * The prefix-cache hit rate of a window (issue 23): prompt tokens served from the server's prefix
 * cache over prompt tokens sent, from the best evidence the server gives, in this order:
 *
 * 1. `server-counters`: the server's own hit and query counters, both in tokens (vLLM
 *    `prefix_cache_hits_total` / `prefix_cache_queries_total`; SGLang `cached_tokens_total` /
 *    `prompt_tokens_total`; the simulator's, which are these): their growth between the first and
 *    the last sample taken inside the window that carry both.
 * 2. `processed-tokens` (llama.cpp, whose counters count the prompt tokens it COMPUTED, the cache
 *    left out): per request, the prompt tokens sent (usage.prompt_tokens, which counts the whole
 *    prompt) minus those the server says it processed (`timings.prompt_n`, b4748's final chunk),
 *    over the requests whose first token came inside the window and that carry both. Without
 *    per-request timings: the prompt tokens sent by the requests whose first token came between the
 *    first and the last sample, minus the growth of the processed counter between those samples
 *    (llama.cpp adds a request's processed tokens when its first token is sampled); every such
 *    request must have its usage, else this says nothing.
 * 3. `usage`: Σ usage.prompt_tokens_details.cached_tokens / Σ usage.prompt_tokens over the
 *    requests whose first token came inside the window and that carry both.
 *
 * Undefined when no source says anything, when nothing was queried, and for a source whose
 * counters went down inside the window (a server restart: a reset, not a negative rate) or whose
 * hits exceed its queries (counters that do not belong together); the next source is tried then.
 * Pure: the samples and timelines are the cell runner's (load/cell.ts CellRun).
 */
import type { MetricsSample, ServerRequestTimings } from '../shapes/engine.js';
import type { PrefixCacheFigures } from '../shapes/result.js';
import type { RequestTimeline } from '../shapes/timeline.js';

export interface PrefixCacheInput {
  /** the server's metrics samples taken inside the window, oldest first (CellRun.samples) */
  samples: readonly MetricsSample[];
  /** the cell's requests (CellRun.timelines) */
  timelines: readonly RequestTimeline[];
  windowStartMs: number;
  windowEndMs: number;
  /** the server's own timings per request id, where its chunks carry them (CellRun.serverTimings; llama.cpp) */
  serverTimings?: ReadonlyMap<string, ServerRequestTimings>;
}

/** hits and queries → figures; undefined when nothing was queried or the pair is inconsistent */
function figures(hitTokens: number, queriedTokens: number, source: PrefixCacheFigures['source']): PrefixCacheFigures | undefined {
  if (!(queriedTokens > 0) || hitTokens < 0 || hitTokens > queriedTokens) return undefined;
  return { hitRate: hitTokens / queriedTokens, hitTokens, queriedTokens, source };
}

/**
 * The samples that carry every one of `keys`, oldest first; undefined when fewer than two, or when
 * any of those counters goes down from one such sample to the next (a reset).
 */
function counterSpan(samples: readonly MetricsSample[], keys: readonly (keyof MetricsSample)[]): MetricsSample[] | undefined {
  const withAll = samples.filter((s) => keys.every((k) => typeof s[k] === 'number' && Number.isFinite(s[k])));
  if (withAll.length < 2) return undefined;
  for (let i = 1; i < withAll.length; i++) {
    for (const k of keys) if ((withAll[i]![k] as number) < (withAll[i - 1]![k] as number)) return undefined;
  }
  return withAll;
}

/** Source 1: the growth of the server's hit and query counters over the window's samples. */
export function prefixFromCounters(samples: readonly MetricsSample[]): PrefixCacheFigures | undefined {
  const span = counterSpan(samples, ['cachedTokensTotal', 'prefixQueriedTokensTotal']);
  if (!span) return undefined;
  const first = span[0]!;
  const last = span[span.length - 1]!;
  return figures(last.cachedTokensTotal! - first.cachedTokensTotal!, last.prefixQueriedTokensTotal! - first.prefixQueriedTokensTotal!, 'server-counters');
}

/** the request's first token came inside [fromMs, toMs] */
function firstTokenIn(t: RequestTimeline, fromMs: number, toMs: number): boolean {
  return t.firstTokenMs !== undefined && t.firstTokenMs >= fromMs && t.firstTokenMs <= toMs;
}

/** Source 2a: per request, prompt tokens sent minus those the server processed (its own timings). */
function processedFromTimings(input: PrefixCacheInput): PrefixCacheFigures | undefined {
  const timings = input.serverTimings;
  if (!timings || timings.size === 0) return undefined;
  let hit = 0;
  let queried = 0;
  for (const t of input.timelines) {
    const processed = timings.get(t.id)?.promptN;
    if (processed === undefined || t.promptTokens === undefined || !firstTokenIn(t, input.windowStartMs, input.windowEndMs)) continue;
    // processed > sent cannot happen on one request; counted as no hit rather than a negative one
    hit += Math.max(0, t.promptTokens - processed);
    queried += t.promptTokens;
  }
  return figures(hit, queried, 'processed-tokens');
}

/** Source 2b: prompt tokens sent between two samples minus the growth of the processed counter. */
function processedFromCounter(input: PrefixCacheInput): PrefixCacheFigures | undefined {
  const span = counterSpan(input.samples, ['promptTokensProcessedTotal']);
  if (!span) return undefined;
  const first = span[0]!;
  const last = span[span.length - 1]!;
  let sent = 0;
  for (const t of input.timelines) {
    // counted by the server at its first token: after the first sample, by the last one
    if (t.firstTokenMs === undefined || !(t.firstTokenMs > first.atMs && t.firstTokenMs <= last.atMs)) continue;
    if (t.promptTokens === undefined) return undefined; // a request whose size is unknown: the sum would be short
    sent += t.promptTokens;
  }
  const processed = last.promptTokensProcessedTotal! - first.promptTokensProcessedTotal!;
  // a request in flight across a sample boundary can move a few tokens either way: never below 0
  return figures(Math.max(0, sent - processed), sent, 'processed-tokens');
}

/** Source 2: llama.cpp's processed prompt tokens against the prompt tokens sent. */
export function prefixFromProcessed(input: PrefixCacheInput): PrefixCacheFigures | undefined {
  return processedFromTimings(input) ?? processedFromCounter(input);
}

/** Source 3: the requests' own usage (cached_tokens of prompt_tokens). */
export function prefixFromUsage(input: Pick<PrefixCacheInput, 'timelines' | 'windowStartMs' | 'windowEndMs'>): PrefixCacheFigures | undefined {
  let hit = 0;
  let queried = 0;
  for (const t of input.timelines) {
    if (t.cachedTokens === undefined || t.promptTokens === undefined || !firstTokenIn(t, input.windowStartMs, input.windowEndMs)) continue;
    hit += Math.min(t.cachedTokens, t.promptTokens);
    queried += t.promptTokens;
  }
  return figures(hit, queried, 'usage');
}

/** The window's prefix-cache hit rate from the best source that says (see the file comment). */
export function prefixCacheFigures(input: PrefixCacheInput): PrefixCacheFigures | undefined {
  return prefixFromCounters(input.samples) ?? prefixFromProcessed(input) ?? prefixFromUsage(input);
}
