/**
 * vLLM (v0.11+, V1) adapter (ENGINES.md §1).
 *
 * Requests: `max_tokens` (accepted on chat and completions by every vLLM version; chat's newer
 * `max_completion_tokens` would exclude old builds), `ignore_eos` when forceLength,
 * `stream_options: {include_usage, continuous_usage_stats}` (continuous usage needs include_usage).
 *
 * Probe: `/v1/models` (model, max_model_len), `/version`, `/metrics` (`vllm:cache_config_info`:
 * `kv_cache_size_tokens` when present, else num_gpu_blocks × block_size; block_size), `POST /tokenize`
 * (tried once with "Hi"; tokenizePath set only when it answers with a count), and
 * `GET /server_info?config_format=json` (only with VLLM_SERVER_DEV_MODE=1) for launch args and
 * `scheduler_config.max_num_seqs`. vLLM has no abort endpoint: closing the stream aborts, so no `abort`.
 */
import { asNumber, asRecord, asString, isOk, timedGet, tryCall } from './http.js';
import { ContinuousUsageAdapter, modelsFacts, probeModels } from './openai.js';
import { filterIfPresent, meanMetric, parsePrometheus, readHistogram, readLabels, sumMetric, type PromSample } from './prometheus.js';
import { postForTokenCount, tokenizeCount } from './tokenize.js';
import type { EndpointKind, EngineKind, HttpTarget, MetricsSample, ServerFacts } from '../shapes/engine.js';

export const VLLM_METRICS_PATH = '/metrics';
export const VLLM_TOKENIZE_PATH = '/tokenize';

const RUNNING = ['vllm:num_requests_running'];
const WAITING = ['vllm:num_requests_waiting'];
const KV_USAGE = ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'];
const PROMPT_TOKENS = ['vllm:prompt_tokens_total'];
const GENERATION_TOKENS = ['vllm:generation_tokens_total'];
const CACHED_TOKENS = ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total'];
/** the queries counter of the same pair (tokens; `gpu_` before vLLM 0.9) */
const PREFIX_QUERIES = ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total'];

/** Normalise one vLLM scrape (sum over label sets; KV usage is the mean over engines). */
export function vllmMetricsFromSamples(samples: readonly PromSample[], atMs: number, modelName?: string): MetricsSample {
  const filter = filterIfPresent(samples, RUNNING, 'model_name', modelName);
  const out: MetricsSample = { atMs };
  const set = <K extends keyof MetricsSample>(key: K, value: MetricsSample[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  set('running', sumMetric(samples, RUNNING, filter));
  set('waiting', sumMetric(samples, WAITING, filter));
  set('kvUsage', meanMetric(samples, KV_USAGE, filter));
  set('promptTokensTotal', sumMetric(samples, PROMPT_TOKENS, filter));
  set('generationTokensTotal', sumMetric(samples, GENERATION_TOKENS, filter));
  set('cachedTokensTotal', sumMetric(samples, CACHED_TOKENS, filter));
  set('prefixQueriedTokensTotal', sumMetric(samples, PREFIX_QUERIES, filter));
  set('ttftHistogram', readHistogram(samples, 'vllm:time_to_first_token_seconds', filter));
  return out;
}

/** KV capacity and block size from `vllm:cache_config_info` labels. */
export function vllmCacheFacts(samples: readonly PromSample[]): Pick<ServerFacts, 'kvCapacityTokens' | 'blockSize'> {
  const labels = readLabels(samples, 'vllm:cache_config_info');
  if (!labels) return {};
  const out: Pick<ServerFacts, 'kvCapacityTokens' | 'blockSize'> = {};
  const blockSize = asNumber(labels.block_size);
  const blocks = asNumber(labels.num_gpu_blocks);
  const sizeTokens = asNumber(labels.kv_cache_size_tokens);
  if (blockSize !== undefined && blockSize > 0) out.blockSize = { value: blockSize, source: 'vllm:cache_config_info block_size' };
  if (sizeTokens !== undefined && sizeTokens > 0) {
    out.kvCapacityTokens = { value: sizeTokens, source: 'vllm:cache_config_info kv_cache_size_tokens' };
  } else if (blocks !== undefined && blocks > 0 && blockSize !== undefined && blockSize > 0) {
    out.kvCapacityTokens = { value: blocks * blockSize, source: 'vllm:cache_config_info num_gpu_blocks × block_size' };
  }
  return out;
}

export class VllmAdapter extends ContinuousUsageAdapter {
  override readonly kind: EngineKind = 'vllm';

  override async probe(target: HttpTarget, model?: string): Promise<ServerFacts> {
    const models = await probeModels(target, model);
    const facts = modelsFacts('vllm', models);

    const [version, metrics, info, tokenize] = await Promise.all([
      tryCall(target, 'GET', '/version'),
      tryCall(target, 'GET', VLLM_METRICS_PATH),
      tryCall(target, 'GET', '/server_info?config_format=json'),
      tryCall(target, 'POST', VLLM_TOKENIZE_PATH, { model: models.model.value, prompt: 'Hi' }),
    ]);

    const v = isOk(version) ? asString(asRecord(version.json)?.version) : undefined;
    if (v !== undefined) facts.version = { value: v, source: 'GET /version' };

    if (isOk(metrics) && metrics.text.includes('vllm:')) {
      facts.metricsPath = VLLM_METRICS_PATH;
      Object.assign(facts, vllmCacheFacts(parsePrometheus(metrics.text).samples));
    }

    if (tokenizeCount(tokenize) !== undefined) facts.tokenizePath = VLLM_TOKENIZE_PATH;

    if (isOk(info)) {
      const root = asRecord(info.json);
      let config: unknown = root?.vllm_config;
      if (typeof config === 'string') {
        try {
          config = JSON.parse(config);
        } catch {
          config = undefined; // the plain-text config form is not machine-readable
        }
      }
      const cfg = asRecord(config);
      if (cfg) {
        facts.launchArgs = { value: cfg, source: 'GET /server_info vllm_config' };
        const maxSeqs = asNumber(asRecord(cfg.scheduler_config)?.max_num_seqs);
        if (maxSeqs !== undefined && maxSeqs > 0) {
          facts.maxRunningRequests = { value: maxSeqs, source: 'GET /server_info vllm_config.scheduler_config.max_num_seqs' };
        }
      }
    }
    return facts;
  }

  async readMetrics(target: HttpTarget, facts: ServerFacts): Promise<MetricsSample | undefined> {
    if (!facts.metricsPath) return undefined;
    const { result, atMs } = await timedGet(target, facts.metricsPath);
    if (!isOk(result)) return undefined;
    return vllmMetricsFromSamples(parsePrometheus(result.text).samples, atMs, facts.model.value);
  }

  async countTokens(target: HttpTarget, facts: ServerFacts, text: string, endpoint: EndpointKind): Promise<number | undefined> {
    if (!facts.tokenizePath) return undefined;
    const body =
      endpoint === 'chat'
        ? { model: facts.model.value, messages: [{ role: 'user', content: text }], add_generation_prompt: true }
        : { model: facts.model.value, prompt: text };
    return postForTokenCount(target, facts.tokenizePath, body);
  }
}

