/**
 * The sim's metrics endpoints: Prometheus text in each personality's naming (ENGINES.md §1–§5),
 * and the request totals the HTTP layer keeps for them.
 */

import type { SimEngine } from './engine-model.js';
import type { SimProfile } from './profiles.js';
import type { TruthRecord } from './truth.js';

const TTFT_BUCKETS_S = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160];

/** A cumulative histogram in seconds. */
export class SecondsHistogram {
  readonly counts = new Array<number>(TTFT_BUCKETS_S.length).fill(0);
  count = 0;
  sum = 0;
  observe(seconds: number): void {
    this.count++;
    this.sum += seconds;
    for (let i = 0; i < TTFT_BUCKETS_S.length; i++) if (seconds <= (TTFT_BUCKETS_S[i] as number)) this.counts[i]!++;
  }
  render(name: string, labels: string, help: string): string {
    let out = `# HELP ${name} ${help}\n# TYPE ${name} histogram\n`;
    for (let i = 0; i < TTFT_BUCKETS_S.length; i++) {
      out += `${name}_bucket{${labels},le="${TTFT_BUCKETS_S[i]}"} ${this.counts[i]}\n`;
    }
    out += `${name}_bucket{${labels},le="+Inf"} ${this.count}\n`;
    out += `${name}_sum{${labels}} ${this.sum}\n${name}_count{${labels}} ${this.count}\n`;
    return out;
  }
}

function num(v: number): string {
  return Number.isInteger(v) ? `${v}.0` : String(v);
}

