/**
 * One completion or chat-completion request: validation, the engine request, and the sink that
 * turns engine emissions into SSE chunks (or one JSON body), records ground truth and applies
 * mid-stream faults.
 */

import type { ServerResponse } from 'node:http';
import { monoMs } from '../clock.js';
import { renderChat, type ChatMessage } from './chat-template.js';
import { EngineRequest, type FinishReason, type SimSink } from './engine.js';
import { type FaultPlan } from './faults.js';
import { hashPromptBlocks } from './kv-cache.js';
import { ChunkWriter, DONE_EVENT, errorEvent, usageJson } from './personality.js';
import type { SimProfile } from './profiles.js';
import { genPiece } from './tokenizer.js';
import type { TruthRecord, TruthStore } from './truth.js';

export type EndpointKind = 'chat' | 'completions';

/** A request that failed validation: status + message + param. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly type = 'BadRequestError',
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
}

function optInt(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new RequestError(400, `${key} must be a non-negative integer, got ${JSON.stringify(v)}`, key);
  }
  return v;
}

/** Validates a request body and renders its prompt. */
export function parseCompletion(kind: EndpointKind, body: Record<string, unknown>, profile: SimProfile): ParsedCompletion {
  if (typeof body.model === 'string' && body.model !== profile.modelId) {
    throw new RequestError(404, `The model \`${body.model}\` does not exist.`, 'model', 'NotFoundError');
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
  const includeUsage = so?.include_usage === true;
  const continuousFlag = so?.continuous_usage_stats === true || body.continuous_usage_stats === true;
  // vLLM: continuous usage only together with include_usage; SGLang: on its own
  const continuousUsage = stream && continuousFlag && (profile.personality === 'sglang' || includeUsage);
  const maxTokens =
    kind === 'chat'
      ? (optInt(body, 'max_completion_tokens') ?? optInt(body, 'max_tokens'))
      : (optInt(body, 'max_tokens') ?? profile.defaultCompletionMaxTokens);
  const minTokens = optInt(body, 'min_tokens') ?? 0;
  return {
    kind,
    promptText,
    stream,
    includeUsage,
    continuousUsage,
    maxTokens: maxTokens ?? -1, // resolved against the prompt length below
    minTokens,
    ignoreEos: body.ignore_eos === true,
  };
}

/** The emission that took the count from `from` to `to` passed the fault threshold `at`. */
function crossed(at: number | undefined, from: number, to: number): boolean {
  return at !== undefined && from < at && to >= at;
}

/** Text of generated tokens [from, from+n). */
function genText(seed: number, from: number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += genPiece(seed, from + i);
  return s;
}

export interface SinkOptions {
  profile: SimProfile;
  parsed: ParsedCompletion;
  res: ServerResponse;
  truth: TruthRecord;
  truthStore: TruthStore;
  faults: FaultPlan;
  seed: number;
  chunkId: string;
  /** headers are written before the first token (vLLM) or with it (SGLang) */
  headersFirst: boolean;
  onFirstToken(ttftMs: number): void;
  /** end the engine request (fault) */
  abort(): void;
}

/** Receives engine emissions for one request and writes them. */
export class CompletionSink implements SimSink {
  private generated = 0;
  private ended = false;
  private readonly writer: ChunkWriter;
  private nonStreamText = '';
  private nonStreamReasoning = '';

  constructor(private readonly o: SinkOptions) {
    this.writer = new ChunkWriter(o.profile.personality, o.parsed.kind, o.chunkId, o.profile.modelId, Math.floor(Date.now() / 1000));
  }

  get isEnded(): boolean {
    return this.ended;
  }

  onAdmit(nowMs: number): void {
    this.o.truth.admittedMs = nowMs;
    this.o.truth.cachedTokens = this.engineReq?.cachedTokens ?? 0;
  }

  engineReq: EngineRequest | undefined;

  private usage(): string {
    return usageJson({ promptTokens: this.o.truth.promptTokens, completionTokens: this.generated, cachedTokens: this.o.truth.cachedTokens });
  }

  onTokens(n: number, finish: FinishReason | undefined): void {
    if (this.ended) return;
    const o = this.o;
    const from = this.generated;
    this.generated += n;
    o.truth.completionTokens = this.generated;
    const reasoningEnd = o.parsed.kind === 'chat' ? o.profile.reasoningTokens : 0;
    if (!o.parsed.stream) {
      this.collect(from, n, reasoningEnd);
      if (o.truth.firstTokenMs === undefined) this.markFirst(monoMs());
      if (finish) this.finishNonStream(finish);
      return;
    }
    let out = from === 0 ? this.writer.role() : '';
    const usage = o.parsed.continuousUsage ? this.usage() : undefined;
    // split at the reasoning boundary when the chunk crosses it
    const nReason = Math.max(0, Math.min(n, reasoningEnd - from));
    const nContent = n - nReason;
    if (finish) {
      if (nReason > 0 && nContent > 0) {
        out += this.writer.tokens(genText(o.seed, from, nReason), true, usage);
        out += this.writer.last(genText(o.seed, from + nReason, nContent), false, finish, usage);
      } else {
        out += this.writer.last(genText(o.seed, from, n), nReason > 0, finish, usage);
      }
      if (o.parsed.includeUsage) out += this.writer.usageOnly(this.usage());
      out += DONE_EVENT;
    } else if (nReason > 0 && nContent > 0) {
      out += this.writer.tokens(genText(o.seed, from, nReason), true, usage);
      out += this.writer.tokens(genText(o.seed, from + nReason, nContent), false, usage);
    } else {
      out += this.writer.tokens(n === 1 ? genPiece(o.seed, from) : genText(o.seed, from, n), nReason > 0, usage);
    }
    const f = o.faults;
    if (f.hugeAfter !== undefined && crossed(f.hugeAfter, from, this.generated)) {
      out = out.replace(/}\n\n$/, `,"sim_padding":"${'x'.repeat(f.hugeBytes ?? 1 << 20)}"}\n\n`);
    }
    if (f.malformedAfter !== undefined && crossed(f.malformedAfter, from, this.generated)) {
      out += 'data: {"id":"malformed","choices":[{"delta":{"content":"\n\n';
    }
    if (!o.res.headersSent) this.writeHead();
    const t = monoMs();
    this.write(out);
    o.truth.addChunk(t, n);
    o.truthStore.noteChunk();
    if (from === 0) this.markFirst(t);
    if (finish) {
      this.end('done', t);
      o.res.end();
      return;
    }
    if (crossed(f.errorAfter, from, this.generated)) {
      this.write(errorEvent('simulated mid-stream error (X-Sim-Fault error-after)', 500) + DONE_EVENT);
      this.end('error', monoMs());
      o.abort();
      o.res.end();
    } else if (crossed(f.closeAfter, from, this.generated)) {
      this.end('error', monoMs());
      o.abort();
      o.res.end(); // no [DONE]
    }
  }

  /**
   * Writes one SSE piece. On a chunked HTTP/1.1 response it frames the chunk itself and writes
   * straight to the socket: one write call instead of http's cork, three buffers and writev.
   * Order is kept because both paths append to the same socket stream.
   */
  private write(out: string): void {
    const res = this.o.res;
    const socket = res.socket;
    if (socket && !socket.destroyed && (res as unknown as { chunkedEncoding?: boolean }).chunkedEncoding === true) {
      socket.write(`${Buffer.byteLength(out).toString(16)}\r\n${out}\r\n`);
    } else {
      res.write(out);
    }
  }

  private markFirst(t: number): void {
    this.o.truth.firstTokenMs = t;
    this.o.onFirstToken(t - this.o.truth.receivedMs);
  }

  writeHead(): void {
    if (this.o.res.headersSent) return;
    this.o.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': this.o.truth.id,
    });
    this.o.res.flushHeaders();
  }

  private collect(from: number, n: number, reasoningEnd: number): void {
    for (let i = 0; i < n; i++) {
      const piece = genPiece(this.o.seed, from + i);
      if (from + i < reasoningEnd) this.nonStreamReasoning += piece;
      else this.nonStreamText += piece;
    }
  }

  private finishNonStream(finish: FinishReason): void {
    const o = this.o;
    const t = monoMs();
    o.truth.addChunk(t, this.generated);
    o.truthStore.noteChunk();
    const usage = JSON.parse(this.usage()) as unknown;
    const created = Math.floor(Date.now() / 1000);
    let body: Record<string, unknown>;
    if (o.parsed.kind === 'chat') {
      const message: Record<string, unknown> = { role: 'assistant', content: this.nonStreamText };
      if (o.profile.reasoningTokens > 0) message[o.profile.personality === 'vllm' ? 'reasoning' : 'reasoning_content'] = this.nonStreamReasoning;
      body = { id: o.chunkId, object: 'chat.completion', created, model: o.profile.modelId, choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage };
    } else {
      body = { id: o.chunkId, object: 'text_completion', created, model: o.profile.modelId, choices: [{ index: 0, text: this.nonStreamText, logprobs: null, finish_reason: finish }], usage };
    }
    const json = JSON.stringify(body);
    this.end('done', t);
    o.res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': o.truth.id });
    o.res.end(json);
  }

  /** Marks the request over (idempotent). */
  end(kind: 'done' | 'aborted' | 'error', atMs: number): void {
    if (this.ended) return;
    this.ended = true;
    this.o.truth.end = kind;
    this.o.truth.endMs = atMs;
  }
}

