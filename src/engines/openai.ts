/**
 * The generic OpenAI-compatible adapter (`kind: 'openai'`). It sends only standard fields
 * (`max_tokens`, `stream`, `stream_options.include_usage`), reads every delta field the engines
 * use (ENGINES.md §0, §7.5) and probes only `/v1/models`. It has no metrics and no tokenizer.
 * vllm.ts and sglang.ts extend it.
 */
import { errorMessageFromBody, unrequestedEncodingMessage } from '../client/error-body.js';
import { truncate } from '../client/transport-errors.js';
import { parseErrorJson } from './errors.js';
import { scanOpenAIChunk, usageOf } from './openai-scan.js';
import { SpeedMatrixError } from '../errors.js';
import { apiKeyFix, asNumber, asRecord, asString, getJson, HttpCallError, isOk, NOT_READY_FIX, notReady, redactTarget, refusesKey, tryCall, type HttpCallOptions, type HttpResult } from './http.js';
import type { DecodedChunk, EngineAdapter, EngineKind, HttpTarget, RequestSpec, ServerFacts, Sourced } from '../shapes/engine.js';

export const CHAT_PATH = '/v1/chat/completions';
export const COMPLETIONS_PATH = '/v1/completions';
export const MODELS_PATH = '/v1/models';

/** One entry of `GET /v1/models`, the fields we read. */
export interface ModelEntry {
  id: string;
  ownedBy?: string;
  maxModelLen?: number;
  root?: string;
}

/** What `GET /v1/models` told us. */
export interface ModelsProbe {
  entries: ModelEntry[];
  model: Sourced<string>;
  maxModelLen?: Sourced<number>;
  ownedBy?: string;
  /** HTTP status of /v1/models (undefined when it could not be reached) */
  status?: number;
}

/** Parse a `/v1/models` body; never throws. */
export function parseModelsList(json: unknown): ModelEntry[] {
  const data = asRecord(json)?.data;
  if (!Array.isArray(data)) return [];
  const out: ModelEntry[] = [];
  for (const item of data) {
    const rec = asRecord(item);
    const id = asString(rec?.id);
    if (!rec || id === undefined) continue;
    const entry: ModelEntry = { id };
    const ownedBy = asString(rec.owned_by);
    if (ownedBy !== undefined) entry.ownedBy = ownedBy;
    const maxModelLen = asNumber(rec.max_model_len);
    if (maxModelLen !== undefined && maxModelLen > 0) entry.maxModelLen = maxModelLen;
    const root = asString(rec.root);
    if (root !== undefined) entry.root = root;
    out.push(entry);
  }
  return out;
}

/** The streamed text of tool-call deltas: each call's function name and argument fragment. */
function toolCallText(calls: readonly unknown[]): string {
  let out = '';
  for (const c of calls) {
    const fn = asRecord(asRecord(c)?.function);
    out += (asString(fn?.name) ?? '') + (asString(fn?.arguments) ?? '');
  }
  return out;
}

/**
 * A chunk's finish reason: a non-empty string other than `"null"`, else undefined. Some servers
 * send `"finish_reason": "null"` (a string) on every chunk but the last; that is no finish reason,
 * and the client takes a close after a real one as the end of the stream (client/stream.ts).
 */
export function finishReasonOf(value: unknown): string | undefined {
  const s = asString(value);
  return s === undefined || s === '' || s === 'null' ? undefined : s;
}

/** Interpret one SSE payload of any OpenAI-compatible engine; never throws. */
export function decodeOpenAIChunk(payload: unknown): DecodedChunk {
  const out: DecodedChunk = { hasText: false, reasoning: false };
  const root = asRecord(payload);
  if (!root) return out;

  if (root.error !== undefined && root.error !== null) {
    const parsed = parseErrorJson(root);
    const message = parsed?.message ?? (typeof root.error === 'string' ? root.error : JSON.stringify(root.error));
    out.error = parsed?.code !== undefined ? { message, code: parsed.code } : { message };
  }

  // read once per token event: each field looked at once, the reasoning fields only without content
  const choices = root.choices;
  const choice = Array.isArray(choices) ? asRecord(choices[0]) : undefined;
  if (choice) {
    const delta = asRecord(choice.delta);
    if (delta) {
      const content = asString(delta.content);
      const reasoning = content === undefined ? (asString(delta.reasoning_content) ?? asString(delta.reasoning)) : undefined;
      if (content !== undefined) {
        out.hasText = true;
        out.text = content;
      } else if (reasoning !== undefined) {
        out.hasText = true;
        out.reasoning = true;
        out.text = reasoning;
      } else if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) {
        out.hasText = true;
        out.text = toolCallText(delta.tool_calls);
      }
    }
    const text = asString(choice.text);
    if (text !== undefined) {
      out.hasText = true;
      out.text = (out.text ?? '') + text;
    }
    const finish = finishReasonOf(choice.finish_reason);
    if (finish !== undefined) out.finishReason = finish;
    const ids = Array.isArray(choice.token_ids) ? choice.token_ids : Array.isArray(root.token_ids) ? root.token_ids : undefined;
    if (ids) out.tokenCount = ids.length;
  }

  const usage = asRecord(root.usage);
  if (usage) {
    const prompt = asNumber(usage.prompt_tokens);
    const completion = asNumber(usage.completion_tokens);
    const details = usage.prompt_tokens_details;
    const cached = details === undefined || details === null ? undefined : asNumber(asRecord(details)?.cached_tokens);
    const u = usageOf(prompt, completion, cached);
    if (u !== undefined) out.usage = u;
  }
  return out;
}

