/**
 * The simulator's HTTP server (node:http): one table of routes per personality (routes.ts: the
 * OpenAI-compatible endpoints, the personality's own, `/_sim/*` ground truth and control). The
 * server owns the lifecycle: it creates the engine and what the handlers share, looks each
 * request up in the table and answers errors, limits connections the way a thread-per-connection
 * server does, listens and closes.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { monoMs } from '../clock.js';
import { SimEngine } from './engine-model.js';
import { SecondsHistogram, ServerTotals } from './metrics.js';
import { servedMaxModelLen, type SimPersonality, type SimProfile } from './profiles.js';
import { readBody, sendError, sendJson } from './reply.js';
import { RequestError } from './request-body.js';
import type { RouteTable, SimContext } from './route-table.js';
import { routeTable } from './routes.js';
import { surfaceFor } from './surface.js';
import { StepLoop } from './step-loop.js';
import { TokenVocab } from './tokenizer.js';
import { TruthStore } from './truth.js';

export interface SimServer {
  /** the HTTP server; for a personality with a connection limit (llama.cpp) a gate in front of it listens (threadGate) */
  server: Server;
  engine: SimEngine;
  loop: StepLoop;
  truth: TruthStore;
  listen(host: string, port: number): Promise<string>;
  close(): Promise<void>;
}

/** What one server's handlers share (route-table.ts SimContext), fresh for the profile. */
function simContext(profile: SimProfile): SimContext {
  const engine = new SimEngine(profile);
  const p = profile.personality;
  return {
    profile,
    surface: surfaceFor(profile),
    engine,
    loop: new StepLoop(engine),
    truth: new TruthStore(profile.maxTruthRecords),
    vocab: new TokenVocab(),
    ttft: new SecondsHistogram(),
    totals: new ServerTotals(),
    maxLen: servedMaxModelLen(profile),
    running: new Map(),
    abortedByRid: [],
    arrivals: 0,
    inFlight: 0,
    loadingUntilMs: monoMs() + (profile.wire.loadingMs ?? 0),
    eluStart: performance.eventLoopUtilization(),
    readBody: (req) => readBody(p, req),
    sendError: (res, status, message, type, param, details) => sendError(p, res, status, message, type, param, details),
  };
}

/** Looks the request up in the table and runs its handler; 404 when none. */
async function dispatch(ctx: SimContext, table: RouteTable, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const receivedMs = monoMs();
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const method = req.method ?? 'GET';
  // a server loading its model: llama.cpp answers every path so (loadingMs knob)
  if (receivedMs < ctx.loadingUntilMs && !path.startsWith('/_sim/')) return ctx.sendError(res, 503, 'Loading model', 'unavailable_error');
  if (ctx.surface.apiKey !== undefined && !keyAccepted(ctx, path, req.headers.authorization)) {
    // vLLM's and SGLang's middleware answer a bare {"error":"Unauthorized"}; llama.cpp its own error shape
    const p = ctx.profile.personality;
    if (p === 'vllm' || p === 'sglang') return sendJson(res, 401, { error: 'Unauthorized' });
    return ctx.sendError(res, 401, 'Invalid API Key', 'authentication_error');
  }
  const handler = table.find(method, path);
  if (!handler) return ctx.sendError(res, 404, `no route ${method} ${path} on the sim (${ctx.profile.personality} personality)`, 'NotFoundError');
  const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  await handler({ req, res, method, path, query, receivedMs });
}

/** llama.cpp's --api-key leaves these open */
const LLAMACPP_OPEN_PATHS = ['/health', '/v1/health', '/models', '/v1/models'];

/** the path needs the key: llama.cpp guards all but health and the models list, SGLang all but /health* and /metrics*, vLLM (and the others here) /v1/* only */
function keyGuarded(personality: SimPersonality, path: string): boolean {
  if (personality === 'llamacpp') return !LLAMACPP_OPEN_PATHS.includes(path);
  if (personality === 'sglang') return !path.startsWith('/health') && !path.startsWith('/metrics');
  return path.startsWith('/v1/');
}

