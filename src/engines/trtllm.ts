/**
 * TensorRT-LLM `trtllm-serve` adapter (ENGINES.md §6).
 *
 * Requests: TRT-LLM's request models forbid unknown fields (400), so only these are sent — chat:
 * `model, messages, max_completion_tokens, stream, stream_options, ignore_eos`; completions:
 * `model, prompt, max_tokens, stream, stream_options, ignore_eos` (ignore_eos only when
 * forceLength). `stream_options: {include_usage, continuous_usage_stats}` (per-chunk usage).
 *
 * Probe: `/v1/models` (owned_by tensorrt_llm; no max_model_len), `/version`, the JSON iteration
 * stats at `GET /metrics` (`kvCacheStats.maxNumBlocks × tokensPerBlock` = KV capacity,
 * `tokensPerBlock` = block size, `maxNumActiveRequests`), and the Prometheus endpoint
 * `/prometheus/metrics` when it has `trtllm_num_requests_running` (newest versions).
 * The JSON stats exist only for iterations that ran and each scrape drains them, so an idle
 * server answers `[]`: the probe then sends one 1-token request and scrapes again.
 *
 * State: from Prometheus when present (running, waiting, KV utilisation, TTFT histogram; it does
 * not drain), else the last entry of the JSON stats (an empty scrape says nothing). TRT-LLM has no
 * abort call (closing the stream aborts) and no generation-token counter.
 */
import { asNumber, asRecord, asString, isOk, timedGet, tryCall, type HttpResult } from './http.js';
import { CHAT_PATH, COMPLETIONS_PATH, OpenAIAdapter, modelsFacts, probeModels } from './openai.js';
import { parsePrometheus, readHistogram, sumMetric, type PromSample } from './prometheus.js';
import { postForTokenCount, tokenizeCount } from './tokenize.js';
import type { EndpointKind, EngineKind, HttpTarget, MetricsSample, RequestSpec, ServerFacts } from '../shapes/engine.js';

export const TRTLLM_JSON_METRICS_PATH = '/metrics';
export const TRTLLM_PROMETHEUS_PATH = '/prometheus/metrics';
export const TRTLLM_TOKENIZE_PATH = '/_internal/tokenize';

/** The newest entry of a JSON `/metrics` body (an array of iteration stats), or undefined. */
export function latestIterationStats(json: unknown): Record<string, unknown> | undefined {
  if (!Array.isArray(json) || json.length === 0) return undefined;
  return asRecord(json[json.length - 1]);
}

/** Normalise one JSON iteration-stats entry. */
export function trtllmStatsSample(stats: Record<string, unknown>, atMs: number): MetricsSample {
  const out: MetricsSample = { atMs };
  const running = asNumber(stats.numActiveRequests);
  const waiting = asNumber(stats.numQueuedRequests);
  if (running !== undefined) out.running = running;
  if (waiting !== undefined) out.waiting = waiting;
  const kv = asRecord(stats.kvCacheStats);
  const max = asNumber(kv?.maxNumBlocks);
  const used = asNumber(kv?.usedNumBlocks);
  if (max !== undefined && max > 0 && used !== undefined) out.kvUsage = Math.min(1, used / max);
  return out;
}

/** Capacity facts from one JSON iteration-stats entry. */
export function trtllmStatsFacts(stats: Record<string, unknown>): Partial<ServerFacts> {
  const out: Partial<ServerFacts> = {};
  const kv = asRecord(stats.kvCacheStats);
  const blocks = asNumber(kv?.maxNumBlocks);
  const perBlock = asNumber(kv?.tokensPerBlock);
  if (perBlock !== undefined && perBlock > 0) out.blockSize = { value: perBlock, source: 'GET /metrics kvCacheStats.tokensPerBlock' };
  if (blocks !== undefined && blocks > 0 && perBlock !== undefined && perBlock > 0) {
    out.kvCapacityTokens = { value: blocks * perBlock, source: 'GET /metrics kvCacheStats.maxNumBlocks × tokensPerBlock' };
  }
  const maxActive = asNumber(stats.maxNumActiveRequests);
  if (maxActive !== undefined && maxActive > 0) out.maxRunningRequests = { value: maxActive, source: 'GET /metrics maxNumActiveRequests' };
  return out;
}

