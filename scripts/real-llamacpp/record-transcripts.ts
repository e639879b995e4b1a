/**
 * Record short wire transcripts of a real llama.cpp `llama-server` as test fixtures.
 *
 *   npx tsx scripts/real-llamacpp/record-transcripts.ts --url http://127.0.0.1:18080 --out test/fixtures/llamacpp-b4748/
 *   (options: --only NAME[,NAME…]  --build b4748  --flags "…")
 *
 * Each transcript is one raw TCP connection (node:net, not undici): the exact HTTP/1.1 request bytes
 * our llama.cpp adapter sends (the body from LlamacppAdapter.buildStreamRequest, the headers of
 * streamRequest in undici's order), and every socket event that came back: each 'data' read as
 * base64 with its offset in ms from the moment the first request was written, then the server's FIN
 * ('end'), errors (a reset) and 'close'. When the server keeps the connection open after the last
 * expected response, the recorder waits WAIT_FOR_CLOSE_MS, then closes its side and says so.
 * The format and its reading are in test/helpers/transcript.ts; the replay in test/helpers/replay-server.ts.
 *
 * Load on the server: one connection at a time, one request at a time (transcript b sends its second
 * request on the same connection after the first response), short outputs (max_tokens 8–32).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LlamacppAdapter } from '../../src/engines/llamacpp.js';
import type { EndpointKind } from '../../src/shapes/engine.js';
import {
  dataEvents,
  parseHttpResponse,
  sseEvents,
  TRANSCRIPT_FORMAT,
  type Transcript,
  type TranscriptRequest,
  type WireEvent,
} from '../../test/helpers/transcript.js';

/** after the last expected response: how long to wait for the server to close before closing ourselves */
const WAIT_FOR_CLOSE_MS = 1_500;
/** after a request written on the same connection: how long to wait for an answer or a close */
const NO_ANSWER_WAIT_MS = 10_000;
/** a whole transcript may take no longer (the over-context prompt's prefill included) */
const MAX_TRANSCRIPT_MS = 120_000;
/** prompts longer than this are stored as a recipe, not as text */
const MAX_STORED_PROMPT_CHARS = 600;
/** 12 tokens with the llama SPM vocabulary (POST /tokenize), so N repeats ≈ 12·N prompt tokens */
const UNIT = 'The quick brown fox jumps over the lazy dog. ';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:18080' },
    out: { type: 'string', default: 'test/fixtures/llamacpp-b4748/' },
    only: { type: 'string' },
    build: { type: 'string', default: 'b4748' },
    flags: { type: 'string', default: '-c 65536 -np 4 -t 2 --metrics --slots -fa' },
  },
});
const base = new URL(args.url!);
const host = base.host;
const port = Number(base.port || 80);
const hostname = base.hostname;

const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;
const round3 = (x: number): number => Math.round(x * 1000) / 1000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A control GET on its own connection, closed after (llama.cpp holds a thread per open connection). */
function getJson(path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path, method: 'GET', agent: false, headers: { connection: 'close' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(parts).toString('utf8')));
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.end();
  });
}

interface PlannedRequest {
  id: string;
  path: string;
  /** the body bytes exactly as sent */
  body: string;
  /** set when the prompt is long: how to rebuild it */
  prompt?: { text: string; unit: string; repeat: number };
  /** write it as soon as the previous request's response is complete (same connection) */
  afterPreviousResponse?: boolean;
}

/** The request our adapter sends: body from buildStreamRequest, exactly as streamRequest serialises it. */
function adapterRequest(id: string, model: string, endpoint: EndpointKind, prompt: string, maxTokens: number): PlannedRequest {
  const { path, body } = new LlamacppAdapter().buildStreamRequest({ model, endpoint, prompt, maxTokens, forceLength: true });
  return { id, path, body: JSON.stringify(body) };
}

function repeated(repeat: number): { text: string; unit: string; repeat: number } {
  return { text: UNIT.repeat(repeat), unit: UNIT, repeat };
}

