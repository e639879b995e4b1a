/**
 * Real llama.cpp (b4748) wire transcripts replayed through the streaming client
 * (test/fixtures/llamacpp-b4748/, recorded by scripts/real-llamacpp/record-transcripts.ts; the
 * replay is test/helpers/replay-server.ts). Every expectation is derived from the transcript itself
 * (its bytes and their played offsets), read by test/helpers/transcript.ts without the client's code:
 * the client must count what the server sent and time it as it arrived.
 *
 * Set LLM_BENCH_REPLAY_REPORT=1 to print the compared figures.
 */
import { createHash } from 'node:crypto';
import net from 'node:net';
import { Client } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { streamRequest } from '../../src/client/stream.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { LlamacppAdapter } from '../../src/engines/llamacpp.js';
import { CROSS_CHECK_TOLERANCE } from '../../src/metrics/crosscheck.js';
import { requestTimeBetweenTokensMs } from '../../src/metrics/request.js';
import { replaySchedule, startReplayServer, type ReplayOptions, type ReplayServer } from '../helpers/replay-server.js';
import { header, loadTranscript, parseHttpResponse, sseEvents, type Transcript, type TranscriptRequest } from '../helpers/transcript.js';

const adapter = new LlamacppAdapter();
const decode = (payload: unknown): ReturnType<LlamacppAdapter['decodeChunk']> => adapter.decodeChunk(payload);

/** first-token time: recorded offset ± (15 ms + 20 %), robust on a loaded 2-core machine */
const TTFT_ABS_MS = 15;
const TTFT_REL = 0.2;
/** the client's per-request tok/s vs the same figure from the played offsets */
const TPS_REL = 0.05;
/**
 * Streams are played at 3× their recorded offsets (LLM_BENCH_REPLAY_SCALE=1 plays them as recorded):
 * the shortest token window (d2: 8 tokens in 35 ms) then lasts ~105 ms, so a few ms of scheduling
 * delay on a loaded 2-core machine stays inside 5 %. At 1× with two CPU hogs running, c and d2 went
 * over 5 % in some runs; idle, the 1× replay agrees within 0–3.3 %.
 */
const SCALE = Number(process.env.LLM_BENCH_REPLAY_SCALE ?? 3);
const STREAM_OPTS: ReplayOptions = { timeScale: SCALE };
/** the d2 prefill (15 s) is played as 100 ms (before scaling): every gap over 1 s */
const D2_OPTS: ReplayOptions = { timeScale: SCALE, compressGaps: { overMs: 1_000, toMs: 100 } };

const toClose: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of toClose.splice(0).reverse()) await c();
});

const report: string[] = [];
afterAll(() => {
  if (process.env.LLM_BENCH_REPLAY_REPORT) console.info(`replayed llama.cpp transcripts:\n${report.join('\n')}`);
});

/** the body exactly as recorded (a long prompt rebuilt from its recipe; its sha256 must match) */
function recordedBody(r: TranscriptRequest): string {
  let body: string;
  if (r.body !== undefined) body = r.body;
  else if (r.bodyElided) {
    const p = r.bodyElided.prompt;
    body = r.bodyElided.template.replace('"<prompt>"', JSON.stringify(p.unit.repeat(p.repeat)));
  } else throw new Error('request without a body');
  expect(createHash('sha256').update(body).digest('hex')).toBe(r.bodySha256);
  return body;
}

interface TokenChunk {
  atMs: number;
  tokens: number;
  /** the server's timings.predicted_ms on that chunk */
  predictedMs: number;
  predictedN: number;
}

/** What the wire says, at the offsets the replay plays it, read without the client's code. */
interface WireFacts {
  status: number;
  statusMessage?: string;
  /** the error body's message */
  errorMessage?: string;
  /** text-carrying chunks that add tokens (by the cumulative timings.predicted_n / usage) */
  tokenChunks: TokenChunk[];
  firstContentAtMs?: number;
  usage?: { prompt_tokens: number; completion_tokens: number };
  finalTimings?: { predicted_n: number; predicted_ms: number; predicted_per_second: number; prompt_n: number };
  endsWithDone: boolean;
  serverFinAtMs?: number;
  responseCompleteAtMs?: number;
}

