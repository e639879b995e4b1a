/**
 * The light truth server of issue 24's harness: "a timer-wheel server that records its write
 * times". perf/accuracy.ts runs it in its own process with `--server tick`, in place of the
 * simulator, whose own JavaScript per token (its engine model, its personalities' chunk writers,
 * its truth store) is about 40 % of its CPU at 51,000 token writes a second, and which fell behind
 * its 20 ms steps by 36–112 ms at p99 at 1,024 streams on the 2-core VM, sharing the cores with
 * the client it measures.
 *
 * What it does, and nothing more:
 * - `POST /v1/chat/completions` and `/v1/completions`, streamed (SSE, chunked): the first token
 *   at the first tick at least `ttftMs` after the request arrived, then one token per tick (every
 *   `stepMs`, all streams of a tick in one burst, as an engine's decode step writes them), up to
 *   the request's `max_tokens`, vLLM-shaped chunks with continuous usage when asked
 *   (`stream_options.continuous_usage_stats`), a usage chunk when only `include_usage` is, then
 *   `data: [DONE]`. Not streamed: one JSON answer at once.
 * - `GET /v1/models`: one model, `tick`.
 * - The simulator's control routes the harness reads (test/accuracy/harness.ts):
 *   `GET /_sim/truth?since=ms` (each request's arrival, and each chunk's write time and tokens,
 *   on the system-wide monotonic clock of src/clock.ts), `GET /_sim/state` (the ticks' lateness)
 *   and `POST /_sim/reset`.
 * Anything else is a 404, as an engine without that route answers.
 *
 * `processes` above 1: that many processes serve one port (node:cluster, connections handed out in
 * turn), for client loads one process cannot write (issue 24's scaling run on 8+ cores). Each
 * keeps the truth of its own requests and answers the control routes at a URL of its own as well;
 * the first line then also lists those (`controlUrls`), and the harness reads them all.
 *
 *   npx tsx perf/tick-server.ts '{"stepMs":20,"ttftMs":100}'    (prints {"url": ...}, serves until stdin closes)
 *   npx tsx perf/tick-server.ts '{"processes":6}'               (prints {"url": ..., "controlUrls": [...]})
 */
import cluster from 'node:cluster';
import http from 'node:http';
import { monoMs } from '../src/clock.js';
import { quantile } from '../src/metrics/stats.js';

interface Params {
  stepMs: number;
  ttftMs: number;
  processes: number;
}

const params: Params = { stepMs: 20, ttftMs: 100, processes: 1, ...(JSON.parse(process.argv[2] ?? '{}') as Partial<Params>) };
if (!Number.isInteger(params.processes) || params.processes < 1 || params.processes > 64) {
  throw new Error(`processes must be a whole number from 1 to 64 (got ${String(params.processes)})`);
}
/** this process forks the servers and serves nothing itself */
const primaryOfMany = params.processes > 1 && cluster.isPrimary;

interface Truth {
  id: string;
  receivedMs: number;
  firstTokenMs?: number;
  endMs?: number;
  /** write time, tokens: two entries per chunk */
  writes: number[];
  promptTokens: number;
  completionTokens: number;
  end: 'done' | 'aborted' | 'running';
}

interface Stream {
  res: http.ServerResponse;
  truth: Truth;
  maxTokens: number;
  /** the first tick at or after this time writes the first token */
  firstDueMs: number;
  continuousUsage: boolean;
  includeUsage: boolean;
  chat: boolean;
  /** the chunk's JSON up to its content, built once per request */
  head: string;
}

const truths = new Map<string, Truth>();
const open = new Set<Stream>();
let lateness: number[] = [];
let unnamed = 0;

