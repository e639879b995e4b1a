/**
 * One completion or chat-completion request as the server reads it: validation of the body the
 * personality's way (parseCompletion), and the engine request it becomes (buildEngineRequest),
 * with the context-length checks. Errors are RequestError, answered by the server in the
 * personality's error shape.
 */

import { renderChat, type ChatMessage } from './chat-template.js';
import { EngineRequest, type SimSink } from './engine-model.js';
import { type FaultPlan } from './faults.js';
import { hashPromptBlocks } from './kv-cache.js';
import { servedMaxModelLen, type SimProfile } from './profiles.js';
import { surfaceFor, type Surface } from './surface.js';

export type EndpointKind = 'chat' | 'completions';

/** A request that failed validation: status + message + param. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly type = 'BadRequestError',
    /** extra fields some personalities put in the error body (llama.cpp: n_prompt_tokens, n_ctx) */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface ParsedCompletion {
  kind: EndpointKind;
  promptText: string;
  stream: boolean;
  includeUsage: boolean;
  continuousUsage: boolean;
  maxTokens: number;
  minTokens: number;
  ignoreEos: boolean;
  /** llama.cpp `timings_per_token`: timings on every chunk */
  timingsPerToken: boolean;
  /** the `model` of the response chunks */
  responseModel: string;
}

function optInt(body: Record<string, unknown>, key: string, allowMinusOne = false): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (allowMinusOne && v === -1) return -1;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new RequestError(400, `${key} must be a non-negative integer, got ${JSON.stringify(v)}`, key);
  }
  return v;
}

/** TRT-LLM: request models use extra="forbid", so an unknown field is a 400. */
function checkAllowedFields(kind: EndpointKind, body: Record<string, unknown>, surface: Surface): void {
  const allowed = surface.allowedFields;
  if (!allowed) return;
  const set = kind === 'chat' ? allowed.chat : allowed.completions;
  const extra = Object.keys(body).filter((k) => !set.has(k));
  const so = body.stream_options;
  if (so && typeof so === 'object' && !Array.isArray(so)) {
    for (const k of Object.keys(so)) if (!allowed.streamOptions.has(k)) extra.push(`stream_options.${k}`);
  }
  if (extra.length === 0) return;
  if (surface.strictFields) throw new RequestError(400, `Unrecognized request argument supplied: ${extra.join(', ')}`, extra[0]!);
  throw new RequestError(400, `${extra.length} validation error(s): ${extra.map((k) => `${k}: Extra inputs are not permitted`).join('; ')}`, extra[0]!);
}

/** The output cap the body asks for, read the way the personality reads it. */
function maxTokensOf(kind: EndpointKind, body: Record<string, unknown>, profile: SimProfile): number | undefined {
  switch (profile.personality) {
    case 'llamacpp': {
      const n = optInt(body, 'n_predict', true) ?? optInt(body, 'max_completion_tokens') ?? optInt(body, 'max_tokens');
      return n === -1 ? undefined : n;
    }
    case 'tgi':
      return optInt(body, 'max_tokens') ?? optInt(body, 'max_completion_tokens');
    case 'ollama':
      return optInt(body, 'max_tokens');
    case 'trtllm':
      if (kind === 'completions' && typeof body.model !== 'string') throw new RequestError(400, 'model: Field required', 'model');
      return kind === 'chat' ? (optInt(body, 'max_completion_tokens') ?? optInt(body, 'max_tokens')) : optInt(body, 'max_tokens');
    default:
      return kind === 'chat'
        ? (optInt(body, 'max_completion_tokens') ?? optInt(body, 'max_tokens'))
        : (optInt(body, 'max_tokens') ?? profile.defaultCompletionMaxTokens);
  }
}

