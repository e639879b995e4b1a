/**
 * Ollama adapter for its OpenAI-compatible endpoints (ENGINES.md §5).
 *
 * Requests: `max_tokens` (mapped to num_predict) and `stream_options.include_usage` only; Ollama's
 * OpenAI endpoint has no ignore_eos or min_tokens, so the output length cannot be forced
 * (`forcesLength: false`): what was produced is counted. Token counts: the last usage seen
 * (on /v1/completions every chunk carries a zero usage before the real one).
 *
 * Probe: `/v1/models` (model; owned_by "library"), `GET /api/version` (version), `GET /api/ps`
 * (`context_length` of the loaded model = the longest request). Ollama exposes no metrics, no KV
 * capacity and not OLLAMA_NUM_PARALLEL: give kvCapacityTokens / maxRunningRequests in the config.
 * No tokenize endpoint: prompts are sized from the server's usage.prompt_tokens.
 * Overload: 503 when the queue (OLLAMA_MAX_QUEUE) is full — a failed request.
 */
import { asNumber, asRecord, asString, isOk, tryCall } from './http.js';
import { OpenAIAdapter, probeModels } from './openai.js';
import type { EngineKind, HttpTarget, ServerFacts } from '../shapes/engine.js';

/** The `/api/ps` entry of `model` (by name or model, with or without ":latest"), else the only one. */
export function ollamaLoadedModel(json: unknown, model: string): Record<string, unknown> | undefined {
  const list = asRecord(json)?.models;
  if (!Array.isArray(list)) return undefined;
  const entries = list.map(asRecord).filter((e): e is Record<string, unknown> => e !== undefined);
  const bare = (s: string | undefined) => s?.replace(/:latest$/, '');
  const match = entries.find((e) => bare(asString(e.name)) === bare(model) || bare(asString(e.model)) === bare(model));
  return match ?? (entries.length === 1 ? entries[0] : undefined);
}

export class OllamaAdapter extends OpenAIAdapter {
  override readonly kind: EngineKind = 'ollama';

  override async probe(target: HttpTarget, model?: string): Promise<ServerFacts> {
    const models = await probeModels(target, model);
    const facts: ServerFacts = { engine: { value: 'ollama', source: "adapter 'ollama'" }, model: models.model };
    const [version, ps] = await Promise.all([tryCall(target, 'GET', '/api/version'), tryCall(target, 'GET', '/api/ps')]);
    const v = isOk(version) ? asString(asRecord(version.json)?.version) : undefined;
    if (v !== undefined) {
      facts.version = { value: v, source: 'GET /api/version' };
      facts.engine = { value: 'ollama', source: 'GET /api/version' };
    }
    const loaded = isOk(ps) ? ollamaLoadedModel(ps.json, facts.model.value) : undefined;
    const ctx = asNumber(loaded?.context_length);
    if (ctx !== undefined && ctx > 0) facts.maxModelLen = { value: ctx, source: 'GET /api/ps context_length' };
    return facts;
  }
}