/** Normalise one `/prometheus/metrics` scrape. */
export function trtllmPrometheusSample(samples: readonly PromSample[], atMs: number): MetricsSample {
  const out: MetricsSample = { atMs };
  const running = sumMetric(samples, ['trtllm_num_requests_running']);
  const waiting = sumMetric(samples, ['trtllm_num_requests_waiting']);
  const usage = sumMetric(samples, ['trtllm_kv_cache_utilization']);
  const ttft = readHistogram(samples, 'trtllm_time_to_first_token_seconds');
  if (running !== undefined) out.running = running;
  if (waiting !== undefined) out.waiting = waiting;
  if (usage !== undefined) out.kvUsage = usage;
  if (ttft) out.ttftHistogram = ttft;
  return out;
}

export class TrtllmAdapter extends OpenAIAdapter {
  override readonly kind: EngineKind = 'trtllm';

  /** Only fields TRT-LLM's request models declare (unknown fields are a 400). */
  override buildStreamRequest(spec: RequestSpec): { path: string; body: Record<string, unknown> } {
    const common: Record<string, unknown> = {
      model: spec.model,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
      ...(spec.forceLength ? { ignore_eos: true } : {}),
    };
    if (spec.endpoint === 'chat') {
      return { path: CHAT_PATH, body: { ...common, max_completion_tokens: spec.maxTokens, messages: spec.messages ?? [{ role: 'user', content: spec.prompt }] } };
    }
    return { path: COMPLETIONS_PATH, body: { ...common, max_tokens: spec.maxTokens, prompt: spec.prompt } };
  }

  override async probe(target: HttpTarget, model?: string): Promise<ServerFacts> {
    const models = await probeModels(target, model);
    const facts = modelsFacts('trtllm', models, 'tensorrt_llm');
    const [version, json, prom, tokenize] = await Promise.all([
      tryCall(target, 'GET', '/version'),
      tryCall(target, 'GET', TRTLLM_JSON_METRICS_PATH),
      tryCall(target, 'GET', TRTLLM_PROMETHEUS_PATH),
      tryCall(target, 'POST', TRTLLM_TOKENIZE_PATH, { prompt: 'Hi' }),
    ]);
    const v = isOk(version) ? asString(asRecord(version.json)?.version) : undefined;
    if (v !== undefined) facts.version = { value: v, source: 'GET /version' };

    let stats = isOk(json) ? latestIterationStats(json.json) : undefined;
    const jsonAnswers = isOk(json) && Array.isArray(json.json);
    if (!stats && jsonAnswers) stats = await this.statsAfterOneRequest(target, facts.model.value);
    if (stats) Object.assign(facts, trtllmStatsFacts(stats));

    if (isOk(prom) && prom.text.includes('trtllm_num_requests_running')) facts.metricsPath = TRTLLM_PROMETHEUS_PATH;
    else if (jsonAnswers) facts.metricsPath = TRTLLM_JSON_METRICS_PATH;
    if (tokenizeCount(tokenize) !== undefined) facts.tokenizePath = TRTLLM_TOKENIZE_PATH;
    return facts;
  }

  /** An idle server has no iteration stats: run one 1-token request, then scrape again. */
  private async statsAfterOneRequest(target: HttpTarget, model: string): Promise<Record<string, unknown> | undefined> {
    const res: HttpResult | undefined = await tryCall(target, 'POST', COMPLETIONS_PATH, { model, prompt: 'Hi', max_tokens: 1 }, { timeoutMs: 60_000 });
    if (!isOk(res)) return undefined;
    const again = await tryCall(target, 'GET', TRTLLM_JSON_METRICS_PATH);
    return isOk(again) ? latestIterationStats(again.json) : undefined;
  }

  async readMetrics(target: HttpTarget, facts: ServerFacts): Promise<MetricsSample | undefined> {
    if (!facts.metricsPath) return undefined;
    const { result: res, atMs } = await timedGet(target, facts.metricsPath);
    if (!isOk(res)) return undefined;
    if (facts.metricsPath === TRTLLM_PROMETHEUS_PATH) return trtllmPrometheusSample(parsePrometheus(res.text).samples, atMs);
    const stats = latestIterationStats(res.json);
    // no iteration since the last scrape: nothing known (the queue was drained by that scrape)
    return stats ? trtllmStatsSample(stats, atMs) : { atMs };
  }

  async countTokens(target: HttpTarget, facts: ServerFacts, text: string, endpoint: EndpointKind): Promise<number | undefined> {
    // the internal tokenize has no chat form; calibration falls back to the server's usage for chat
    if (!facts.tokenizePath || endpoint === 'chat') return undefined;
    return postForTokenCount(target, facts.tokenizePath, { prompt: text });
  }
}