function json(res: http.ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function truthJson(t: Truth): unknown {
  const tokens: [number, number][] = [];
  for (let i = 0; i < t.writes.length; i += 2) tokens.push([t.writes[i]!, t.writes[i + 1]!]);
  return {
    id: t.id,
    receivedMs: t.receivedMs,
    firstTokenMs: t.firstTokenMs,
    endMs: t.endMs,
    tokens,
    promptTokens: t.promptTokens,
    cachedTokens: 0,
    completionTokens: t.completionTokens,
    end: t.end,
  };
}

/** about one token per four characters of the prompt: what the client reads back as prompt_tokens */
function promptTokensOf(body: Record<string, unknown>): number {
  const messages = Array.isArray(body.messages) ? (body.messages as { content?: unknown }[]) : [];
  const text = messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join(' ') + (typeof body.prompt === 'string' ? body.prompt : '');
  return Math.max(1, Math.ceil(text.length / 4));
}

function usage(s: Stream): string {
  const n = s.truth.completionTokens;
  const p = s.truth.promptTokens;
  return `{"prompt_tokens":${p},"total_tokens":${p + n},"completion_tokens":${n}}`;
}

/** `receivedMs`: when the request reached the handler (its headers), as the simulator stamps it */
function complete(req: http.IncomingMessage, res: http.ServerResponse, raw: string, chat: boolean, receivedMs: number): void {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    json(res, 400, { error: { message: 'the body is not JSON', type: 'BadRequestError' } });
    return;
  }
  const header = req.headers['x-request-id'];
  const id = typeof header === 'string' && header !== '' ? header : `tick-${cluster.worker?.id ?? 0}-${++unnamed}`;
  const max = Number(body.max_completion_tokens ?? body.max_tokens ?? 16);
  const truth: Truth = { id, receivedMs, writes: [], promptTokens: promptTokensOf(body), completionTokens: 0, end: 'running' };
  truths.set(id, truth);
  const maxTokens = Number.isInteger(max) && max > 0 ? max : 16;
  if (body.stream !== true) {
    truth.completionTokens = maxTokens;
    truth.firstTokenMs = truth.endMs = monoMs();
    truth.writes.push(truth.firstTokenMs, maxTokens);
    truth.end = 'done';
    const text = 'tok '.repeat(maxTokens);
    const choice = chat ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'length' } : { index: 0, text, finish_reason: 'length' };
    json(res, 200, { id: `cmpl-${id}`, object: chat ? 'chat.completion' : 'text_completion', model: 'tick', choices: [choice], usage: { prompt_tokens: truth.promptTokens, completion_tokens: maxTokens, total_tokens: truth.promptTokens + maxTokens } });
    return;
  }
  const so = (body.stream_options ?? {}) as { include_usage?: unknown; continuous_usage_stats?: unknown };
  const object = chat ? 'chat.completion.chunk' : 'text_completion';
  const s: Stream = {
    res,
    truth,
    maxTokens,
    firstDueMs: receivedMs + params.ttftMs,
    continuousUsage: so.continuous_usage_stats === true,
    includeUsage: so.include_usage === true,
    chat,
    head: `{"id":${JSON.stringify(`cmpl-${id}`)},"object":"${object}","created":${Math.floor(Date.now() / 1000)},"model":"tick","choices":[{"index":0,`,
  };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked', 'x-request-id': id });
  res.flushHeaders();
  // The chunks go straight to the socket, framed here (writeToken): node:http's own write path
  // costs more JavaScript per token than the write itself. Setting chunkedEncoding (a field of
  // node:http's OutgoingMessage, not documented) to false makes its end() add nothing. This holds
  // only while the response owns its socket, as it does for one request at a time on a connection
  // (undici here sends no pipelined requests).
  res.chunkedEncoding = false;
  res.on('close', () => {
    if (truth.end === 'running') {
      truth.end = 'aborted';
      truth.endMs = monoMs();
    }
    open.delete(s);
  });
  open.add(s);
}

/** one token to a stream: its chunk, and the end after the last */
function writeToken(s: Stream): void {
  const t = s.truth;
  t.completionTokens++;
  const last = t.completionTokens >= s.maxTokens;
  const finish = last ? '"length"' : 'null';
  const piece = s.chat ? `"delta":{"content":"tok "},"logprobs":null,"finish_reason":${finish}}]` : `"text":"tok ","logprobs":null,"finish_reason":${finish}}]`;
  let out = `data: ${s.head}${piece}${s.continuousUsage ? `,"usage":${usage(s)}` : ''}}\n\n`;
  if (last) {
    if (s.includeUsage && !s.continuousUsage) out += `data: {"id":${JSON.stringify(`cmpl-${t.id}`)},"object":"${s.chat ? 'chat.completion.chunk' : 'text_completion'}","model":"tick","choices":[],"usage":${usage(s)}}\n\n`;
    out += 'data: [DONE]\n\n';
  }
  const at = monoMs();
  s.res.socket?.write(`${Buffer.byteLength(out).toString(16)}\r\n${out}\r\n${last ? '0\r\n\r\n' : ''}`);
  t.writes.push(at, 1);
  if (t.firstTokenMs === undefined) t.firstTokenMs = at;
  if (last) {
    t.end = 'done';
    t.endMs = at;
    open.delete(s);
    s.res.end();
  }
}

