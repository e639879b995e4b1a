/**
 * SGLang (0.5.x) adapter (ENGINES.md §2).
 *
 * Requests: `max_tokens`, `ignore_eos` when forceLength, `stream_options: {include_usage,
 * continuous_usage_stats}`.
 *
 * Probe: `/get_server_info` (fallback `/server_info`): `max_total_num_tokens` = KV capacity,
 * `version`, the server args (top-level fields, or a nested `server_args` object) as launch args,
 * `max_running_requests` from the server args (else from `internal_states[0]`); `/v1/models`;
 * `/metrics` when it has `sglang:` series; `POST /v1/tokenize` (tried once with "Hi").
 *
 * Tokenize: SGLang's tokenize has no chat (`messages`) form, so a chat count is the text's count
 * plus the chat-template overhead, measured once per (server, model) by sending one non-streaming
 * chat request with max_tokens = 1 and comparing its `usage.prompt_tokens` with the count of the
 * same text. That assumes the template adds a fixed number of tokens around the message, which
 * holds for ordinary templates (BPE merges across the template boundary can move it by a token).
 *
 * Abort: requests carry our request id as SGLang's `rid`, so `POST /abort_request {rid}` stops the
 * ones still running at a window's end.
 */
import { asNumber, asRecord, asString, isOk, postJson, timedGet, tryCall, type HttpResult } from './http.js';
import { CHAT_PATH, ContinuousUsageAdapter, modelsFacts, probeModels } from './openai.js';
import { filterIfPresent, meanMetric, parsePrometheus, readHistogram, sumMetricOverReplicas, type PromSample } from './prometheus.js';
import { postForTokenCount, tokenizeCount, tokenizeError } from './tokenize.js';
import type { EndpointKind, EngineKind, HttpTarget, MetricsSample, RequestSpec, ServerFacts } from '../shapes/engine.js';

export const SGLANG_METRICS_PATH = '/metrics';
export const SGLANG_TOKENIZE_PATH = '/v1/tokenize';
/** The text used to measure the chat-template overhead. */
export const CHAT_OVERHEAD_PROBE_TEXT = 'Hello there, how are you today?';

const RUNNING = ['sglang:num_running_reqs'];
const WAITING = ['sglang:num_queue_reqs'];
const KV_USAGE = ['sglang:token_usage'];
const PROMPT_TOKENS = ['sglang:prompt_tokens_total'];
const GENERATION_TOKENS = ['sglang:generation_tokens_total'];
const CACHED_TOKENS = ['sglang:cached_tokens_total'];

/** Fields of /get_server_info that are not server args. */
const NON_ARG_KEYS = new Set(['internal_states', 'version', 'max_total_num_tokens', 'max_req_input_len', 'status', 'scheduler_info']);

/**
 * Tensor/pipeline-parallel ranks of one data-parallel rank run one scheduler's batch; if more than
 * one of them exports the gauges, they are copies, not extra requests (counted once, by max).
 */
export const SGLANG_REPLICA_LABELS = ['tp_rank', 'pp_rank'];

