/**
 * What differs between the personalities' streams and error bodies (ENGINES.md §1–§6, traits in
 * surface.ts): chunk shapes, end chunks, error bodies. Chunk strings are assembled from
 * per-request prebuilt heads and tails, so a token chunk costs one concatenation.
 */

import type { SimPersonality } from './profiles.js';
import { surfaceOf, type Surface } from './surface.js';

export interface UsageCounts {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** A usage object; `withCached` false leaves out prompt_tokens_details (llama.cpp, surface.ts usageCachedTokens). */
export function usageJson(u: UsageCounts, withCached = true): string {
  const head = `{"prompt_tokens":${u.promptTokens},"total_tokens":${u.promptTokens + u.completionTokens},"completion_tokens":${u.completionTokens}`;
  return withCached ? `${head},"prompt_tokens_details":{"cached_tokens":${u.cachedTokens}}}` : `${head}}`;
}

/** the constantUsage knob's block (issue 18: a server that reports this whatever it generated) */
export const CONSTANT_USAGE = '{"prompt_tokens":100,"completion_tokens":100,"total_tokens":200}';

/** Ollama's zero usage on every /v1/completions chunk (include_usage) */
export const ZERO_USAGE = '{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}';

/** The HTTP status the personality answers for a validation error of `status` (TGI: 400 → 422). */
export function errorStatus(personality: SimPersonality, status: number): number {
  return status === 400 ? surfaceOf(personality).validationStatus : status;
}

function llamaType(status: number, param: string | null): string {
  if (status === 400 && (param === 'input_tokens' || param === 'max_tokens')) return 'exceed_context_size_error';
  if (status === 400 || status === 422) return 'invalid_request_error';
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 501) return 'not_supported_error';
  if (status === 503) return 'unavailable_error';
  return 'server_error';
}

function tgiType(status: number): string {
  if (status === 422 || status === 400) return 'validation';
  if (status === 429) return 'overloaded';
  if (status === 424) return 'generation';
  return 'internal';
}

function ollamaType(status: number): string {
  if (status === 400) return 'invalid_request_error';
  if (status === 404) return 'not_found_error';
  return 'api_error';
}

/**
 * Error body in the personality's shape (ENGINES.md §7.2): vLLM nested; SGLang and TRT-LLM flat
 * `object:"error"`; llama.cpp `{error:{code,message,type}}` (+n_prompt_tokens, n_ctx on context
 * overflow); TGI `{error, error_type}`; Ollama nested with `code:null`.
 */
export function errorBody(
  personality: SimPersonality,
  status: number,
  message: string,
  type: string,
  param: string | null = null,
  extra: Record<string, unknown> = {},
): string {
  switch (personality) {
    case 'vllm':
      return JSON.stringify({ error: { message, type, param, code: status } });
    case 'llamacpp':
      return JSON.stringify({ error: { code: status, message, type: llamaType(status, param), ...extra } });
    case 'tgi':
      return JSON.stringify({ error: message, error_type: tgiType(status) });
    case 'ollama':
      return JSON.stringify({ error: { message, type: ollamaType(status), param: null, code: null } });
    case 'bare':
      return JSON.stringify({ error: { message, type, code: status } });
    case 'sglang':
    case 'trtllm':
      return JSON.stringify({ object: 'error', message, type, param, code: status });
  }
}

/** The `data: {...}` error event sent inside a stream, in the personality's shape ('' when it sends none). */
export function errorEvent(message: string, code: number, personality: SimPersonality = 'vllm'): string {
  switch (personality) {
    case 'llamacpp':
      return `data: ${JSON.stringify({ error: { code, message, type: llamaType(code, null) } })}\n\n`;
    case 'tgi':
      return `data: ${JSON.stringify({ error: { message, http_status_code: 422 } })}\n\n`;
    case 'ollama':
    case 'trtllm':
    case 'bare':
      return '';
    default:
      return `data: ${JSON.stringify({ error: { message, type: 'InternalServerError', param: null, code } })}\n\n`;
  }
}

export const DONE_EVENT = 'data: [DONE]\n\n';
/** the unterminatedLastEvent knob's end: no blank line, no newline, then the close */
export const UNTERMINATED_DONE = 'data: [DONE]';

/** What goes on the final chunk(s) besides text: usage and extra fields (`,"timings":{…}`). */
export interface LastOptions {
  /** continuous usage on every chunk (also on the text part of the last emission) */
  usage?: string;
  /** appended to every text chunk of this emission (e.g. `,"timings":{…}` with timings_per_token) */
  textExtra?: string;
  /** appended to the finishing chunk (e.g. `,"usage":{…},"timings":{…}`) */
  finalSuffix?: string;
}

