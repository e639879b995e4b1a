/**
 * What each simulated engine looks like from outside (ENGINES.md §1–§6): the traits that differ
 * between personalities. The engine model (scheduler, KV cache, timing) is shared; only this
 * surface changes. personality.ts, request.ts, completion.ts and the routes (routes*.ts) read it.
 */

import type { SimPersonality, SimProfile } from './profiles.js';
import type { SimWireKnobs } from './knobs.js';

/** The traits that differ between personalities, with the wire knobs (knobs.ts SimWireKnobs) any personality can turn on. */
export interface Surface extends Omit<SimWireKnobs, 'ownedBy'> {
  /** `/v1/models` owned_by (TGI: the model id; Ollama: "library") */
  ownedBy(modelId: string): string;
  /** delta field of reasoning text */
  reasoningField: 'reasoning' | 'reasoning_content';
  /** the chat role chunk before the first token: content "" (vLLM …), none (llama.cpp b4748, TGI, Ollama) */
  roleChunk: 'empty' | 'none';
  /** every chat delta carries role:"assistant" (TGI, Ollama) */
  roleOnEveryDelta: boolean;
  /** finish_reason rides on the last text chunk (vLLM, TRT-LLM, TGI); else a separate empty-delta chunk */
  finishOnLastText: boolean;
  /** one SSE event per token (TGI) */
  oneEventPerToken: boolean;
  /** response headers go out before the first token (vLLM, TGI, TRT-LLM); else with it */
  headersFirst: boolean;
  /** after a mid-stream error: error event then [DONE]; error event then close; clean close; socket reset */
  midStreamError: 'event-then-done' | 'event-then-close' | 'close' | 'reset';
  /** continuous usage stats: only together with include_usage, on its own, or not at all */
  continuousUsage: 'with-include-usage' | 'alone' | 'never';
  /** include_usage is on whenever stream_options is sent (TRT-LLM) */
  includeUsageByDefault: boolean;
  /** /v1/completions streams always end with usage on the final chunk (llama.cpp, TGI) */
  completionsAlwaysUsage: boolean;
  /**
   * chat streams too end with usage (and timings) on the finishing chunk, include_usage or not, and
   * never send a usage-only chunk (llama.cpp b4748, recorded from a real server)
   */
  usageOnFinishChunk: boolean;
  /**
   * the server closes the connection right after a streamed response although it answered
   * keep-alive (llama.cpp b4748: cpp-httplib's content provider returns false after [DONE])
   */
  closesAfterStream: boolean;
  /** connections served at once for `slots` slots (thread-per-connection HTTP server); undefined = unbounded */
  httpThreads?: (slots: number) => number;
  /** idle keep-alive time the server allows, in ms (llama.cpp's cpp-httplib: 5 s) */
  keepAliveTimeoutMs: number;
  /** headers on every response (llama.cpp: `Keep-Alive: timeout=5, max=100`, `Server: llama.cpp`) */
  responseHeaders: Readonly<Record<string, string>>;
  /** /v1/completions with include_usage puts a zero usage on every chunk (Ollama) */
  zeroUsageOnCompletionChunks: boolean;
  /** non-empty `finish_reason` only on the final chunk; others carry "" (TGI completions) */
  emptyFinishOnCompletions: boolean;
  /** `timings` on the final chunk (and every chunk with timings_per_token) (llama.cpp) */
  timings: boolean;
  /**
   * usage carries `prompt_tokens_details.cached_tokens`; llama.cpp b4748's usage has none (its
   * prompt_tokens is the whole prompt, the cached part shows only as timings.prompt_n's shortfall)
   */
  usageCachedTokens: boolean;
  /** ignore_eos is honoured (not TGI, Ollama) */
  honoursIgnoreEos: boolean;
  /** min_tokens is honoured (vLLM, SGLang, TRT-LLM) */
  honoursMinTokens: boolean;
  /** a wrong `model` is 404 (llama.cpp and TGI serve whatever is loaded) */
  checksModel: boolean;
  /** request fields accepted; anything else is 400 (TRT-LLM, extra="forbid"); undefined = lenient */
  allowedFields?: { chat: ReadonlySet<string>; completions: ReadonlySet<string>; streamOptions: ReadonlySet<string> };
  /** context overflow / validation status (TGI: 422) */
  validationStatus: number;
  /** `/v1/completions` usage chunk `object` (TRT-LLM: chat.completion.chunk) */
  completionsUsageObject: string;
  /** responses name the request's `model`, or this when it has none (llama.cpp b4748: "gpt-3.5-turbo"); undefined = the served model */
  echoesModel?: string;
  /** system_fingerprint on chunks, when the engine sends one */
  fingerprint?: (version: string) => string;
}

const COMMON_FIELDS = ['model', 'stream', 'stream_options', 'temperature', 'top_p', 'top_k', 'n', 'stop', 'seed', 'user', 'presence_penalty', 'frequency_penalty', 'logprobs', 'min_tokens', 'ignore_eos'];
const TRT_FIELDS = {
  chat: new Set([...COMMON_FIELDS, 'messages', 'max_completion_tokens', 'max_tokens', 'top_logprobs', 'tools', 'tool_choice', 'response_format']),
  completions: new Set([...COMMON_FIELDS, 'prompt', 'max_tokens', 'echo', 'suffix']),
  streamOptions: new Set(['include_usage', 'continuous_usage_stats']),
};