/** `not-ready`: the models list answered 502, 503 or 504 (http.ts notReady), retried like `unreachable` (http.ts isUnreachable) */
export type ProbeErrorCode = 'unreachable' | 'not-ready' | 'unauthorized' | 'no-model' | 'tls';

/** A setup error from a probe, naming the field and the fix; the key is never in it. */
export class ProbeError extends SpeedMatrixError<ProbeErrorCode> {
  override name = 'ProbeError';
  /** what happened, without the fix (a progress line while setup waits); the message has both */
  readonly what: string;
  constructor(message: string, code: ProbeErrorCode, what = message) {
    super(code, message);
    this.what = what;
  }
}

export function probeError(target: HttpTarget, code: ProbeError['code'], what: string, fix: string): ProbeError {
  const said = `probe of ${target.baseUrl}: ${what}`;
  return new ProbeError(redactTarget(`${said}. ${fix}`, target), code, redactTarget(said, target));
}

/** `: <the server's words>` of an error answer, cut short (an HTML page by its title), or '' for an empty body */
function serverWords(res: HttpResult): string {
  return res.text.trim() !== '' ? `: ${truncate(errorMessageFromBody(res.text), 200)}` : '';
}

/**
 * Wait-for-ready check before anything else is asked: `GET /health` answered 502, 503 or 504 is a
 * server still starting (llama.cpp answers it "Loading model" while the models list may already
 * answer on some builds; SGLang until its warm-up is done), thrown as `not-ready` for
 * retryWhileUnreachable. Any other answer, or none, goes on: the probes that follow say what is wrong.
 */
export async function probeReadiness(target: HttpTarget, options?: HttpCallOptions): Promise<void> {
  const res = await tryCall(target, 'GET', '/health', undefined, options);
  if (res === undefined || !notReady(res.status)) return;
  throw probeError(target, 'not-ready', `the server is not ready: GET /health answered HTTP ${res.status}${serverWords(res)}`, NOT_READY_FIX);
}

/** How the configured model's source reads when `GET /v1/models` lists other ids only. */
const UNLISTED_MODEL = 'not among the ids GET /v1/models lists';

/** The run's start warning for a configured model the server does not list (probeModels marks its source); undefined when it is listed. */
export function unlistedModelWarning(model: { value: string; source: string }): string | undefined {
  if (!model.source.includes(UNLISTED_MODEL)) return undefined;
  return (
    `the model "${model.value}" (LLM_BENCH_MODEL or target.model) is ${model.source.slice('config ('.length, -1)}; ` +
    'its requests carry that name as given, and the page names it: check the spelling (a server with one model, such as llama.cpp, ignores the name)'
  );
}

/** `GET /v1/models`, choose the model (configured one, else the first id). Throws setup errors. */
export async function probeModels(target: HttpTarget, model?: string, options?: HttpCallOptions): Promise<ModelsProbe> {
  let res: HttpResult | undefined;
  try {
    res = await getJson(target, MODELS_PATH, options);
  } catch (err) {
    const msg = err instanceof HttpCallError ? err.message : String(err);
    if (err instanceof HttpCallError && err.code === 'tls') throw probeError(target, 'tls', 'the TLS connection was refused', msg.replace(/^.*? failed: /, ''));
    throw probeError(target, 'unreachable', `could not reach the server (${msg})`, 'Check LLM_BENCH_URL (target.url in a suite file): scheme, host, port, and a gateway path prefix if there is one; and that the server is running.');
  }
  if (refusesKey(res.status)) {
    // the server's own words (a wrong key, an expired one, a missing scope); never the key
    throw probeError(target, 'unauthorized', `GET ${MODELS_PATH} was refused with HTTP ${res.status}${serverWords(res)}`, apiKeyFix(target.apiKey !== undefined, res.status));
  }
  if (notReady(res.status)) {
    throw probeError(target, 'not-ready', `the server is not ready: GET ${MODELS_PATH} answered HTTP ${res.status}${serverWords(res)}`, NOT_READY_FIX);
  }
  const entries = isOk(res) ? parseModelsList(res.json) : [];
  let chosen: ModelEntry | undefined;
  let modelSourced: Sourced<string>;
  if (model !== undefined && model !== '') {
    chosen = entries.find((e) => e.id === model) ?? entries.find((e) => e.root === model);
    // a name the server does not list is sent as given (a gateway may route it; llama.cpp ignores it),
    // and the run says so at its start (src/matrix/open.ts): it may be a typo the page would carry
    const unlisted = !chosen && entries.length > 0 ? ` (${UNLISTED_MODEL}: ${entries.slice(0, 5).map((e) => e.id).join(', ')}${entries.length > 5 ? ', …' : ''})` : '';
    modelSourced = { value: model, source: `config${unlisted}` };
  } else {
    chosen = entries[0];
    if (!chosen && res.contentEncoding !== undefined) {
      throw probeError(target, 'no-model', `GET ${MODELS_PATH} answered HTTP ${res.status} unreadable`, unrequestedEncodingMessage(res.contentEncoding));
    }
    if (!chosen) {
      throw probeError(
        target,
        'no-model',
        `GET ${MODELS_PATH} answered HTTP ${res.status} without any model id`,
        'Set `model` in the config to the model name the server serves.',
      );
    }
    modelSourced = { value: chosen.id, source: `GET ${MODELS_PATH} data[0].id` };
  }
  const out: ModelsProbe = { entries, model: modelSourced, status: res.status };
  if (chosen?.maxModelLen !== undefined) out.maxModelLen = { value: chosen.maxModelLen, source: `GET ${MODELS_PATH} max_model_len` };
  if (chosen?.ownedBy !== undefined) out.ownedBy = chosen.ownedBy;
  else if (entries[0]?.ownedBy !== undefined) out.ownedBy = entries[0].ownedBy;
  return out;
}