/** Normalise one SGLang scrape: summed over dp ranks (tp/pp copies once); token_usage is the mean. */
export function sglangMetricsFromSamples(samples: readonly PromSample[], atMs: number, modelName?: string): MetricsSample {
  const filter = filterIfPresent(samples, RUNNING, 'model_name', modelName);
  const out: MetricsSample = { atMs };
  const set = <K extends keyof MetricsSample>(key: K, value: MetricsSample[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  set('running', sumMetricOverReplicas(samples, RUNNING, SGLANG_REPLICA_LABELS, filter));
  set('waiting', sumMetricOverReplicas(samples, WAITING, SGLANG_REPLICA_LABELS, filter));
  set('kvUsage', meanMetric(samples, KV_USAGE, filter));
  set('promptTokensTotal', sumMetricOverReplicas(samples, PROMPT_TOKENS, SGLANG_REPLICA_LABELS, filter));
  set('generationTokensTotal', sumMetricOverReplicas(samples, GENERATION_TOKENS, SGLANG_REPLICA_LABELS, filter));
  set('cachedTokensTotal', sumMetricOverReplicas(samples, CACHED_TOKENS, SGLANG_REPLICA_LABELS, filter));
  // the hit rate's denominator: prompt_tokens_total counts every prompt token, the cached ones
  // included, when the request finishes, as cached_tokens_total does (ENGINES.md "Gauge caveat":
  // the cache_hit_rate gauge is the last prefill batch's only)
  if (out.cachedTokensTotal !== undefined && out.promptTokensTotal !== undefined) out.prefixQueriedTokensTotal = out.promptTokensTotal;
  // one scheduler's histogram per dp rank; tp/pp copies would double it, so read the tp_rank 0 ones when labelled
  const rank0 = samples.some((s) => s.name === 'sglang:time_to_first_token_seconds_bucket' && s.labels.tp_rank !== undefined);
  set('ttftHistogram', readHistogram(samples, 'sglang:time_to_first_token_seconds', { ...filter, ...(rank0 ? { tp_rank: '0' } : {}) }));
  return out;
}

/** Facts from a /get_server_info body. */
export function sglangServerInfoFacts(json: unknown, source: string): Partial<ServerFacts> {
  const root = asRecord(json);
  if (!root) return {};
  const out: Partial<ServerFacts> = {};
  const kv = asNumber(root.max_total_num_tokens);
  if (kv !== undefined && kv > 0) out.kvCapacityTokens = { value: kv, source: `${source} max_total_num_tokens` };
  const version = asString(root.version);
  if (version !== undefined) out.version = { value: version, source: `${source} version` };
  const nested = asRecord(root.server_args);
  const args: Record<string, unknown> = {};
  if (nested) Object.assign(args, nested);
  else for (const [k, v] of Object.entries(root)) if (!NON_ARG_KEYS.has(k)) args[k] = v;
  if (Object.keys(args).length > 0) out.launchArgs = { value: args, source: nested ? `${source} server_args` : source };
  const fromArgs = asNumber(args.max_running_requests);
  const states = Array.isArray(root.internal_states) ? asRecord(root.internal_states[0]) : undefined;
  const fromState = asNumber(states?.max_running_requests);
  if (fromArgs !== undefined && fromArgs > 0) {
    out.maxRunningRequests = { value: fromArgs, source: `${source} max_running_requests` };
  } else if (fromState !== undefined && fromState > 0) {
    out.maxRunningRequests = { value: fromState, source: `${source} internal_states[0].max_running_requests` };
  }
  const pageSize = asNumber(args.page_size);
  if (pageSize !== undefined && pageSize > 0) out.blockSize = { value: pageSize, source: `${source} page_size` };
  return out;
}

/** SGLang's abort by request id (`AbortReq {rid}`), sent for every request still running at a window's end */
export const SGLANG_ABORT_PATH = '/abort_request';

export class SglangAdapter extends ContinuousUsageAdapter {
  override readonly kind: EngineKind = 'sglang';

  /** `rid`: SGLang's request id, the one /abort_request takes (its OpenAI protocol accepts it) */
  protected override extraFields(spec: RequestSpec): Record<string, unknown> {
    return { ...super.extraFields(spec), ...(spec.requestId !== undefined ? { rid: spec.requestId } : {}) };
  }

  /**
   * Stop a request now rather than when SGLang next notices its closed connection: leftover load
   * from one cell must not run into the next (the reference pages' tool does this since 0.4.33).
   */
  async abort(target: HttpTarget, requestId: string): Promise<void> {
    await tryCall(target, 'POST', SGLANG_ABORT_PATH, { rid: requestId }, { timeoutMs: 2_000 });
  }
  /** chat-template overhead per (baseUrl, model) */
  private readonly chatOverhead = new Map<string, Promise<number>>();

  override async probe(target: HttpTarget, model?: string): Promise<ServerFacts> {
    const models = await probeModels(target, model);
    const facts = modelsFacts('sglang', models);

    let info: HttpResult | undefined = await tryCall(target, 'GET', '/get_server_info');
    let infoSource = 'GET /get_server_info';
    if (!isOk(info) || !asRecord(info.json)) {
      info = await tryCall(target, 'GET', '/server_info');
      infoSource = 'GET /server_info';
    }
    if (isOk(info)) {
      const extra = sglangServerInfoFacts(info.json, infoSource);
      Object.assign(facts, extra);
      // /v1/models' max_model_len wins; the server args' context_length is a fallback
      if (!facts.maxModelLen) {
        const ctx = asNumber(extra.launchArgs?.value.context_length);
        if (ctx !== undefined && ctx > 0) facts.maxModelLen = { value: ctx, source: `${infoSource} context_length` };
      }
    }

    const [metrics, tokenize] = await Promise.all([
      tryCall(target, 'GET', SGLANG_METRICS_PATH),
      tryCall(target, 'POST', SGLANG_TOKENIZE_PATH, { model: facts.model.value, prompt: 'Hi' }),
    ]);
    if (isOk(metrics) && metrics.text.includes('sglang:')) {
      facts.metricsPath = SGLANG_METRICS_PATH;
      if (!facts.kvCapacityTokens) {
        const kv = sumMetricOverReplicas(parsePrometheus(metrics.text).samples, ['sglang:max_total_num_tokens'], SGLANG_REPLICA_LABELS);
        if (kv !== undefined && kv > 0) facts.kvCapacityTokens = { value: kv, source: 'sglang:max_total_num_tokens' };
      }
    }
    if (tokenizeCount(tokenize) !== undefined) facts.tokenizePath = SGLANG_TOKENIZE_PATH;
    return facts;
  }

  async readMetrics(target: HttpTarget, facts: ServerFacts): Promise<MetricsSample | undefined> {
    if (!facts.metricsPath) return undefined;
    const { result, atMs } = await timedGet(target, facts.metricsPath);
    if (!isOk(result)) return undefined;
    return sglangMetricsFromSamples(parsePrometheus(result.text).samples, atMs, facts.model.value);
  }

  private async tokenizeCount(target: HttpTarget, facts: ServerFacts, path: string, text: string): Promise<number> {
    return postForTokenCount(target, path, { model: facts.model.value, prompt: text });
  }

  /** Chat-template overhead in tokens (measured once per server and model; see the file comment). */
  chatTemplateOverheadTokens(target: HttpTarget, facts: ServerFacts): Promise<number> {
    const key = `${target.baseUrl}\u0000${facts.model.value}`;
    let pending = this.chatOverhead.get(key);
    if (!pending) {
      pending = this.measureChatOverhead(target, facts);
      this.chatOverhead.set(key, pending);
      pending.catch(() => this.chatOverhead.delete(key));
    }
    return pending;
  }

  private async measureChatOverhead(target: HttpTarget, facts: ServerFacts): Promise<number> {
    const path = facts.tokenizePath ?? SGLANG_TOKENIZE_PATH;
    const plain = await this.tokenizeCount(target, facts, path, CHAT_OVERHEAD_PROBE_TEXT);
    const res = await postJson(
      target,
      CHAT_PATH,
      { model: facts.model.value, messages: [{ role: 'user', content: CHAT_OVERHEAD_PROBE_TEXT }], max_tokens: 1, stream: false },
      { timeoutMs: 120_000 },
    );
    const prompt = isOk(res) ? asNumber(asRecord(asRecord(res.json)?.usage)?.prompt_tokens) : undefined;
    if (prompt === undefined) throw tokenizeError(target, CHAT_PATH, res);
    return prompt - plain;
  }

  async countTokens(target: HttpTarget, facts: ServerFacts, text: string, endpoint: EndpointKind): Promise<number | undefined> {
    if (!facts.tokenizePath) return undefined;
    const count = await this.tokenizeCount(target, facts, facts.tokenizePath, text);
    if (endpoint === 'completions') return count;
    return count + (await this.chatTemplateOverheadTokens(target, facts));
  }
}