/** Builds the engine request for a parsed completion. */
export function buildEngineRequest(
  profile: SimProfile,
  parsed: ParsedCompletion,
  sink: CompletionSink,
  rng: () => number,
  faults: FaultPlan,
): { req: EngineRequest; promptTokens: number } {
  const blocks = hashPromptBlocks(parsed.promptText, profile.blockSize, profile.prefixCaching);
  const promptTokens = blocks.tokens;
  if (promptTokens >= profile.maxModelLen) {
    throw new RequestError(
      400,
      `This model's maximum context length is ${profile.maxModelLen} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages.`,
      'input_tokens',
    );
  }
  const maxTokens = parsed.maxTokens < 0 ? profile.maxModelLen - promptTokens : parsed.maxTokens;
  if (promptTokens + maxTokens > profile.maxModelLen) {
    throw new RequestError(
      400,
      `This model's maximum context length is ${profile.maxModelLen} tokens. However, you requested ${promptTokens + maxTokens} tokens (${promptTokens} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
      'max_tokens',
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
  const req = new EngineRequest(blocks, Math.max(1, maxTokens), eosAt, sink);
  if (faults.stallMs !== undefined) {
    req.stallAtToken = faults.stallAfter ?? 0;
    req.stallMs = faults.stallMs;
  }
  return { req, promptTokens };
}