/** the request may pass the server's API key check (knobs.ts SimWireKnobs apiKey); the /_sim/* routes are always open */
function keyAccepted(ctx: SimContext, path: string, authorization: string | undefined): boolean {
  if (path.startsWith('/_sim/') || !keyGuarded(ctx.profile.personality, path)) return true;
  return authorization === `Bearer ${ctx.surface.apiKey}`;
}

/**
 * A thread-per-connection server (llama.cpp's cpp-httplib) serves `threads` connections at once,
 * idle keep-alive ones included; the others wait, accepted but unread, until one closes. The HTTP
 * server only gets a connection when a thread is free: a socket paused after the HTTP server has
 * it is still read (node:http reads it below its stream), which let every connection through.
 * Undefined `threads`: the HTTP server listens itself (returned undefined). Tracks every socket
 * in `sockets` for close(), the waiting ones too.
 */
function threadGate(server: Server, threads: number | undefined, sockets: Set<Socket>): TcpServer | undefined {
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  if (threads === undefined) return undefined;
  let served = 0;
  const waitingConnections: Socket[] = [];
  const serve = (s: Socket): void => {
    served++;
    s.once('close', () => {
      served--;
      serveNext();
    });
    server.emit('connection', s);
    s.resume();
  };
  const serveNext = (): void => {
    while (served < threads && waitingConnections.length > 0) {
      const next = waitingConnections.shift()!;
      if (!next.destroyed) serve(next);
    }
  };
  // no Nagle delay, as node:http's own listener; not half-open (node:http's allowHalfOpen), which
  // made a 0/8 cell here open 58 connections for 45 requests, 4 more than one each and the preconnects
  return createTcpServer({ pauseOnConnect: true, noDelay: true }, (s) => {
    if (served < threads) return serve(s);
    sockets.add(s);
    // node:http handles a served socket's errors; one still waiting must not take the process down
    s.on('error', () => {});
    s.once('close', () => {
      sockets.delete(s);
      const at = waitingConnections.indexOf(s);
      if (at >= 0) waitingConnections.splice(at, 1);
    });
    waitingConnections.push(s);
  });
}

export function createSimServer(profile: SimProfile): SimServer {
  const ctx = simContext(profile);
  const { engine, loop, truth, surface } = ctx;
  const table = routeTable(ctx);
  const sockets = new Set<Socket>();
  const server = createServer({ keepAliveTimeout: surface.keepAliveTimeoutMs, noDelay: true }, (req, res) => {
    for (const [k, v] of Object.entries(surface.responseHeaders)) res.setHeader(k, v);
    dispatch(ctx, table, req, res).catch((e: unknown) => {
      if (e instanceof RequestError) ctx.sendError(res, e.status, e.message, e.type, e.param, e.details);
      else ctx.sendError(res, 500, `sim internal error: ${(e as Error).message}`, 'InternalServerError');
    });
  });
  // what listens: the HTTP server, or the gate in front of it that serves `threads` connections at once
  const listener: Server | TcpServer = threadGate(server, surface.httpThreads?.(profile.maxRunningRequests), sockets) ?? server;

  return {
    server,
    engine,
    loop,
    truth,
    listen(host, port) {
      return new Promise((resolve, reject) => {
        const onError = (e: NodeJS.ErrnoException): void => {
          listener.off('listening', onListening);
          if (e.code === 'EADDRINUSE') reject(new Error(`port ${port} is in use; pick another with --port or use --port 0`));
          else reject(e);
        };
        const onListening = (): void => {
          listener.off('error', onError);
          const a = listener.address() as AddressInfo;
          const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
          resolve(`http://${h}:${a.port}`);
        };
        listener.once('error', onError);
        listener.once('listening', onListening);
        listener.listen(port, host);
      });
    },
    close() {
      loop.close();
      return new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        listener.close(() => resolve());
      });
    },
  };
}