const BASE: Surface = {
  ownedBy: () => 'vllm',
  reasoningField: 'reasoning_content',
  roleChunk: 'empty',
  roleOnEveryDelta: false,
  finishOnLastText: true,
  oneEventPerToken: false,
  headersFirst: true,
  midStreamError: 'event-then-done',
  continuousUsage: 'with-include-usage',
  includeUsageByDefault: false,
  completionsAlwaysUsage: false,
  usageOnFinishChunk: false,
  closesAfterStream: false,
  keepAliveTimeoutMs: 60_000,
  responseHeaders: {},
  zeroUsageOnCompletionChunks: false,
  emptyFinishOnCompletions: false,
  timings: false,
  usageCachedTokens: true,
  honoursIgnoreEos: true,
  honoursMinTokens: true,
  checksModel: true,
  validationStatus: 400,
  completionsUsageObject: 'text_completion',
  closeDelimited: false,
  unterminatedLastEvent: false,
  stringNullFinish: false,
  tokensPerChunk: [1, 1],
  noStreamUsage: false,
  constantUsage: false,
  noMetrics: false,
  noTokenize: false,
  ollamaVersion: false,
  strictFields: false,
};

/** The standard OpenAI request fields (chat and completions); strictFields answers 400 for any other. */
const OPENAI_FIELDS = ['model', 'stream', 'stream_options', 'temperature', 'top_p', 'n', 'stop', 'seed', 'user', 'presence_penalty', 'frequency_penalty', 'logprobs', 'logit_bias', 'max_tokens'];
export const OPENAI_STANDARD_FIELDS = {
  chat: new Set([...OPENAI_FIELDS, 'messages', 'max_completion_tokens', 'top_logprobs', 'tools', 'tool_choice', 'response_format', 'parallel_tool_calls']),
  completions: new Set([...OPENAI_FIELDS, 'prompt', 'echo', 'suffix', 'best_of']),
  streamOptions: new Set(['include_usage']),
};

export const SURFACES: Record<SimPersonality, Surface> = {
  vllm: { ...BASE, reasoningField: 'reasoning' },
  sglang: { ...BASE, ownedBy: () => 'sglang', finishOnLastText: false, headersFirst: false, continuousUsage: 'alone' },
  // b4748 as recorded from a real server (test/fixtures/llamacpp-b4748), except context overflow,
  // which answers 400 exceed_context_size_error as current builds do (b4748 truncates the prompt)
  llamacpp: {
    ...BASE,
    ownedBy: () => 'llamacpp',
    roleChunk: 'none',
    finishOnLastText: false,
    headersFirst: false,
    midStreamError: 'event-then-close',
    continuousUsage: 'never',
    completionsAlwaysUsage: true,
    usageOnFinishChunk: true,
    closesAfterStream: true,
    echoesModel: 'gpt-3.5-turbo',
    // --threads-http default: max(n_parallel + 2, cores − 1); n_parallel + 2 on small machines
    httpThreads: (slots) => slots + 2,
    keepAliveTimeoutMs: 5_000,
    // no Connection header on the real server; Node adds one unless it is set here
    responseHeaders: { connection: 'keep-alive', 'keep-alive': 'timeout=5, max=100', server: 'llama.cpp' },
    timings: true,
    usageCachedTokens: false,
    honoursMinTokens: false,
    checksModel: false,
    fingerprint: (v) => v,
  },
  tgi: {
    ...BASE,
    ownedBy: (modelId) => modelId,
    roleChunk: 'none',
    roleOnEveryDelta: true,
    oneEventPerToken: true,
    continuousUsage: 'never',
    completionsAlwaysUsage: true,
    emptyFinishOnCompletions: true,
    honoursIgnoreEos: false,
    honoursMinTokens: false,
    checksModel: false,
    validationStatus: 422,
    fingerprint: (v) => `${v}-native`,
  },
  trtllm: {
    ...BASE,
    ownedBy: () => 'tensorrt_llm',
    midStreamError: 'reset',
    includeUsageByDefault: true,
    allowedFields: TRT_FIELDS,
    completionsUsageObject: 'chat.completion.chunk',
  },
  ollama: {
    ...BASE,
    ownedBy: () => 'library',
    reasoningField: 'reasoning',
    roleChunk: 'none',
    roleOnEveryDelta: true,
    finishOnLastText: false,
    headersFirst: false,
    midStreamError: 'close',
    continuousUsage: 'never',
    zeroUsageOnCompletionChunks: true,
    honoursIgnoreEos: false,
    honoursMinTokens: false,
    fingerprint: () => 'fp_ollama',
  },
  // a llama.cpp-derived server with its own Python HTTP stack and an OpenAI emulation (issue 18):
  // none of the extras. Its own routes besides the OpenAI ones: Ollama's GET /api/tags (routes-ollama.ts).
  bare: {
    ...BASE,
    ownedBy: () => 'user',
    roleChunk: 'none',
    finishOnLastText: false,
    headersFirst: true,
    midStreamError: 'close',
    continuousUsage: 'never',
    honoursMinTokens: false,
    checksModel: false,
    closeDelimited: true,
    unterminatedLastEvent: true,
    stringNullFinish: true,
    tokensPerChunk: [2, 4],
    noStreamUsage: true,
    constantUsage: true,
    noMetrics: true,
    noTokenize: true,
  },
};

export function surfaceOf(personality: SimPersonality): Surface {
  return SURFACES[personality];
}

/** The personality's surface with the profile's wire knobs applied (what the server really does). */
export function surfaceFor(profile: Pick<SimProfile, 'personality' | 'wire'>): Surface {
  const base = SURFACES[profile.personality];
  const wire = profile.wire ?? {};
  const { ownedBy, ...knobs } = wire;
  const defined = Object.fromEntries(Object.entries(knobs).filter(([, v]) => v !== undefined)) as Partial<Surface>;
  const s: Surface = { ...base, ...defined };
  if (ownedBy !== undefined) s.ownedBy = () => ownedBy;
  // a strict server takes only the standard fields
  if (wire.strictFields === true) s.allowedFields = OPENAI_STANDARD_FIELDS;
  return s;
}