/** the recorded reads at the offsets the replay plays them */
function playedReads(t: Transcript, opts: ReplayOptions = {}): Array<{ atMs: number; bytes: Buffer }> {
  return replaySchedule(t, opts).flatMap((s) => (s.event.kind === 'data' ? [{ atMs: s.atMs, bytes: Buffer.from(s.event.base64, 'base64') }] : []));
}

/* eslint-disable @typescript-eslint/no-explicit-any */
function wireFacts(t: Transcript, opts: ReplayOptions = {}): WireFacts {
  const played = replaySchedule(t, opts);
  const res = parseHttpResponse(playedReads(t, opts));
  if (!res) throw new Error(`${t.name}: no response head`);
  const facts: WireFacts = { status: res.status, tokenChunks: [], endsWithDone: false };
  const fin = played.find((s) => s.event.kind === 'end');
  if (fin) facts.serverFinAtMs = fin.atMs;
  if (res.completeAtMs !== undefined) facts.responseCompleteAtMs = res.completeAtMs;
  if (res.status !== 200) {
    const text = Buffer.concat(res.body.map((p) => p.bytes)).toString('utf8');
    facts.errorMessage = (JSON.parse(text) as any).error.message;
    return facts;
  }
  let cumulative = 0;
  for (const e of sseEvents(res.body)) {
    if (e.data === '[DONE]') {
      facts.endsWithDone = true;
      continue;
    }
    const j = JSON.parse(e.data) as any;
    const choice = j.choices?.[0];
    const hasText = typeof choice?.delta?.content === 'string' || typeof choice?.text === 'string';
    const cum: number | undefined = j.usage?.completion_tokens ?? j.timings?.predicted_n;
    if (hasText) facts.firstContentAtMs ??= e.atMs;
    if (hasText && cum !== undefined && cum > cumulative) {
      facts.tokenChunks.push({ atMs: e.atMs, tokens: cum - cumulative, predictedMs: j.timings.predicted_ms, predictedN: j.timings.predicted_n });
      cumulative = cum;
    }
    if (j.usage) facts.usage = j.usage;
    if (j.timings) facts.finalTimings = j.timings;
  }
  return facts;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** ms per token after the first, first to last token chunk (requestTimeBetweenTokensMs's definition) */
function wireTbtMs(chunks: readonly TokenChunk[]): number {
  const first = chunks[0]!;
  const last = chunks[chunks.length - 1]!;
  const after = chunks.reduce((s, c) => s + c.tokens, 0) - first.tokens;
  return (last.atMs - first.atMs) / after;
}

async function replay(t: Transcript, opts: ReplayOptions = {}): Promise<ReplayServer> {
  const srv = await startReplayServer([t], opts);
  toClose.push(srv.close);
  return srv;
}

function client(origin: string): Client {
  const c = new Client(origin, { pipelining: 1 });
  toClose.push(() => c.destroy());
  return c;
}

let seq = 0;
function send(t: Transcript, origin: string, dispatcher: Client, body: unknown = JSON.parse(recordedBody(t.requests[0]!))): Promise<RequestTimeline> {
  return streamRequest({
    id: `replay-${t.name}-${++seq}`,
    dispatcher,
    origin,
    path: t.requests[0]!.path,
    body,
    decode,
    endsWithDone: adapter.endsWithDone,
    timeouts: { headersMs: 10_000, stallMs: 10_000 },
  });
}

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
const rel = (a: number, b: number): number => Math.abs(a - b) / Math.abs(b);

/** The checks every replayed stream gets; returns the wire facts. */
function checkStream(t: Transcript, tl: RequestTimeline, opts: ReplayOptions = {}): WireFacts {
  const w = wireFacts(t, opts);
  expect(w.status).toBe(200);
  expect(w.endsWithDone).toBe(true);
  expect(tl.end?.kind, JSON.stringify(tl.end)).toBe('done');
  // tokens: the usage of the final chunk, attributed chunk by chunk as the wire's cumulative counts say
  expect(w.usage).toBeDefined();
  expect(Array.from(tl.chunkTokens).reduce((s, k) => s + k, 0)).toBe(w.usage!.completion_tokens);
  expect(tl.completionTokens).toBe(w.usage!.completion_tokens);
  expect(tl.promptTokens).toBe(w.usage!.prompt_tokens);
  expect(tl.tokenSource).toBe('usage');
  expect(tl.chunkTokens).toEqual(w.tokenChunks.map((c) => c.tokens));

  // first token, from the request being written (sentHeadersMs; the recording's offsets start there too)
  expect(tl.sentHeadersMs).toBeDefined();
  const ttft = tl.firstTokenMs! - tl.sentHeadersMs!;
  const wireTtft = w.firstContentAtMs!;
  expect(Math.abs(ttft - wireTtft), `TTFT ${ttft.toFixed(2)} ms vs wire ${wireTtft.toFixed(2)} ms`).toBeLessThanOrEqual(TTFT_ABS_MS + TTFT_REL * wireTtft);

  // per-request tok/s: the client's timeline vs the same figure from the played offsets
  const clientTbt = requestTimeBetweenTokensMs(tl, -Infinity, Infinity)!;
  const wireTbt = wireTbtMs(w.tokenChunks);
  const clientTps = 1000 / clientTbt;
  const wireTps = 1000 / wireTbt;
  expect(rel(clientTps, wireTps), `client ${clientTps.toFixed(1)} tok/s vs wire ${wireTps.toFixed(1)} tok/s`).toBeLessThanOrEqual(TPS_REL);

  // The server's own figures (its clock, not the wire's), compared with the wire figure at real
  // speed. 5 % is not what the data supports: over these 35–130 ms windows a chunk that leaves the
  // server a few ms late moves the wire window by that much (c: the first token's chunk went out
  // 2.9 ms late, together with the second, so the wire span is 68.8 ms where the server's is 71.7 ms:
  // 4.0 % on the window, 5.9 % on (n − 1) / predicted_ms). What holds on every transcript is the
  // cross-check's own tolerance (crosscheck.ts, 10 %).
  const first = w.tokenChunks[0]!;
  const last = w.tokenChunks[w.tokenChunks.length - 1]!;
  const fin = w.finalTimings!;
  // 1. its timings over the same window (predicted_ms of the first and the last token chunk)
  const serverWindowTps = ((last.predictedN - first.predictedN) / (last.predictedMs - first.predictedMs)) * 1000;
  // 2. crosscheck.ts's reading of the final timings: (predicted_n − 1) / predicted_ms
  const serverCrossTps = ((fin.predicted_n - 1) / fin.predicted_ms) * 1000;
  // 3. the server's predicted_per_second = predicted_n / predicted_ms: n tokens over the n − 1
  //    intervals predicted_ms spans (it is 0 at the first token), so it runs high by about n / (n − 1)
  //    (8 tokens: 14 %, d2 reads 12.4 % over the wire)
  const pps = fin.predicted_per_second;
  expect(pps).toBeCloseTo((fin.predicted_n / fin.predicted_ms) * 1000, 6);
  const wireTpsRealTime = wireTps * (opts.timeScale ?? 1);
  expect(rel(serverWindowTps, wireTpsRealTime), 'server timings over the window vs the wire').toBeLessThanOrEqual(CROSS_CHECK_TOLERANCE);
  expect(rel(serverCrossTps, wireTpsRealTime), '(n − 1) / predicted_ms vs the wire').toBeLessThanOrEqual(CROSS_CHECK_TOLERANCE);
  const bias = fin.predicted_n / (fin.predicted_n - 1);
  expect(pps / wireTpsRealTime).toBeGreaterThan(1 - CROSS_CHECK_TOLERANCE);
  expect(pps / wireTpsRealTime).toBeLessThan(bias + CROSS_CHECK_TOLERANCE / 2);

  report.push(
    `${t.name}: ${tl.chunkTokens.length} token chunks, ${w.usage!.completion_tokens} tokens (prompt ${w.usage!.prompt_tokens}); ` +
      `TTFT client ${ttft.toFixed(2)} ms / wire ${wireTtft.toFixed(2)} ms; ` +
      `tok/s client ${clientTps.toFixed(1)} / wire ${wireTps.toFixed(1)} (${pct(rel(clientTps, wireTps))}); ` +
      `server: window ${serverWindowTps.toFixed(1)} (${pct(rel(serverWindowTps, wireTpsRealTime))}), ` +
      `(n−1)/predicted_ms ${serverCrossTps.toFixed(1)} (${pct(rel(serverCrossTps, wireTpsRealTime))}), ` +
      `predicted_per_second ${pps.toFixed(1)} (${pct(rel(pps, wireTpsRealTime))}; n/(n−1) = ${bias.toFixed(3)})`,
  );
  return w;
}

describe('the transcripts as recorded', () => {
  it('every stream: 200, chunked SSE ending in [DONE], and the server closes right after the terminating chunk (FIN < 5 ms later)', () => {
    for (const name of ['a-chat-stream', 'b-chat-stream-twice-one-socket', 'c-completions-stream', 'd2-prompt-over-slot-context', 'e-chat-stream-1k-prompt']) {
      const t = loadTranscript(name);
      const w = wireFacts(t);
      const res = parseHttpResponse(playedReads(t))!;
      expect(w.status, name).toBe(200);
      expect(res.chunked, name).toBe(true);
      // llama.cpp advertises keep-alive on a response after which it closes
      expect(header(res, 'keep-alive'), name).toBe('timeout=5, max=100');
      expect(w.endsWithDone, name).toBe(true);
      expect(w.serverFinAtMs, name).toBeDefined();
      expect(w.serverFinAtMs! - w.responseCompleteAtMs!, name).toBeGreaterThanOrEqual(0);
      expect(w.serverFinAtMs! - w.responseCompleteAtMs!, name).toBeLessThan(5);
    }
  });

  it('b: the second request, written after the first response was complete, got no byte: the server closed', () => {
    const t = loadTranscript('b-chat-stream-twice-one-socket');
    expect(t.requests).toHaveLength(2);
    const w = wireFacts(t);
    const second = t.requests[1]!;
    expect(second.writtenAtMs).toBeGreaterThanOrEqual(w.responseCompleteAtMs!);
    const after = parseHttpResponse(playedReads(t))!;
    expect(after.rest.length).toBe(0);
    expect(w.serverFinAtMs).toBeGreaterThan(w.responseCompleteAtMs!);
  });

  it('d1: a malformed JSON body → HTTP 500 with a llama.cpp error body; the connection is kept open', () => {
    const t = loadTranscript('d1-malformed-json');
    const w = wireFacts(t);
    expect(w.status).toBe(500);
    expect(w.errorMessage).toMatch(/^\[json\.exception\.parse_error\.101\] parse error/);
    expect(w.serverFinAtMs).toBeUndefined();
    expect(t.events.some((e) => e.kind === 'client-close')).toBe(true);
  });

  it('d2: a prompt over the slot context is truncated, not refused: 200, the usage counts fewer prompt tokens than sent', () => {
    const t = loadTranscript('d2-prompt-over-slot-context');
    const w = wireFacts(t);
    const sent = t.requests[0]!.bodyElided!.prompt.repeat * 12; // 12 tokens per unit (POST /tokenize)
    expect(sent).toBeGreaterThan(t.server.nCtxPerSlot!);
    expect(w.usage!.prompt_tokens).toBeLessThan(t.server.nCtxPerSlot!);
    expect(w.usage!.completion_tokens).toBe(8);
    expect(w.finalTimings!.prompt_n).toBe(w.usage!.prompt_tokens);
  });

  it('the replay plays the recorded bytes, in order, and closes where the server closed', async () => {
    for (const name of ['a-chat-stream', 'd1-malformed-json']) {
      const t = loadTranscript(name);
      const srv = await replay(t);
      const got = await new Promise<{ bytes: Buffer; fin: boolean }>((resolve, reject) => {
        const parts: Buffer[] = [];
        let fin = false;
        const s = net.connect(Number(new URL(srv.origin).port), '127.0.0.1', () => {
          const r = t.requests[0]!;
          s.write(r.head);
          s.write(recordedBody(r));
        });
        s.on('data', (d: Buffer) => parts.push(d));
        s.on('end', () => {
          fin = true;
        });
        s.on('error', reject);
        s.on('close', () => resolve({ bytes: Buffer.concat(parts), fin }));
        // d1: the server kept it open; stop listening after the recorded response
        if (name === 'd1-malformed-json') setTimeout(() => s.end(), 100);
      });
      const recorded = Buffer.concat(t.events.flatMap((e) => (e.kind === 'data' ? [Buffer.from(e.base64, 'base64')] : [])));
      expect(got.bytes.equals(recorded), name).toBe(true);
      if (name === 'a-chat-stream') expect(got.fin).toBe(true);
    }
  });
});

describe('replayed through streamRequest with the llama.cpp adapter', () => {
  for (const name of ['a-chat-stream', 'c-completions-stream', 'e-chat-stream-1k-prompt']) {
    it(`${name}: done, the usage's tokens, TTFT and per-request tok/s as on the wire`, async () => {
      const t = loadTranscript(name);
      const srv = await replay(t, STREAM_OPTS);
      const tl = await send(t, srv.origin, client(srv.origin));
      checkStream(t, tl, STREAM_OPTS);
      expect(srv.connections).toBe(1);
    });
  }

  it('d2 (prompt over the slot context; its 15 s prefill played as 100 ms): done, with the truncated prompt count', async () => {
    const t = loadTranscript('d2-prompt-over-slot-context');
    const srv = await replay(t, D2_OPTS);
    const tl = await send(t, srv.origin, client(srv.origin));
    const w = checkStream(t, tl, D2_OPTS);
    expect(tl.promptTokens).toBe(w.usage!.prompt_tokens);
    expect(tl.promptTokens!).toBeLessThan(t.server.nCtxPerSlot!);
  });

  it("d1 (malformed JSON): error 'http-status', HTTP 500, with the server's message", async () => {
    const t = loadTranscript('d1-malformed-json');
    const w = wireFacts(t);
    const srv = await replay(t);
    // streamRequest serialises its body, so it cannot send the recorded broken JSON; the replay answers
    // whatever arrives with the recorded bytes
    const tl = await send(t, srv.origin, client(srv.origin), { recorded: 'malformed JSON, see the transcript' });
    expect(tl.end).toMatchObject({ kind: 'error', code: 'http-status', httpStatus: 500, message: `HTTP 500: ${w.errorMessage!}` });
    expect(tl.chunkTokens).toEqual([]);
    report.push(`d1-malformed-json: ${JSON.stringify(tl.end)}`);
  });

  it('b on one undici Client (pipelining 1): the second request fails on the closed connection and is resent once, served from transcript a', async () => {
    const b = loadTranscript('b-chat-stream-twice-one-socket');
    const a = loadTranscript('a-chat-stream');
    const srv = await startReplayServer([b, a], STREAM_OPTS);
    toClose.push(srv.close);
    const c = client(srv.origin);
    const first = await send(b, srv.origin, c);
    checkStream(b, first, STREAM_OPTS);
    expect(first.connectionRetries).toBeUndefined();
    const second = await send(a, srv.origin, c);
    expect(second.end?.kind, JSON.stringify(second)).toBe('done');
    expect(second.connectionRetries).toBe(1);
    expect(second.retriedAfter).toMatch(/closed|socket|reset/i);
    // the resend's clock: its figures are transcript a's
    checkStream(a, second, STREAM_OPTS);
    expect(second.sendMs).toBeGreaterThan(first.end!.atMs);
    // what the replay saw: b's request, the second request on the same connection (no answer, as
    // recorded), then the resend on a fresh connection, answered with a
    expect(srv.log.map((e) => [e.connection, e.transcript, e.absorbed === true])).toEqual([
      [1, b.name, false],
      [1, b.name, true],
      [2, a.name, false],
    ]);
    expect(srv.unexpected).toEqual([]);
    expect(srv.remaining()).toBe(0);
    report.push(`b then resend: connectionRetries ${String(second.connectionRetries)}, retriedAfter ${String(second.retriedAfter)}`);
  });
});
