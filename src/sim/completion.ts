/**
 * The sink of one completion request: turns engine emissions into the personality's SSE chunks
 * (or one JSON body), records ground truth and applies mid-stream faults. The request itself
 * (validation, the engine request) is request.ts.
 */

import type { ServerResponse } from 'node:http';
import { monoMs } from '../clock.js';
import type { EngineRequest, FinishReason, SimSink } from './engine-model.js';
import { type FaultPlan } from './faults.js';
import { mulberry32 } from '../random.js';
import { ChunkWriter, CONSTANT_USAGE, DONE_EVENT, errorEvent, UNTERMINATED_DONE, usageJson, ZERO_USAGE } from './personality.js';
import type { SimProfile } from './profiles.js';
import type { ParsedCompletion } from './request-body.js';
import { surfaceFor, type Surface } from './surface.js';
import { genPiece } from './tokenizer.js';
import type { TruthRecord, TruthStore } from './truth.js';

/** Responses written on the raw socket (closeDelimited): nothing may go out through `res` after their head. */
export const RAW_RESPONSES = new WeakSet<ServerResponse>();

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
  /** the request ended (any way); its truth record is final */
  onEnd?(truth: TruthRecord): void;
}

/** Receives engine emissions for one request and writes them. */
export class CompletionSink implements SimSink {
  private generated = 0;
  private ended = false;
  private readonly writer: ChunkWriter;
  private nonStreamText = '';
  private nonStreamReasoning = '';
  private readonly surface: Surface;
  /** tokensPerChunk: generated tokens not written yet, the size of the chunk being filled, and its draws */
  private held = 0;
  private chunkTarget = 1;
  private readonly chunkRng: (() => number) | undefined;
  /** closeDelimited: the response was written on the raw socket (HTTP/1.0), not through `res` */
  private raw = false;
  /** pollMs: the finish the engine gave, written at the next poll; the next poll's time and timer */
  private pollFinish: FinishReason | undefined;
  private nextPollMs: number | undefined;
  private pollTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly o: SinkOptions) {
    this.surface = surfaceFor(o.profile);
    this.writer = new ChunkWriter(o.profile.personality, o.parsed.kind, o.chunkId, o.parsed.responseModel, Math.floor(Date.now() / 1000), o.profile.version, this.surface);
    if (o.parsed.stream && this.surface.tokensPerChunk[1] > 1) {
      this.chunkRng = mulberry32(0x9e3779b9 ^ o.seed);
      this.chunkTarget = this.drawChunk();
    }
  }

  /** The next chunk's token count, in [min, max] of tokensPerChunk, from the request's own draws. */
  private drawChunk(): number {
    const [min, max] = this.surface.tokensPerChunk;
    return min + Math.floor(this.chunkRng!() * (max - min + 1));
  }

  /** the response went out (headers written), through `res` or on the raw socket */
  get headersSent(): boolean {
    return this.raw || this.o.res.headersSent;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  onAdmit(nowMs: number): void {
    this.o.truth.admittedMs = nowMs;
    this.o.truth.cachedTokens = this.engineReq?.cachedTokens ?? 0;
  }

  engineReq: EngineRequest | undefined;

  /** The usage block the server reports: constantUsage's fixed one, else the counts (× the usage-factor fault). */
  private usage(): string {
    if (this.surface.constantUsage) return CONSTANT_USAGE;
    const factor = this.o.faults.usageFactor ?? 1;
    const completionTokens = factor === 1 ? this.generated : Math.round(this.generated * factor);
    return usageJson({ promptTokens: this.o.truth.promptTokens, completionTokens, cachedTokens: this.o.truth.cachedTokens }, this.surface.usageCachedTokens);
  }

  /** llama.cpp `timings` of this request so far (ENGINES.md §3; b4748 has no cache_n: prompt_n is the computed part). */
  timingsJson(nowMs: number): string {
    const t = this.o.truth;
    const promptDoneMs = t.firstTokenMs ?? nowMs;
    const promptMs = t.promptMsUntil(promptDoneMs);
    const predictedMs = Math.max(0, nowMs - promptDoneMs);
    const promptN = t.promptComputedTokens;
    const perSecond = predictedMs > 0 ? (this.generated / predictedMs) * 1000 : 0;
    return (
      `{"prompt_n":${promptN},"prompt_ms":${promptMs},"prompt_per_token_ms":${promptN > 0 ? promptMs / promptN : 0},` +
      `"prompt_per_second":${promptMs > 0 ? (promptN / promptMs) * 1000 : 0},"predicted_n":${this.generated},"predicted_ms":${predictedMs},` +
      `"predicted_per_token_ms":${this.generated > 0 ? predictedMs / this.generated : 0},"predicted_per_second":${perSecond}}`
    );
  }

  /** The stream pieces of one emission: text segments split at the reasoning boundary (and per token for TGI). */
  private segments(from: number, n: number, reasoningEnd: number): Array<{ text: string; reasoning: boolean }> {
    const seed = this.o.seed;
    if (this.surface.oneEventPerToken) {
      const out: Array<{ text: string; reasoning: boolean }> = [];
      for (let i = 0; i < n; i++) out.push({ text: genPiece(seed, from + i), reasoning: from + i < reasoningEnd });
      return out;
    }
    const nReason = Math.max(0, Math.min(n, reasoningEnd - from));
    const nContent = n - nReason;
    if (nReason > 0 && nContent > 0) {
      return [
        { text: genText(seed, from, nReason), reasoning: true },
        { text: genText(seed, from + nReason, nContent), reasoning: false },
      ];
    }
    return [{ text: n === 1 ? genPiece(seed, from) : genText(seed, from, n), reasoning: nReason > 0 }];
  }

  onTokens(n: number, finish: FinishReason | undefined): void {
    if (this.ended) return;
    this.o.truth.noteGenerated(monoMs(), n);
    if (this.o.parsed.stream && this.surface.pollMs !== undefined) return this.holdForPoll(n, finish);
    if (this.chunkRng === undefined) return this.emit(n, finish);
    // tokensPerChunk: hold tokens back until the chunk is full (or the request finishes)
    this.held += n;
    if (!finish && this.held < this.chunkTarget) return;
    const out = finish ? this.held : this.chunkTarget;
    this.held -= out;
    this.chunkTarget = this.drawChunk();
    this.emit(out, finish);
    // an engine emission larger than a chunk: the rest fills the next chunk(s)
    while (!this.ended && !finish && this.held >= this.chunkTarget) {
      const next = this.chunkTarget;
      this.held -= next;
      this.chunkTarget = this.drawChunk();
      this.emit(next, undefined);
    }
  }

  /**
   * pollMs: the tokens wait for the next poll, which writes all of them as one chunk. The first
   * poll is firstPollMs (default pollMs) after the request arrived, the next ones pollMs apart.
   */
  private holdForPoll(n: number, finish: FinishReason | undefined): void {
    this.held += n;
    if (finish) this.pollFinish = finish;
    if (this.pollTimer !== undefined) return;
    const every = this.surface.pollMs!;
    const now = monoMs();
    let at = this.nextPollMs ?? this.o.truth.receivedMs + (this.surface.firstPollMs ?? every);
    while (at < now) at += every;
    this.nextPollMs = at;
    this.pollTimer = setTimeout(() => this.poll(), at - now);
  }

  /** One poll: writes what the engine generated since the last one (with its finish), then waits for the next tokens. */
  private poll(): void {
    this.pollTimer = undefined;
    this.nextPollMs = (this.nextPollMs ?? monoMs()) + this.surface.pollMs!;
    if (this.ended || (this.held === 0 && this.pollFinish === undefined)) return;
    const n = this.held;
    this.held = 0;
    this.emit(n, this.pollFinish);
  }

  /** Writes `n` more tokens (with the finish, when given) as the personality's chunk(s). */
  private emit(n: number, finish: FinishReason | undefined): void {
    if (this.ended) return;
    const o = this.o;
    const s = this.surface;
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
    if (from === 0) o.truth.firstTokenMs ??= monoMs(); // timings need it before the first write
    const nowMs = monoMs();
    let out = from === 0 ? this.writer.role() : '';
    const usage = o.parsed.continuousUsage ? this.usage() : undefined;
    const completions = o.parsed.kind === 'completions';
    let textExtra = '';
    if (s.zeroUsageOnCompletionChunks && completions && o.parsed.includeUsage && !s.noStreamUsage) textExtra += `,"usage":${ZERO_USAGE}`;
    if (o.parsed.timingsPerToken) textExtra += `,"timings":${this.timingsJson(nowMs)}`;
    // common case (one chunk, no reasoning boundary): no segment list is built
    let tail: { text: string; reasoning: boolean };
    if (!s.oneEventPerToken && from >= reasoningEnd) {
      tail = { text: n === 1 ? genPiece(o.seed, from) : genText(o.seed, from, n), reasoning: false };
    } else {
      const segs = this.segments(from, n, reasoningEnd);
      const lastSeg = segs.length - 1;
      for (let i = 0; i < lastSeg; i++) out += this.writer.tokens(segs[i]!.text, segs[i]!.reasoning, usage, textExtra);
      tail = segs[lastSeg]!;
    }
    if (finish) {
      const timings = s.timings ? `,"timings":${this.timingsJson(nowMs)}` : '';
      // llama.cpp and TGI /v1/completions, llama.cpp chat too: the final chunk always has usage
      const usageOnFinal = !s.noStreamUsage && ((completions && s.completionsAlwaysUsage) || s.usageOnFinishChunk);
      const usageChunk = o.parsed.includeUsage && !usageOnFinal;
      let finalSuffix = usageOnFinal && usage === undefined ? `,"usage":${this.usage()}` : '';
      if (!usageChunk) finalSuffix += timings;
      out += this.writer.last(tail.text, tail.reasoning, finish, { usage, textExtra, finalSuffix });
      if (usageChunk) out += this.writer.usageOnly(this.usage(), timings);
      out += s.unterminatedLastEvent ? UNTERMINATED_DONE : DONE_EVENT;
    } else {
      out += this.writer.tokens(tail.text, tail.reasoning, usage, textExtra);
    }
    const f = o.faults;
    if (f.hugeAfter !== undefined && crossed(f.hugeAfter, from, this.generated)) {
      out = out.replace(/}\n\n$/, `,"sim_padding":"${'x'.repeat(f.hugeBytes ?? 1 << 20)}"}\n\n`);
    }
    if (f.malformedAfter !== undefined && crossed(f.malformedAfter, from, this.generated)) {
      out += 'data: {"id":"malformed","choices":[{"delta":{"content":"\n\n';
    }
    if (!this.headersSent) this.writeHead();
    const t = monoMs();
    this.write(out);
    o.truth.addChunk(t, n);
    o.truthStore.noteChunk();
    if (from === 0) this.markFirst(t);
    if (finish) {
      this.end('done', t);
      this.endStream();
      return;
    }
    if (crossed(f.errorAfter, from, this.generated)) {
      this.midStreamError();
    } else if (crossed(f.closeAfter, from, this.generated)) {
      this.end('error', monoMs());
      o.abort();
      this.endStream(); // no [DONE]
    }
  }

  /** Ends a streamed response; a personality that closes after a stream (llama.cpp) closes the connection once it is written. */
  private endStream(): void {
    const res = this.o.res;
    const socket = res.socket;
    if (this.raw) {
      // close-delimited: the close is the end of the body (FIN once the bytes are out)
      socket?.destroySoon();
      return;
    }
    res.end();
    if (!this.surface.closesAfterStream || !socket) return;
    const close = (): void => {
      socket.destroySoon();
    };
    if (res.writableFinished) close();
    else res.once('finish', close);
  }

  /**
   * A failure after streaming began, the personality's way (ENGINES.md): vLLM, SGLang and TGI send
   * an error event then [DONE]; llama.cpp an error event then closes; Ollama just ends the stream;
   * TRT-LLM drops the connection.
   */
  private midStreamError(): void {
    const o = this.o;
    const mode = this.surface.midStreamError;
    const event = errorEvent('simulated mid-stream error (X-Sim-Fault error-after)', 500, o.profile.personality);
    if (mode === 'event-then-done') this.write(event + DONE_EVENT);
    else if (mode === 'event-then-close') this.write(event);
    this.end('error', monoMs());
    o.abort();
    if (mode === 'reset') o.res.socket?.destroy();
    else this.endStream();
  }

  /**
   * Writes one SSE piece. On a chunked HTTP/1.1 response it frames the chunk itself and writes
   * straight to the socket: one write call instead of http's cork, three buffers and writev.
   * Order is kept because both paths append to the same socket stream.
   */
  private write(out: string): void {
    const res = this.o.res;
    const socket = res.socket;
    if (this.raw) {
      if (socket && !socket.destroyed) socket.write(out);
      return;
    }
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
    if (this.headersSent) return;
    if (this.surface.closeDelimited && this.o.parsed.stream) return this.writeRawHead();
    this.o.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': this.o.truth.id,
    });
    this.o.res.flushHeaders();
  }

  /**
   * closeDelimited: the status line and headers of an HTTP/1.0 response, written on the socket
   * itself (node:http always answers HTTP/1.1 and frames the body), as a Python http.server
   * stack sends them: no Content-Length, no Transfer-Encoding, no Connection header. Everything
   * after goes on the socket too, and the body ends when the socket is closed (endStream).
   */
  private writeRawHead(): void {
    const socket = this.o.res.socket;
    if (!socket || socket.destroyed) return;
    this.raw = true;
    RAW_RESPONSES.add(this.o.res);
    socket.write(
      'HTTP/1.0 200 OK\r\n' +
        'Server: SimHTTP/0.6 Python/3.12\r\n' +
        `Date: ${new Date().toUTCString()}\r\n` +
        'Content-Type: text/event-stream\r\n' +
        'Cache-Control: no-cache\r\n' +
        `X-Request-Id: ${this.o.truth.id}\r\n` +
        '\r\n',
    );
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
      if (o.profile.reasoningTokens > 0) message[this.surface.reasoningField] = this.nonStreamReasoning;
      body = { id: o.chunkId, object: 'chat.completion', created, model: o.parsed.responseModel, choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage };
    } else {
      body = { id: o.chunkId, object: 'text_completion', created, model: o.parsed.responseModel, choices: [{ index: 0, text: this.nonStreamText, logprobs: null, finish_reason: finish }], usage };
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
    if (this.pollTimer !== undefined) clearTimeout(this.pollTimer);
    this.o.truth.end = kind;
    this.o.truth.endMs = atMs;
    this.o.onEnd?.(this.o.truth);
  }
}