/**
 * Every stepMs, on a fixed grid: every due stream gets a token. A late tick does not move the next,
 * and a tick missed altogether still comes, right after (as an engine's API server that fell
 * behind its GPU writes the steps it owes): the tokens per second stay the schedule's, so a client
 * that takes the server's CPU shows as lateness here and as arrival error there, not as fewer
 * events delivered.
 */
let due = monoMs() + params.stepMs;
function tick(): void {
  const now = monoMs();
  lateness.push(now - due);
  for (const s of open) if (s.firstDueMs <= now) writeToken(s);
  due += params.stepMs;
  setTimeout(tick, Math.max(0, due - monoMs()));
}

function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
  const receivedMs = monoMs();
  const url = new URL(req.url ?? '/', 'http://x');
  const route = `${req.method} ${url.pathname}`;
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    if (route === 'POST /v1/chat/completions' || route === 'POST /v1/completions') return complete(req, res, raw, route.endsWith('chat/completions'), receivedMs);
    if (route === 'GET /v1/models') return json(res, 200, { object: 'list', data: [{ id: 'tick', object: 'model', owned_by: 'perf', max_model_len: 131_072 }] });
    if (route === 'GET /_sim/truth') {
      const since = Number(url.searchParams.get('since') ?? '-Infinity');
      return json(res, 200, [...truths.values()].filter((t) => t.receivedMs >= (Number.isNaN(since) ? -Infinity : since)).map(truthJson));
    }
    if (route === 'GET /_sim/state') {
      const sorted = [...lateness].sort((a, b) => a - b);
      return json(res, 200, {
        running: open.size,
        waiting: 0,
        arriving: 0,
        stepLatenessMs: { count: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) },
      });
    }
    if (route === 'POST /_sim/reset') {
      truths.clear();
      lateness = [];
      return json(res, 200, { ok: true });
    }
    json(res, 404, { error: { message: `no route ${route}`, type: 'NotFoundError' } });
  });
}

function listen(server: http.Server, exclusive: boolean): Promise<number> {
  server.keepAliveTimeout = 600_000;
  server.headersTimeout = 0;
  server.requestTimeout = 0;
  return new Promise((resolve) => server.listen({ port: 0, host: '127.0.0.1', exclusive }, () => resolve((server.address() as { port: number }).port)));
}

/** one serving process: alone, it says its URL; one of many, it tells the primary its port and its control URL */
async function serve(): Promise<void> {
  setTimeout(tick, params.stepMs);
  const port = await listen(http.createServer(handle), false);
  if (!cluster.isWorker) {
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
    return;
  }
  const control = await listen(http.createServer(handle), true);
  process.send!({ port, control: `http://127.0.0.1:${control}` });
  // the primary gone (killed, or its stdin closed): nothing is left to serve
  process.on('disconnect', () => process.exit(0));
}

/** the primary of `processes` servers: forks them, prints the shared URL and theirs once all listen */
function forkServers(): void {
  cluster.setupPrimary({ silent: false });
  const heard: Array<{ port: number; control: string }> = [];
  for (let i = 0; i < params.processes; i++) {
    const worker = cluster.fork();
    worker.on('message', (m: { port: number; control: string }) => {
      heard.push(m);
      if (heard.length === params.processes) process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${heard[0]!.port}`, controlUrls: heard.map((h) => h.control) })}\n`);
    });
  }
  cluster.on('exit', (_w, code, signal) => {
    process.stderr.write(`tick-server: a serving process exited (${signal ? `signal ${signal}` : `code ${code}`})\n`);
    process.exit(1);
  });
}

if (primaryOfMany) forkServers();
else void serve();

if (!cluster.isWorker) {
  const stop = (): void => {
    if (primaryOfMany) for (const w of Object.values(cluster.workers ?? {})) w?.process.kill();
    process.exit(0);
  };
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
