/**
 * The simulator's HTTP server (node:http): OpenAI-compatible endpoints in the vLLM or SGLang
 * personality, plus `/_sim/*` ground-truth and control endpoints.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { monoMs } from '../clock.js';
import { renderChat, type ChatMessage } from './chat-template.js';
import { buildEngineRequest, CompletionSink, parseCompletion, RAW_RESPONSES, RequestError, type EndpointKind } from './completion.js';
import { SimEngine } from './engine.js';
import { drawFaults, parseFaultHeader, requestSeed, type FaultPlan } from './faults.js';
import { mulberry32 } from '../random.js';
import { renderMetrics, SecondsHistogram } from './metrics.js';
import { errorBody, errorStatus } from './personality.js';
import { servedMaxModelLen, TGI_DEFAULT_MAX_CONCURRENT_REQUESTS, type SimProfile } from './profiles.js';
import { createPersonalityRoutes, sendText, ServerTotals, SIM_VOCAB_SIZE } from './routes.js';
import { surfaceFor } from './surface.js';
import { StepLoop } from './step-loop.js';
import { TokenVocab } from './tokenizer.js';
import { TruthRecord, TruthStore } from './truth.js';

const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** every personality's tokenize and detokenize endpoints (the noTokenize knob answers 404 on them) */
const TOKENIZE_PATHS = new Set(['/tokenize', '/detokenize', '/v1/tokenize', '/v1/detokenize', '/chat_tokenize']);

export interface SimServer {
  server: Server;
  engine: SimEngine;
  loop: StepLoop;
  truth: TruthStore;
  listen(host: string, port: number): Promise<string>;
  close(): Promise<void>;
}

