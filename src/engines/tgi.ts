/**
 * Hugging Face TGI (3.x) adapter (ENGINES.md §4).
 *
 * Requests: `max_tokens` and `stream_options.include_usage` only. TGI has no ignore_eos or
 * min_tokens, so the output length cannot be forced (`forcesLength: false`): a request may stop at
 * EOS before max_tokens, and the figures count what was produced. One event per token, so the
 * chunk count is the token count.
 *
 * Probe: `/v1/models` (model; owned_by is the model id), `/info` (`max_total_tokens` = the longest
 * request, `max_input_tokens`, `version`, `model_id`), `/metrics` (`tgi_batch_max_total_tokens` =
 * KV capacity in tokens; `max_batch_total_tokens` left /info in v2.3), `POST /tokenize` (tried once).
 *
 * State: running = `tgi_batch_current_size`, waiting = `tgi_queue_size`, KV usage ≈
 * `tgi_batch_current_max_tokens / tgi_batch_max_total_tokens`. TGI has no generation-token counter.
 * Overload: 429 beyond --max-concurrent-requests (a failed request, counted as an error).
 */
import { asNumber, asRecord, asString, isOk, postJson, timedGet, tryCall } from './http.js';
import { OpenAIAdapter, probeModels } from './openai.js';
import { parsePrometheus, sumMetric, type PromSample } from './prometheus.js';
import { tokenizeError } from './tokenize.js';
import type { EndpointKind, EngineKind, HttpTarget, MetricsSample, ServerFacts } from '../shapes/engine.js';

export const TGI_METRICS_PATH = '/metrics';
export const TGI_TOKENIZE_PATH = '/tokenize';

/** Normalise one TGI scrape. */
export function tgiMetricsFromSamples(samples: readonly PromSample[], atMs: number): MetricsSample {
  const out: MetricsSample = { atMs };
  const running = sumMetric(samples, ['tgi_batch_current_size']);
  const waiting = sumMetric(samples, ['tgi_queue_size']);
  const current = sumMetric(samples, ['tgi_batch_current_max_tokens']);
  const max = sumMetric(samples, ['tgi_batch_max_total_tokens']);
  if (running !== undefined) out.running = running;
  if (waiting !== undefined) out.waiting = waiting;
  if (current !== undefined && max !== undefined && max > 0) out.kvUsage = Math.min(1, current / max);
  return out;
}

/** Facts from a TGI `/info` body. */
export function tgiInfoFacts(json: unknown): Partial<ServerFacts> {
  const root = asRecord(json);
  if (!root) return {};
  const out: Partial<ServerFacts> = {};
  const total = asNumber(root.max_total_tokens);
  if (total !== undefined && total > 0) out.maxModelLen = { value: total, source: 'GET /info max_total_tokens' };
  const version = asString(root.version);
  if (version !== undefined) out.version = { value: version, source: 'GET /info version' };
  return out;
}

export class TgiAdapter extends OpenAIAdapter {
  override readonly kind: EngineKind = 'tgi';

  override async probe(target: HttpTarget, model?: string): Promise<ServerFacts> {
    const models = await probeModels(target, model);
    const facts: ServerFacts = { engine: { value: 'tgi', source: "adapter 'tgi'" }, model: models.model };
    const [info, metrics, tokenize] = await Promise.all([
      tryCall(target, 'GET', '/info'),
      tryCall(target, 'GET', TGI_METRICS_PATH),
      tryCall(target, 'POST', TGI_TOKENIZE_PATH, { inputs: 'Hi' }),
    ]);
    if (isOk(info)) {
      Object.assign(facts, tgiInfoFacts(info.json));
      facts.engine = { value: 'tgi', source: 'GET /info' };
    }
    if (isOk(metrics) && /(^|\n)tgi_/.test(metrics.text)) {
      facts.metricsPath = TGI_METRICS_PATH;
      const kv = sumMetric(parsePrometheus(metrics.text).samples, ['tgi_batch_max_total_tokens']);
      if (kv !== undefined && kv > 0) facts.kvCapacityTokens = { value: kv, source: 'tgi_batch_max_total_tokens' };
    }
    if (isOk(tokenize) && Array.isArray(tokenize.json)) facts.tokenizePath = TGI_TOKENIZE_PATH;
    return facts;
  }

  async readMetrics(target: HttpTarget, facts: ServerFacts): Promise<MetricsSample | undefined> {
    if (!facts.metricsPath) return undefined;
    const { result, atMs } = await timedGet(target, facts.metricsPath);
    if (!isOk(result)) return undefined;
    return tgiMetricsFromSamples(parsePrometheus(result.text).samples, atMs);
  }

  /** Completions: `/tokenize {inputs}` → one entry per token. Chat: `/chat_tokenize` (template applied). */
  async countTokens(target: HttpTarget, facts: ServerFacts, text: string, endpoint: EndpointKind): Promise<number | undefined> {
    if (!facts.tokenizePath) return undefined;
    if (endpoint === 'completions') {
      const res = await postJson(target, facts.tokenizePath, { inputs: text }, { timeoutMs: 60_000 });
      if (!isOk(res) || !Array.isArray(res.json)) throw tokenizeError(target, facts.tokenizePath, res);
      return res.json.length;
    }
    const res = await postJson(target, '/chat_tokenize', { model: facts.model.value, messages: [{ role: 'user', content: text }] }, { timeoutMs: 60_000 });
    const tokens = isOk(res) ? asRecord(res.json)?.tokenize_response : undefined;
    if (!Array.isArray(tokens)) throw tokenizeError(target, '/chat_tokenize', res);
    return tokens.length;
  }
}