/** One metric in the text exposition format; no labels (`''`) gives a bare sample line. */
function metric(name: string, type: 'gauge' | 'counter', help: string, labels: string, value: number): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}${labels === '' ? '' : `{${labels}}`} ${num(value)}\n`;
}

/** used KV tokens over the KV capacity (0 without capacity) */
function kvUsage(engine: SimEngine): number {
  return engine.kvCapacityTokens > 0 ? engine.kvUsedTokens / engine.kvCapacityTokens : 0;
}

/** vLLM's or SGLang's `/metrics`; SGLang's token counters grow when a request finishes (`totals`). */
export function renderMetrics(profile: SimProfile, engine: SimEngine, ttft: SecondsHistogram, totals: RequestTotals): string {
  const c = engine.counters;
  const model = JSON.stringify(profile.modelId);
  const usage = kvUsage(engine);
  if (profile.personality === 'vllm') {
    const l = `engine="0",model_name=${model}`;
    const info =
      `block_size="${profile.blockSize}",cache_dtype="auto",enable_prefix_caching="${profile.prefixCaching ? 'True' : 'False'}",` +
      `engine="0",gpu_memory_utilization="0.9",kv_cache_size_tokens="${engine.kvCapacityTokens}",num_gpu_blocks="${engine.kv.totalBlocks}"`;
    return (
      metric('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', l, engine.running.length) +
      metric('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', l, engine.waiting.length) +
      metric('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', l, usage) +
      metric('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', l, c.promptTokensTotal) +
      metric('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', l, c.generationTokensTotal) +
      metric('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', l, c.prefixQueriesTokensTotal) +
      metric('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', l, c.prefixHitsTokensTotal) +
      metric('vllm:num_preemptions_total', 'counter', 'Cumulative number of preemption from the engine.', l, 0) +
      metric('vllm:cache_config_info', 'gauge', 'Information of the LLMEngine CacheConfig', info, 1) +
      ttft.render('vllm:time_to_first_token_seconds', l, 'Histogram of time to first token in seconds.')
    );
  }
  const l = `engine_type="unified",model_name=${model},pp_rank="0",tp_rank="0"`;
  const hitRate = c.prefixQueriesTokensTotal > 0 ? c.prefixHitsTokensTotal / c.prefixQueriesTokensTotal : 0;
  return (
    metric('sglang:num_running_reqs', 'gauge', 'The number of running requests.', l, engine.running.length) +
    metric('sglang:num_queue_reqs', 'gauge', 'The number of requests in the waiting queue.', l, engine.waiting.length) +
    metric('sglang:token_usage', 'gauge', 'The token usage.', l, usage) +
    metric('sglang:num_used_tokens', 'gauge', 'The number of used tokens.', l, engine.kvUsedTokens) +
    metric('sglang:max_total_num_tokens', 'gauge', 'Maximum total number of tokens in the KV cache pool.', l, engine.kvCapacityTokens) +
    metric('sglang:cache_hit_rate', 'gauge', 'The prefix cache hit rate.', l, hitRate) +
    metric('sglang:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', l, totals.promptTokensEnded) +
    metric('sglang:generation_tokens_total', 'counter', 'Number of generation tokens processed.', l, c.generationTokensTotal) +
    metric('sglang:cached_tokens_total', 'counter', 'Number of cached prompt tokens.', l, totals.cachedTokensEnded) +
    metric('sglang:num_requests_total', 'counter', 'Number of requests processed.', l, c.requestsFinishedTotal) +
    ttft.render('sglang:time_to_first_token_seconds', l, 'Histogram of time to first token in seconds.')
  );
}

/** Totals kept by the HTTP layer (requests, llama.cpp's per-request seconds, SGLang's finished requests). */
export interface RequestTotals {
  requestsReceived: number;
  requestsSucceeded: number;
  requestsFailed: number;
  /**
   * llama.cpp b4748 counts a request's computed prompt tokens and its prompt seconds when its first
   * token is sampled (server.cpp: `metrics.on_prompt_eval` at `n_decoded == 1`)
   */
  promptTokensEvaluated: number;
  promptSecondsTotal: number;
  /** and its generated tokens and seconds when it ends (`on_prediction` at release) */
  predictedTokensFinished: number;
  predictedSecondsTotal: number;
  /**
   * SGLang counts prompt tokens (the cached ones included) and cached tokens when a request
   * finishes (TokenizerMetricsCollector.observe_one_finished_request); here: every request that
   * ends after it was admitted
   */
  promptTokensEnded: number;
  cachedTokensEnded: number;
}

/** The request totals of one server, counted as requests arrive, get their first token and end. */
export class ServerTotals implements RequestTotals {
  requestsReceived = 0;
  requestsSucceeded = 0;
  requestsFailed = 0;
  promptTokensEvaluated = 0;
  promptSecondsTotal = 0;
  predictedTokensFinished = 0;
  predictedSecondsTotal = 0;
  promptTokensEnded = 0;
  cachedTokensEnded = 0;

  /** the request's first token (its prompt is evaluated); firstTokenMs is set */
  noteFirstToken(t: TruthRecord): void {
    this.promptTokensEvaluated += t.promptComputedTokens;
    if (t.firstTokenMs !== undefined) this.promptSecondsTotal += t.promptMsUntil(t.firstTokenMs) / 1000;
  }

  noteEnd(t: TruthRecord): void {
    if (t.end === 'done') this.requestsSucceeded++;
    else if (t.end === 'error') this.requestsFailed++;
    this.predictedTokensFinished += t.completionTokens;
    if (t.firstTokenMs !== undefined && t.endMs !== undefined) this.predictedSecondsTotal += Math.max(0, t.endMs - t.firstTokenMs) / 1000;
    if (t.admittedMs !== undefined) {
      this.promptTokensEnded += t.promptTokens;
      this.cachedTokensEnded += t.cachedTokens;
    }
  }
}

function bare(name: string, type: 'gauge' | 'counter', help: string, value: number): string {
  return metric(name, type, help, '', value);
}

/**
 * llama.cpp `/metrics` (ENGINES.md §3): no labels; token and seconds counters grow when a request
 * ends (llama.cpp's on_prediction), so they lag the stream. `names`: b4748's (recorded from a real
 * server), or 'current': today's upstream names without the decode counters (SimProfileParams
 * llamacppMetrics).
 */
export function renderLlamacppMetrics(engine: SimEngine, t: RequestTotals, names: 'b4748' | 'current' = 'b4748'): string {
  const c = engine.counters;
  if (names === 'current') {
    return (
      bare('llamacpp:prompt_tokens_total', 'counter', 'Number of prompt tokens processed, excluding cached tokens', t.promptTokensEvaluated) +
      bare('llamacpp:prompt_tokens_cached_total', 'counter', 'Number of prompt tokens reused from the cache', c.prefixHitsTokensTotal) +
      bare('llamacpp:prompt_seconds_total', 'counter', 'Total time spent processing prompts', t.promptSecondsTotal) +
      bare('llamacpp:tokens_predicted_total', 'counter', 'Number of generation tokens processed', t.predictedTokensFinished) +
      bare('llamacpp:tokens_predicted_seconds_total', 'counter', 'Total time spent generating tokens', t.predictedSecondsTotal) +
      bare('llamacpp:n_tokens_max', 'counter', 'Largest observed sequence length (prompt + generation)', engine.running.reduce((m, r) => Math.max(m, r.prompt.tokens + r.generated), 0)) +
      bare('llamacpp:spec_decode_num_draft_tokens_total', 'counter', 'Speculative: Total draft tokens generated', 0) +
      bare('llamacpp:spec_decode_num_accepted_tokens_total', 'counter', 'Speculative: Total draft tokens accepted by the target model', 0) +
      bare('llamacpp:spec_decode_num_drafts_total', 'counter', 'Speculative: Total speculative decoding verification steps', 0) +
      bare('llamacpp:prompt_tokens_seconds', 'gauge', 'Average prompt throughput in tokens/s', 0) +
      bare('llamacpp:predicted_tokens_seconds', 'gauge', 'Average generation throughput in tokens/s', 0) +
      bare('llamacpp:kv_cache_tokens', 'gauge', 'KV-cache tokens.', engine.kvUsedTokens) +
      bare('llamacpp:requests_processing', 'gauge', 'Number of requests processing', engine.running.length) +
      bare('llamacpp:requests_deferred', 'gauge', 'Number of requests deferred', engine.waiting.length)
    );
  }
  return (
    bare('llamacpp:prompt_tokens_total', 'counter', 'Number of prompt tokens processed.', t.promptTokensEvaluated) +
    bare('llamacpp:prompt_seconds_total', 'counter', 'Prompt process time', t.promptSecondsTotal) +
    bare('llamacpp:tokens_predicted_total', 'counter', 'Number of generation tokens processed.', t.predictedTokensFinished) +
    bare('llamacpp:tokens_predicted_seconds_total', 'counter', 'Predict process time', t.predictedSecondsTotal) +
    bare('llamacpp:n_decode_total', 'counter', 'Total number of llama_decode() calls', c.stepCount) +
    // typed counter but a running average over the server's life, as the real server has it
    bare('llamacpp:n_busy_slots_per_decode', 'counter', 'Average number of busy slots per llama_decode() call', c.stepCount > 0 ? c.busySlotsTotal / c.stepCount : 0) +
    bare('llamacpp:prompt_tokens_seconds', 'gauge', 'Average prompt throughput in tokens/s.', 0) +
    bare('llamacpp:predicted_tokens_seconds', 'gauge', 'Average generation throughput in tokens/s.', 0) +
    // b4748 (recorded from a real server) has these two; later builds dropped them
    bare('llamacpp:kv_cache_usage_ratio', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', kvUsage(engine)) +
    bare('llamacpp:kv_cache_tokens', 'gauge', 'KV-cache tokens.', engine.kvUsedTokens) +
    bare('llamacpp:requests_processing', 'gauge', 'Number of requests processing.', engine.running.length) +
    bare('llamacpp:requests_deferred', 'gauge', 'Number of requests deferred.', engine.waiting.length)
  );
}

/** TGI `/metrics` (ENGINES.md §4): no `_total` suffix, no model label. */
export function renderTgiMetrics(engine: SimEngine, t: RequestTotals): string {
  return (
    bare('tgi_queue_size', 'gauge', 'Current queue size', engine.waiting.length) +
    bare('tgi_batch_current_size', 'gauge', 'Current batch size', engine.running.length) +
    bare('tgi_batch_current_max_tokens', 'gauge', 'Maximum tokens for the current batch', engine.kvUsedTokens) +
    bare('tgi_batch_max_total_tokens', 'gauge', 'Maximum amount of tokens in total.', engine.kvCapacityTokens) +
    bare('tgi_request_count', 'counter', 'Total number of requests', t.requestsReceived) +
    bare('tgi_request_success', 'counter', 'Number of successful requests', t.requestsSucceeded) +
    metric('tgi_request_failure', 'counter', 'Number of failed requests', 'err="validation"', t.requestsFailed)
  );
}

/** TRT-LLM `/prometheus/metrics` (newest versions; labels set to "undefined" as in the version read). */
export function renderTrtllmPrometheus(engine: SimEngine, t: RequestTotals, ttft: SecondsHistogram): string {
  const l = 'engine_type="undefined",model_name="undefined"';
  const usage = kvUsage(engine);
  return (
    metric('trtllm_request_success_total', 'counter', 'Count of successfully processed requests.', l, t.requestsSucceeded) +
    metric('trtllm_num_requests_running', 'gauge', 'Number of requests currently running.', l, engine.running.length) +
    metric('trtllm_num_requests_waiting', 'gauge', 'Number of requests waiting.', l, engine.waiting.length) +
    metric('trtllm_kv_cache_utilization', 'gauge', 'KV cache utilization (0-1).', l, usage) +
    metric('trtllm_kv_cache_max_blocks', 'gauge', 'Maximum number of KV cache blocks.', l, engine.kv.totalBlocks) +
    ttft.render('trtllm_time_to_first_token_seconds', l, 'Histogram of time to first token in seconds.')
  );
}