/**
 * The facts every engine's probe starts from: the engine (sourced to `/v1/models` when its
 * `owned_by` names it), the model, and `max_model_len` where the server lists one.
 */
export function modelsFacts(kind: EngineKind, models: ModelsProbe, ownedBy: string = kind): ServerFacts {
  const facts: ServerFacts = {
    engine: { value: kind, source: models.ownedBy === ownedBy ? 'GET /v1/models owned_by' : `adapter '${kind}'` },
    model: models.model,
  };
  if (models.maxModelLen) facts.maxModelLen = models.maxModelLen;
  return facts;
}

export class OpenAIAdapter implements EngineAdapter {
  readonly kind: EngineKind = 'openai';
  readonly endsWithDone = true;

  /**
   * Whether this adapter forces the output length: read from what it sends when asked to (an
   * `ignore_eos` or `min_tokens` field), so the run never claims a forced length the request did
   * not carry. The generic adapter, TGI and Ollama send neither.
   */
  get forcesLength(): boolean {
    const body = this.buildStreamRequest({ model: 'm', endpoint: 'chat', prompt: '', maxTokens: 1, forceLength: true }).body;
    return body.ignore_eos === true || typeof body.min_tokens === 'number';
  }

  /** Extra request fields this engine accepts; the generic adapter adds none. */
  protected extraFields(spec: RequestSpec): Record<string, unknown> {
    void spec;
    return {};
  }

  /** `stream_options` this engine accepts. */
  protected streamOptions(): Record<string, unknown> {
    return { include_usage: true };
  }

  buildStreamRequest(spec: RequestSpec): { path: string; body: Record<string, unknown> } {
    const common = {
      model: spec.model,
      // max_tokens: accepted by every engine here (Ollama and TGI have no max_completion_tokens
      // or treat it as an alias); vLLM completions default to 16 without it
      max_tokens: spec.maxTokens,
      stream: true,
      stream_options: this.streamOptions(),
      ...this.extraFields(spec),
    };
    if (spec.endpoint === 'chat') {
      return { path: CHAT_PATH, body: { ...common, messages: spec.messages ?? [{ role: 'user', content: spec.prompt }] } };
    }
    return { path: COMPLETIONS_PATH, body: { ...common, prompt: spec.prompt } };
  }

  decodeChunk(payload: unknown): DecodedChunk {
    return decodeOpenAIChunk(payload);
  }

  /** decodeChunk from the payload's bytes (openai-scan.ts); an adapter that overrides one overrides both */
  scanChunk(bytes: Uint8Array, start: number, end: number, wantText: boolean): DecodedChunk | undefined {
    return scanOpenAIChunk(bytes, start, end, wantText);
  }

  async probe(target: HttpTarget, model?: string): Promise<ServerFacts> {
    const models = await probeModels(target, model);
    const facts: ServerFacts = {
      engine: { value: this.kind, source: models.ownedBy ? `adapter '${this.kind}' (owned_by: ${models.ownedBy})` : `adapter '${this.kind}'` },
      model: models.model,
    };
    if (models.maxModelLen) facts.maxModelLen = models.maxModelLen;
    return facts;
  }
}

/**
 * Engines that force the output length with `ignore_eos` and stream cumulative usage on every
 * chunk (`continuous_usage_stats`): vLLM and SGLang.
 */
export class ContinuousUsageAdapter extends OpenAIAdapter {
  protected override extraFields(spec: RequestSpec): Record<string, unknown> {
    return spec.forceLength ? { ignore_eos: true } : {};
  }

  protected override streamOptions(): Record<string, unknown> {
    return { include_usage: true, continuous_usage_stats: true };
  }
}