function quantile(sorted: number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export function createSimServer(profile: SimProfile): SimServer {
  const engine = new SimEngine(profile);
  const loop = new StepLoop(engine);
  const truth = new TruthStore(profile.maxTruthRecords);
  const vocab = new TokenVocab();
  const ttft = new SecondsHistogram();
  let arrivals = 0;
  let eluStart: EventLoopUtilization = performance.eventLoopUtilization();
  const sockets = new Set<import('node:net').Socket>();

  const sendJson = (res: ServerResponse, status: number, value: unknown): void => {
    const body = JSON.stringify(value);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  };
  const sendError = (
    res: ServerResponse,
    status: number,
    message: string,
    type: string,
    param: string | null = null,
    details: Record<string, unknown> = {},
  ): void => {
    if (RAW_RESPONSES.has(res)) {
      // an HTTP/1.0 stream already began on the socket: all that is left is the close
      res.socket?.destroySoon();
      return;
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    const shown = errorStatus(profile.personality, status);
    res.writeHead(shown, { 'content-type': 'application/json' });
    res.end(errorBody(profile.personality, shown, message, type, param, details));
  };
  const surface = surfaceFor(profile);
  const totals = new ServerTotals();
  let inFlight = 0;

  const readBody = (req: IncomingMessage): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const parts: Buffer[] = [];
      let size = 0;
      req.on('data', (b: Buffer) => {
        size += b.length;
        if (size > MAX_BODY_BYTES) reject(new RequestError(413, `request body over ${MAX_BODY_BYTES} bytes`));
        else parts.push(b);
      });
      req.on('end', () => {
        if (size === 0) return resolve({});
        let v: unknown;
        try {
          v = JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
        } catch (e) {
          // llama.cpp (nlohmann::json) answers 500 server_error with the parser's message
          if (profile.personality === 'llamacpp') return reject(new RequestError(500, `[json.exception.parse_error.101] parse error: ${(e as Error).message}`));
          return reject(new RequestError(400, 'request body must be a JSON object'));
        }
        if (!v || typeof v !== 'object' || Array.isArray(v)) return reject(new RequestError(400, 'request body must be a JSON object'));
        resolve(v as Record<string, unknown>);
      });
      req.on('error', reject);
    });

  async function handleCompletion(kind: EndpointKind, req: IncomingMessage, res: ServerResponse, receivedMs: number): Promise<void> {
    const idHeader = req.headers['x-request-id'];
    const seq = ++arrivals;
    totals.requestsReceived++;
    const limit = profile.admissionLimit ?? (profile.personality === 'tgi' ? TGI_DEFAULT_MAX_CONCURRENT_REQUESTS : undefined);
    if (limit !== undefined) {
      // TGI: 429 beyond --max-concurrent-requests in flight; Ollama / SGLang: 503 when the queue is full
      if (profile.personality === 'tgi' && inFlight >= limit) {
        totals.requestsFailed++;
        return sendError(res, 429, 'Model is overloaded', 'overloaded');
      }
      if ((profile.personality === 'ollama' || profile.personality === 'sglang') && engine.waitingCount >= limit) {
        totals.requestsFailed++;
        const msg = profile.personality === 'ollama' ? 'server busy, please try again.  maximum pending requests exceeded' : 'The request queue is full.';
        return sendError(res, 503, msg, 'ServiceUnavailableError');
      }
    }
    inFlight++;
    res.once('close', () => inFlight--);
    const id = typeof idHeader === 'string' && idHeader.length > 0 ? idHeader : `sim-${seq}`;
    const body = await readBody(req);
    const parsed = parseCompletion(kind, body, profile);
    const rng = mulberry32(requestSeed(profile.seed, typeof idHeader === 'string' ? idHeader : String(seq)));
    const faultHeader = req.headers['x-sim-fault'];
    let faults: FaultPlan;
    try {
      faults =
        typeof faultHeader === 'string'
          ? parseFaultHeader(faultHeader)
          : seq <= profile.faults.faultFreeRequests
            ? {}
            : drawFaults(profile.faults, rng);
    } catch (e) {
      throw new RequestError(400, (e as Error).message, 'X-Sim-Fault');
    }
    if (faults.closeBefore) {
      totals.requestsFailed++;
      req.socket.destroy();
      return;
    }
    if (faults.headersDelayMs) await new Promise((r) => setTimeout(r, faults.headersDelayMs));
    if (res.destroyed || res.writableEnded) return;
    if (faults.status !== undefined) {
      const s = faults.status;
      const [type, msg] =
        s === 429 ? ['RateLimitError', 'Too many requests (simulated)'] : s === 503 ? ['ServiceUnavailableError', 'The request queue is full. (simulated)'] : ['InternalServerError', 'simulated server error'];
      totals.requestsFailed++;
      sendError(res, s, msg, type);
      return;
    }
    const record = new TruthRecord(id, receivedMs);
    const chunkId = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${id}`;
    let engineReqRef: import('./engine.js').EngineRequest | undefined;
    const sink = new CompletionSink({
      profile,
      parsed,
      res,
      truth: record,
      truthStore: truth,
      faults,
      seed: seq % 9973,
      chunkId,
      headersFirst: surface.headersFirst,
      onFirstToken: (ms) => ttft.observe(ms / 1000),
      onEnd: (t) => totals.noteEnd(t),
      abort: () => {
        if (engineReqRef) engine.abort(engineReqRef);
      },
    });
    const { req: engineReq, promptTokens } = buildEngineRequest(profile, parsed, sink, rng, faults);
    engineReqRef = engineReq;
    sink.engineReq = engineReq;
    record.promptTokens = promptTokens;
    truth.add(record);
    if (parsed.stream && surface.headersFirst) sink.writeHead();
    const stop = (): void => {
      if (!sink.isEnded) {
        sink.end('aborted', monoMs());
        engine.abort(engineReq);
      }
    };
    // SGLang's /abort_request names a request by its rid (our X-Request-Id travels as both)
    const rid = typeof body.rid === 'string' ? body.rid : id;
    running.set(rid, { stop, res });
    res.on('close', () => {
      running.delete(rid);
      stop();
    });
    loop.submit(engineReq);
  }

  /** requests in flight by id, for SGLang's /abort_request */
  const running = new Map<string, { stop: () => void; res: ServerResponse }>();
  /** rids /abort_request was asked for, oldest first (the last 1,000), for tests */
  const abortedByRid: string[] = [];

  /** SGLang POST /abort_request {rid}: stop the request now, as the engine does, and end its stream */
  function abortByRid(rids: unknown): void {
    for (const rid of Array.isArray(rids) ? rids : [rids]) {
      if (typeof rid !== 'string') continue;
      abortedByRid.push(rid);
      if (abortedByRid.length > 1000) abortedByRid.shift();
      const r = running.get(rid);
      if (!r) continue;
      r.stop();
      if (!r.res.writableEnded) r.res.end();
    }
  }

  function tokenizeBody(body: Record<string, unknown>): { ids: number[]; pieces: string[] } {
    if (Array.isArray(body.messages)) {
      return vocab.tokenize(renderChat(body.messages as ChatMessage[], body.add_generation_prompt !== false));
    }
    if (typeof body.prompt === 'string') return vocab.tokenize(body.prompt);
    throw new RequestError(400, 'tokenize needs "prompt" (string) or "messages" (array)', 'prompt');
  }

  function state(): Record<string, unknown> {
    const lat = loop.latenessSamples().sort((a, b) => a - b);
    const elu = performance.eventLoopUtilization(eluStart);
    return {
      profile: profile.name,
      personality: profile.personality,
      model: profile.modelId,
      running: engine.running.length,
      waiting: engine.waiting.length,
      arriving: engine.waitingCount - engine.waiting.length,
      kvUsedTokens: engine.kvUsedTokens,
      kvCapacityTokens: engine.kvCapacityTokens,
      kvCachedFreeTokens: engine.kv.cachedFreeBlocks * engine.kv.blockSize,
      stepCount: engine.counters.stepCount,
      lastBatch: engine.lastBatch,
      lastStepMs: engine.lastStepMs,
      counters: engine.counters,
      abortedByRid,
      truthRecords: truth.size,
      stepLatenessMs: { count: lat.length, p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), max: lat[lat.length - 1] },
      eventLoopUtilization: elu.utilization,
    };
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedMs = monoMs();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const method = req.method ?? 'GET';
    const vllm = profile.personality === 'vllm';
    const sglang = profile.personality === 'sglang';

    // wire knobs: endpoints this server does not have, whatever its personality has
    if (surface.noMetrics && (path === '/metrics' || path === '/prometheus/metrics')) return sendError(res, 404, `no route ${method} ${path} (no metrics)`, 'NotFoundError');
    if (surface.noTokenize && TOKENIZE_PATHS.has(path)) return sendError(res, 404, `no route ${method} ${path} (no tokenizer endpoint)`, 'NotFoundError');
    if (surface.ollamaVersion && method === 'GET' && path === '/api/version') return sendJson(res, 200, { version: profile.version });
    if (method === 'POST' && path === '/v1/completions') return handleCompletion('completions', req, res, receivedMs);
    if (method === 'POST' && path === '/v1/chat/completions') return handleCompletion('chat', req, res, receivedMs);
    if (method === 'GET' && path === '/v1/models') {
      const entry: Record<string, unknown> = { id: profile.modelId, object: 'model', created: 0, owned_by: surface.ownedBy(profile.modelId) };
      if (vllm || sglang) Object.assign(entry, { root: profile.modelId, parent: null, max_model_len: profile.maxModelLen });
      if (profile.personality === 'llamacpp') entry.meta = { n_ctx_train: profile.maxModelLen, n_vocab: SIM_VOCAB_SIZE, n_params: 1_000_000 };
      return sendJson(res, 200, { object: 'list', data: [entry] });
    }
    if (method === 'GET' && path === '/health') {
      res.writeHead(200);
      res.end();
      return;
    }
    if (method === 'GET' && path === '/version' && (vllm || sglang || profile.personality === 'trtllm')) {
      return sendJson(res, 200, { version: profile.version });
    }
    if (await personalityRoute(method, path, query, req, res)) return;
    if (method === 'GET' && path === '/metrics' && (vllm || sglang)) {
      sendText(res, renderMetrics(profile, engine, ttft));
      return;
    }
    if (vllm && method === 'POST' && path === '/tokenize') {
      const body = await readBody(req);
      const t = tokenizeBody(body);
      const out: Record<string, unknown> = { count: t.ids.length, max_model_len: profile.maxModelLen, tokens: t.ids };
      if (body.return_token_strs === true) out.token_strs = t.pieces;
      return sendJson(res, 200, out);
    }
    if (vllm && method === 'POST' && path === '/detokenize') {
      const body = await readBody(req);
      if (!Array.isArray(body.tokens)) throw new RequestError(400, 'detokenize needs "tokens" (array of ids)', 'tokens');
      return sendJson(res, 200, { prompt: vocab.detokenize(body.tokens as number[]) });
    }
    if (vllm && method === 'GET' && path === '/server_info' && profile.serverArgs) {
      // only with VLLM_SERVER_DEV_MODE=1 on a real server: the sim serves it when serverArgs are given
      return sendJson(res, 200, {
        vllm_config: { model_config: { model: profile.modelId, max_model_len: profile.maxModelLen }, scheduler_config: { max_num_seqs: profile.maxRunningRequests }, ...profile.serverArgs },
      });
    }
    if (sglang && method === 'POST' && path === '/v1/tokenize') {
      const body = await readBody(req);
      if (Array.isArray(body.prompt)) {
        const all = (body.prompt as unknown[]).map((p) => vocab.tokenize(String(p)).ids);
        return sendJson(res, 200, { tokens: all, count: all.map((a) => a.length), max_model_len: profile.maxModelLen });
      }
      const t = tokenizeBody(body);
      return sendJson(res, 200, { tokens: t.ids, count: t.ids.length, max_model_len: profile.maxModelLen });
    }
    if (sglang && method === 'POST' && path === '/v1/detokenize') {
      const body = await readBody(req);
      if (!Array.isArray(body.tokens)) throw new RequestError(400, 'detokenize needs "tokens" (array of ids)', 'tokens');
      return sendJson(res, 200, { text: vocab.detokenize(body.tokens as number[]) });
    }
    if (sglang && method === 'POST' && path === '/abort_request') {
      const body = await readBody(req);
      abortByRid(body.rid);
      res.writeHead(200);
      res.end();
      return;
    }
    if (sglang && method === 'GET' && (path === '/get_server_info' || path === '/server_info')) {
      return sendJson(res, 200, {
        model_path: `sim/${profile.modelId}`,
        served_model_name: profile.modelId,
        tp_size: 1,
        pp_size: 1,
        dp_size: 1,
        context_length: profile.maxModelLen,
        max_running_requests: profile.maxRunningRequests,
        chunked_prefill_size: profile.maxBatchedTokens,
        page_size: profile.blockSize,
        disable_radix_cache: !profile.prefixCaching,
        stream_interval: profile.tokensPerStep,
        enable_metrics: true,
        api_key: null,
        max_total_num_tokens: engine.kvCapacityTokens,
        max_req_input_len: profile.maxModelLen - 1,
        internal_states: [{ last_gen_throughput: 0 }],
        version: profile.version,
        ...profile.serverArgs,
      });
    }
    if (method === 'GET' && path === '/_sim/state') return sendJson(res, 200, state());
    if (method === 'GET' && path === '/_sim/truth') {
      const since = Number(query.get('since') ?? '-Infinity');
      return sendJson(res, 200, truth.list(Number.isNaN(since) ? -Infinity : since));
    }
    if (method === 'GET' && path.startsWith('/_sim/truth/')) {
      const rec = truth.get(decodeURIComponent(path.slice('/_sim/truth/'.length)));
      if (!rec) return sendError(res, 404, `no truth record for ${path.slice(12)}`, 'NotFoundError');
      return sendJson(res, 200, rec);
    }
    if (method === 'POST' && path === '/_sim/reset') {
      truth.clear();
      engine.kv.clearUnused();
      loop.resetLateness();
      eluStart = performance.eventLoopUtilization();
      return sendJson(res, 200, { ok: true });
    }
    sendError(res, 404, `no route ${method} ${path} on the sim (${profile.personality} personality)`, 'NotFoundError');
  }

  const personalityRoute = createPersonalityRoutes({ profile, engine, vocab, ttft, totals, sendJson, readBody, tokenizeBody, maxLen: servedMaxModelLen(profile) });

  const server = createServer({ keepAliveTimeout: surface.keepAliveTimeoutMs, noDelay: true }, (req, res) => {
    for (const [k, v] of Object.entries(surface.responseHeaders)) res.setHeader(k, v);
    route(req, res).catch((e: unknown) => {
      if (e instanceof RequestError) sendError(res, e.status, e.message, e.type, e.param, e.details);
      else sendError(res, 500, `sim internal error: ${(e as Error).message}`, 'InternalServerError');
    });
  });
  // A thread-per-connection server (llama.cpp's cpp-httplib) serves `threads` connections at once,
  // idle keep-alive ones included; the others wait, accepted but unread, until one closes.
  const threads = surface.httpThreads?.(profile.maxRunningRequests);
  let served = 0;
  const waitingConnections: Socket[] = [];
  const serveNext = (): void => {
    while (threads !== undefined && served < threads && waitingConnections.length > 0) {
      const next = waitingConnections.shift()!;
      if (next.destroyed) continue;
      served++;
      next.resume();
    }
  };
  server.on('connection', (s) => {
    sockets.add(s);
    let holds = false;
    s.on('close', () => {
      sockets.delete(s);
      if (holds) {
        served--;
        serveNext();
      }
    });
    if (threads === undefined) return;
    holds = true;
    if (served < threads) served++;
    else {
      s.pause();
      waitingConnections.push(s);
    }
  });

  return {
    server,
    engine,
    loop,
    truth,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        const onError = (e: NodeJS.ErrnoException): void => {
          server.off('listening', onListening);
          if (e.code === 'EADDRINUSE') reject(new Error(`port ${port} is in use; pick another with --port or use --port 0`));
          else reject(e);
        };
        const onListening = (): void => {
          server.off('error', onError);
          const a = server.address() as AddressInfo;
          const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
          resolve(`http://${h}:${a.port}`);
        };
        server.once('error', onError);
        server.once('listening', onListening);
        server.listen(port, host);
      });
    },
    close() {
      loop.close();
      return new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
    },
  };
}