/** the head undici writes for streamRequest: request line, host, connection, then its headers, then content-length */
function headOf(r: PlannedRequest): { head: string; headers: Array<[string, string]> } {
  const headers: Array<[string, string]> = [
    ['host', host],
    ['connection', 'keep-alive'],
    ['content-type', 'application/json'],
    ['accept', 'text/event-stream'],
    ['x-request-id', r.id],
    ['content-length', String(Buffer.byteLength(r.body))],
  ];
  const head = `POST ${r.path} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return { head, headers };
}

function describeRequest(r: PlannedRequest, writtenAtMs: number): TranscriptRequest {
  const { head, headers } = headOf(r);
  const out: TranscriptRequest = {
    writtenAtMs: round3(writtenAtMs),
    method: 'POST',
    path: r.path,
    head,
    headers,
    bodyBytes: Buffer.byteLength(r.body),
    bodySha256: createHash('sha256').update(r.body).digest('hex'),
  };
  if (r.prompt && r.prompt.text.length > MAX_STORED_PROMPT_CHARS) {
    const encoded = JSON.stringify(r.prompt.text);
    if (!r.body.includes(encoded)) throw new Error(`${r.id}: prompt not found in the body`);
    out.bodyElided = {
      template: r.body.replace(encoded, '"<prompt>"'),
      prompt: { unit: r.prompt.unit, repeat: r.prompt.repeat, chars: r.prompt.text.length },
    };
  } else {
    out.body = r.body;
  }
  return out;
}

interface Recording {
  requests: TranscriptRequest[];
  events: WireEvent[];
}

/** One connection: write the requests, record every socket event until it closes. */
function record(requests: PlannedRequest[]): Promise<Recording> {
  return new Promise((resolve, reject) => {
    const events: WireEvent[] = [];
    const written: TranscriptRequest[] = [];
    const reads: Array<{ atMs: number; bytes: Buffer }> = [];
    let t0 = 0;
    let next = 0;
    /** responses completed so far (each parsed off the bytes after the previous one) */
    let responsesDone = 0;
    let consumedReads: Array<{ atMs: number; bytes: Buffer }> = [];
    let waitTimer: NodeJS.Timeout | undefined;
    const socket = net.connect({ host: hostname, port, noDelay: true });
    const hardStop = setTimeout(() => {
      events.push({ atMs: round3(nowMs() - t0), kind: 'client-close', reason: `transcript exceeded ${MAX_TRANSCRIPT_MS} ms` });
      socket.destroy();
    }, MAX_TRANSCRIPT_MS);

    const write = (r: PlannedRequest): void => {
      const { head } = headOf(r);
      const bytes = Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(r.body, 'utf8')]);
      const at = nowMs();
      if (next === 0) t0 = at;
      socket.write(bytes);
      written.push(describeRequest(r, at - t0));
      next++;
    };
    /** close our side unless the server has closed within `ms` (a later call replaces the wait) */
    const waitForClose = (ms: number, why: string): void => {
      if (waitTimer) clearTimeout(waitTimer);
      waitTimer = setTimeout(() => {
        events.push({ atMs: round3(nowMs() - t0), kind: 'client-close', reason: `the server kept the connection open ${ms} ms ${why}` });
        socket.end();
      }, ms);
    };

    socket.on('connect', () => write(requests[0]!));
    socket.on('data', (bytes: Buffer) => {
      const atMs = round3(nowMs() - t0);
      events.push({ atMs, kind: 'data', base64: bytes.toString('base64') });
      reads.push({ atMs, bytes });
      consumedReads.push({ atMs, bytes });
      // one response after another on this connection
      for (;;) {
        const res = parseHttpResponse(consumedReads);
        if (!res?.complete) break;
        responsesDone++;
        consumedReads = res.rest.length > 0 ? [{ atMs, bytes: res.rest }] : [];
        const following = requests[next];
        // like undici: the next request goes out as soon as the previous response is complete
        if (following?.afterPreviousResponse && next === responsesDone) {
          write(following);
          // a fallback: the server may neither answer nor close
          waitForClose(NO_ANSWER_WAIT_MS, 'after the next request was written, without answering it');
        }
      }
      if (responsesDone >= requests.length) waitForClose(WAIT_FOR_CLOSE_MS, 'after the last expected response');
    });
    socket.on('end', () => events.push({ atMs: round3(nowMs() - t0), kind: 'end' }));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (next === 0) {
        clearTimeout(hardStop);
        reject(err);
        return;
      }
      events.push({ atMs: round3(nowMs() - t0), kind: 'error', code: err.code ?? 'ERR', message: err.message });
    });
    socket.on('close', (hadError) => {
      events.push({ atMs: round3(nowMs() - t0), kind: 'close', hadError });
      clearTimeout(hardStop);
      if (waitTimer) clearTimeout(waitTimer);
      resolve({ requests: written, events });
    });
  });
}

/** What a person wants to know about a transcript at a glance (the tests derive their own). */
function summarize(rec: Recording): Record<string, unknown> {
  const reads = dataEvents(rec.events);
  const res = parseHttpResponse(reads);
  const out: Record<string, unknown> = {
    dataEvents: reads.length,
    responseBytes: reads.reduce((s, r) => s + r.bytes.length, 0),
  };
  if (!res) return { ...out, response: 'no complete response head' };
  out.statusLine = res.statusLine;
  out.headers = Object.fromEntries(res.headers);
  out.headAtMs = res.headAtMs;
  out.responseCompleteAtMs = res.completeAtMs;
  out.bytesAfterFirstResponse = res.rest.length;
  const clientClose = rec.events.find((e) => e.kind === 'client-close');
  // a FIN after we closed our side is the server answering our close, not the server closing
  const end = rec.events.find((e) => e.kind === 'end' && (clientClose === undefined || e.atMs < clientClose.atMs));
  const err = rec.events.find((e) => e.kind === 'error');
  out.serverClosedFirst = end !== undefined ? { finAtMs: end.atMs, afterResponseCompleteMs: res.completeAtMs !== undefined ? round3(end.atMs - res.completeAtMs) : undefined } : false;
  if (clientClose?.kind === 'client-close') out.recorderClosed = { atMs: clientClose.atMs, reason: clientClose.reason };
  if (err?.kind === 'error') out.socketError = { atMs: err.atMs, code: err.code };
  if (res.status === 200 && res.chunked) {
    const sse = sseEvents(res.body);
    out.sseEvents = sse.length;
    let firstContentAtMs: number | undefined;
    let lastContentAtMs: number | undefined;
    let last: Record<string, unknown> | undefined;
    for (const e of sse) {
      if (e.data === '[DONE]') continue;
      const j = JSON.parse(e.data) as Record<string, unknown>;
      last = j;
      const choice = (j.choices as Array<Record<string, unknown>> | undefined)?.[0];
      const delta = choice?.delta as Record<string, unknown> | undefined;
      if (typeof delta?.content === 'string' || typeof choice?.text === 'string') {
        firstContentAtMs ??= e.atMs;
        lastContentAtMs = e.atMs;
      }
    }
    out.firstContentAtMs = firstContentAtMs;
    out.lastContentAtMs = lastContentAtMs;
    out.endsWithDone = sse[sse.length - 1]?.data === '[DONE]';
    if (last) {
      out.finalUsage = last.usage;
      out.finalTimings = last.timings;
    }
  } else {
    out.body = Buffer.concat(res.body.map((p) => p.bytes)).toString('utf8').slice(0, 500);
  }
  if (rec.requests.length > 1) out.laterRequestsWrittenAtMs = rec.requests.slice(1).map((r) => r.writtenAtMs);
  return out;
}

interface Plan {
  name: string;
  description: string;
  requests: PlannedRequest[];
}

async function main(): Promise<void> {
  const outDir = args.out!;
  mkdirSync(outDir, { recursive: true });
  const props = (await getJson('/props')) as Record<string, unknown>;
  const models = (await getJson('/v1/models')) as { data?: Array<{ id?: string }> };
  const model = models.data?.[0]?.id ?? 'model';
  const dgs = props.default_generation_settings as Record<string, unknown> | undefined;
  const server: Transcript['server'] = {
    url: base.origin,
    buildInfo: typeof props.build_info === 'string' ? props.build_info : undefined,
    build: args.build!,
    totalSlots: typeof props.total_slots === 'number' ? props.total_slots : undefined,
    nCtxPerSlot: typeof dgs?.n_ctx === 'number' ? dgs.n_ctx : undefined,
    model,
    flags: args.flags!,
  };
  console.log(`server ${base.origin}: build_info ${String(server.buildInfo)}, ${String(server.totalSlots)} slots, n_ctx/slot ${String(server.nCtxPerSlot)}, model ${model}`);

  const shortPrompt = 'Hi';
  const chat24 = (id: string): PlannedRequest => adapterRequest(id, model, 'chat', shortPrompt, 24);
  const malformed = chat24('rec-d1-malformed');
  malformed.body = malformed.body.slice(0, -12); // cut inside the JSON: not parseable
  const over = repeated(1667); // ≈ 20 000 tokens > 16 384 per slot
  const overReq: PlannedRequest = { ...adapterRequest('rec-d2-over-context', model, 'chat', over.text, 8), prompt: over };
  const k1 = repeated(84); // ≈ 1 000 tokens
  const k1Req: PlannedRequest = { ...adapterRequest('rec-e-chat-1k', model, 'chat', k1.text, 32), prompt: k1 };

  const plans: Plan[] = [
    {
      name: 'a-chat-stream',
      description: 'chat stream, short prompt ("Hi", 0 context), max_tokens 24, include_usage, timings_per_token, ignore_eos',
      requests: [chat24('rec-a-chat')],
    },
    {
      name: 'b-chat-stream-twice-one-socket',
      description:
        'the request of transcript a sent twice on one connection: the second written as soon as the first response is complete (its terminating chunk has arrived), as undici does on a kept-alive connection',
      requests: [chat24('rec-b-first'), { ...chat24('rec-b-second'), afterPreviousResponse: true }],
    },
    {
      name: 'c-completions-stream',
      description: '/v1/completions stream, short prompt ("Hi"), max_tokens 24, include_usage, timings_per_token, ignore_eos',
      requests: [adapterRequest('rec-c-completions', model, 'completions', shortPrompt, 24)],
    },
    {
      name: 'd1-malformed-json',
      description: 'the chat request of transcript a with its JSON body cut short (12 bytes removed): not parseable',
      requests: [malformed],
    },
    {
      name: 'd2-prompt-over-slot-context',
      description: `chat stream with a prompt of ${over.repeat} × "${UNIT.trim()}" (≈ ${over.repeat * 12} tokens) over the per-slot context (n_ctx ${String(server.nCtxPerSlot)}), max_tokens 8`,
      requests: [overReq],
    },
    {
      name: 'e-chat-stream-1k-prompt',
      description: `chat stream with a prompt of ${k1.repeat} × "${UNIT.trim()}" (≈ ${k1.repeat * 12} tokens), max_tokens 32`,
      requests: [k1Req],
    },
  ];
  const only = args.only?.split(',').map((s) => s.trim());
  for (const plan of plans) {
    if (only && !only.includes(plan.name)) continue;
    const rec = await record(plan.requests);
    const transcript: Transcript = {
      format: TRANSCRIPT_FORMAT,
      name: plan.name,
      description: plan.description,
      recordedAt: new Date().toISOString(),
      recordedWith: `npx tsx scripts/real-llamacpp/record-transcripts.ts --url ${base.origin} --out ${outDir}`,
      server,
      requests: rec.requests,
      events: rec.events,
      summary: summarize(rec),
    };
    const file = join(outDir, `${plan.name}.json`);
    writeFileSync(file, `${JSON.stringify(transcript, null, 1)}\n`);
    console.log(`${file}: ${JSON.stringify(transcript.summary)}`);
    await sleep(300);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