/** Validates a request body and renders its prompt. */
export function parseCompletion(kind: EndpointKind, body: Record<string, unknown>, profile: SimProfile): ParsedCompletion {
  const surface = surfaceFor(profile);
  checkAllowedFields(kind, body, surface);
  if (surface.checksModel && typeof body.model === 'string' && body.model !== profile.modelId) {
    const message =
      profile.personality === 'ollama' ? `model "${body.model}" not found, try pulling it first` : `The model \`${body.model}\` does not exist.`;
    throw new RequestError(404, message, 'model', 'NotFoundError');
  }
  let promptText: string;
  if (kind === 'chat') {
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      throw new RequestError(400, 'messages must be a non-empty array of {role, content}', 'messages');
    }
    promptText = renderChat(body.messages as ChatMessage[]);
  } else {
    const p = body.prompt;
    if (typeof p === 'string') promptText = p;
    else if (Array.isArray(p) && p.length === 1 && typeof p[0] === 'string') promptText = p[0];
    else throw new RequestError(400, 'prompt must be a string (or an array of one string)', 'prompt');
  }
  const stream = body.stream === true;
  const so = body.stream_options as Record<string, unknown> | undefined | null;
  if (so && !stream && profile.personality === 'vllm') {
    throw new RequestError(400, 'Stream options can only be defined when `stream=True`.', 'stream_options');
  }
  // TRT-LLM: include_usage defaults to true once stream_options is sent
  // noStreamUsage: a stream carries no usage whatever stream_options asks
  const noUsage = stream && surface.noStreamUsage;
  const includeUsage = !noUsage && (so?.include_usage === true || (surface.includeUsageByDefault && !!so && so.include_usage !== false));
  const continuousFlag = so?.continuous_usage_stats === true || body.continuous_usage_stats === true;
  // vLLM, TRT-LLM: continuous usage only together with include_usage; SGLang: on its own; others: never
  const continuousUsage =
    stream && !noUsage && continuousFlag && (surface.continuousUsage === 'alone' || (surface.continuousUsage === 'with-include-usage' && includeUsage));
  const maxTokens = maxTokensOf(kind, body, profile);
  const minTokens = surface.honoursMinTokens ? (optInt(body, 'min_tokens') ?? 0) : 0;
  return {
    kind,
    promptText,
    stream,
    includeUsage,
    continuousUsage,
    maxTokens: maxTokens ?? -1, // resolved against the prompt length below
    minTokens,
    ignoreEos: surface.honoursIgnoreEos && body.ignore_eos === true,
    timingsPerToken: surface.timings && body.timings_per_token === true,
    responseModel:
      surface.echoesModel !== undefined ? (typeof body.model === 'string' && body.model !== '' ? body.model : surface.echoesModel) : profile.modelId,
  };
}
/** Builds the engine request for a parsed completion. */
export function buildEngineRequest(
  profile: SimProfile,
  parsed: ParsedCompletion,
  sink: SimSink,
  rng: () => number,
  faults: FaultPlan,
): { req: EngineRequest; promptTokens: number; promptHash: string } {
  const blocks = hashPromptBlocks(parsed.promptText, profile.blockSize, profile.prefixCaching);
  const promptTokens = blocks.tokens;
  const maxLen = servedMaxModelLen(profile);
  const details = { n_prompt_tokens: promptTokens, n_ctx: maxLen };
  if (promptTokens >= maxLen) {
    throw new RequestError(
      400,
      `This model's maximum context length is ${maxLen} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages.`,
      'input_tokens',
      'BadRequestError',
      details,
    );
  }
  const maxTokens = parsed.maxTokens < 0 ? maxLen - promptTokens : parsed.maxTokens;
  if (promptTokens + maxTokens > maxLen) {
    throw new RequestError(
      400,
      `This model's maximum context length is ${maxLen} tokens. However, you requested ${promptTokens + maxTokens} tokens (${promptTokens} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
      'max_tokens',
      'BadRequestError',
      details,
    );
  }
  if (promptTokens + maxTokens > profile.kvCapacityTokens) {
    throw new RequestError(400, `prompt + max_tokens = ${promptTokens + maxTokens} tokens exceeds the KV cache (${profile.kvCapacityTokens} tokens)`, 'max_tokens');
  }
  let eosAt = Infinity;
  if (!parsed.ignoreEos && profile.eosProbability > 0) {
    const u = rng();
    const gap = Math.floor(Math.log(1 - u) / Math.log(1 - Math.min(profile.eosProbability, 0.999999)));
    eosAt = Math.max(1, parsed.minTokens) + gap;
  }
  // wire.maxTokensFactor: a server that ignores max_tokens generates more than it was asked for
  const req = new EngineRequest(blocks, Math.max(1, Math.round(maxTokens * (profile.wire.maxTokensFactor ?? 1))), eosAt, sink);
  if (faults.stallMs !== undefined) {
    req.stallAtToken = faults.stallAfter ?? 0;
    req.stallMs = faults.stallMs;
  }
  return { req, promptTokens, promptHash: blocks.textHash.toString(16).padStart(8, '0') };
}