/** Builds one request's stream chunks. */
export class ChunkWriter {
  private readonly contentHead: string;
  private readonly reasoningHead: string;
  private readonly open: string;
  private readonly usageOpen: string;
  private readonly tailNoFinish: string;
  private readonly chat: boolean;
  private readonly s: Surface;
  /** finish_reason of a non-final chunk: null, "" (TGI completions) or "null" (stringNullFinish) */
  private readonly noFinish: string;

  constructor(
    readonly personality: SimPersonality,
    kind: 'chat' | 'completions',
    id: string,
    model: string,
    createdS: number,
    version = '',
    surface: Surface = surfaceOf(personality),
  ) {
    this.s = surface;
    this.chat = kind === 'chat';
    const object = this.chat ? 'chat.completion.chunk' : 'text_completion';
    const fp = this.s.fingerprint ? `"system_fingerprint":${JSON.stringify(this.s.fingerprint(version))},` : '';
    const head = (obj: string) => `data: {"id":"${id}","object":"${obj}","created":${createdS},"model":${JSON.stringify(model)},${fp}"choices":`;
    this.open = head(object);
    this.usageOpen = this.chat ? this.open : head(this.s.completionsUsageObject);
    const role = this.s.roleOnEveryDelta ? '"role":"assistant",' : '';
    const noFinish = this.s.stringNullFinish ? '"null"' : !this.chat && this.s.emptyFinishOnCompletions ? '""' : 'null';
    this.noFinish = noFinish;
    if (this.chat) {
      this.contentHead = `${this.open}[{"index":0,"delta":{${role}"content":"`;
      this.reasoningHead = `${this.open}[{"index":0,"delta":{${role}"${this.s.reasoningField}":"`;
      this.tailNoFinish = `"},"logprobs":null,"finish_reason":${noFinish}}]}\n\n`;
    } else {
      this.contentHead = `${this.open}[{"index":0,"text":"`;
      this.reasoningHead = this.contentHead;
      this.tailNoFinish = `","logprobs":null,"finish_reason":${noFinish}}]}\n\n`;
    }
  }

  /** Role chunk (chat only): content "" (vLLM, SGLang, TRT-LLM), none (llama.cpp b4748, TGI, Ollama). */
  role(): string {
    if (!this.chat || this.s.roleChunk === 'none') return '';
    return `${this.open}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":${this.noFinish}}]}\n\n`;
  }

  /** A chunk of generated text; `usage` given = continuous usage stats on this chunk; `extra` appended fields. */
  tokens(text: string, reasoning: boolean, usage: string | undefined, extra = ''): string {
    const head = reasoning ? this.reasoningHead : this.contentHead;
    if (usage === undefined && extra === '') return head + text + this.tailNoFinish;
    const u = usage === undefined ? '' : `,"usage":${usage}`;
    return `${head}${text}${this.tailNoFinish.slice(0, -3)}${u}${extra}}\n\n`;
  }

  /**
   * The last text of a request and its finish. vLLM, TRT-LLM and TGI put finish_reason on the last
   * text chunk; SGLang, llama.cpp and Ollama send the text, then a chunk with an empty delta and
   * the finish_reason.
   */
  last(text: string, reasoning: boolean, finish: string, o: LastOptions = {}): string {
    const u = o.usage === undefined ? '' : `,"usage":${o.usage}`;
    const suffix = o.finalSuffix ?? '';
    if (this.s.finishOnLastText) {
      const head = reasoning ? this.reasoningHead : this.contentHead;
      const close = this.chat ? `"}` : `"`;
      return `${head}${text}${close},"logprobs":null,"finish_reason":"${finish}"}]${u}${o.textExtra ?? ''}${suffix}}\n\n`;
    }
    const textChunk = text.length > 0 ? this.tokens(text, reasoning, o.usage, o.textExtra) : '';
    let finishDelta = this.chat ? `"delta":{}` : `"text":""`;
    if (this.chat && this.s.roleOnEveryDelta) finishDelta = `"delta":{"role":"assistant","content":""}`;
    const matched = this.personality === 'sglang' ? `,"matched_stop":null` : '';
    return `${textChunk}${this.open}[{"index":0,${finishDelta},"logprobs":null,"finish_reason":"${finish}"${matched}}]${u}${suffix}}\n\n`;
  }

  /** Usage-only final chunk (`choices: []`), with `extra` fields appended. */
  usageOnly(usage: string, extra = ''): string {
    return `${this.usageOpen}[],"usage":${usage}${extra}}\n\n`;
  }
}
