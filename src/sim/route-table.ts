/**
 * The sim's routes as a table: `"METHOD /path"` → handler. A personality's table (routes.ts) is
 * joined from small tables (the OpenAI routes every personality serves, its own routes, the
 * `/_sim/*` control routes); the server (server.ts) only looks a request up here and calls the
 * handler. Keys:
 * - `"GET /metrics"`: that method and path;
 * - `"* /metrics"`: that path, any method (the wire knobs that take an endpoint away);
 * - `"GET /_sim/truth/*"`: every path under the prefix, after the exact keys.
 * A request matches its exact key first, then `*` for its path, then a prefix key.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventLoopUtilization } from 'node:perf_hooks';
import type { SimEngine } from './engine-model.js';
import type { SecondsHistogram, ServerTotals } from './metrics.js';
import type { SimProfile } from './profiles.js';
import type { StepLoop } from './step-loop.js';
import type { Surface } from './surface.js';
import type { TokenVocab } from './tokenizer.js';
import type { TruthStore } from './truth.js';

/** One request as a handler sees it. */
export interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  method: string;
  /** the path without the query */
  path: string;
  query: URLSearchParams;
  /** when the request reached the server (monoMs) */
  receivedMs: number;
}

/** Answers one request; a throw (RequestError or any other) is answered by the server as an error. */
export type Handler = (call: Call) => void | Promise<void>;

/** `"METHOD /path"` → handler (see the keys above). */
export type Routes = Record<string, Handler>;

/** A request in flight, as SGLang's /abort_request finds it by its rid. */
export interface RunningRequest {
  stop(): void;
  res: ServerResponse;
}

/** What the handlers of one server share: the engine and its records, and the server's own counts. */
export interface SimContext {
  readonly profile: SimProfile;
  /** the personality's surface with the profile's wire knobs applied */
  readonly surface: Surface;
  readonly engine: SimEngine;
  readonly loop: StepLoop;
  readonly truth: TruthStore;
  readonly vocab: TokenVocab;
  readonly ttft: SecondsHistogram;
  readonly totals: ServerTotals;
  /** the longest request the server takes (llama.cpp: per slot) */
  readonly maxLen: number;
  /** requests in flight by id, for SGLang's /abort_request */
  readonly running: Map<string, RunningRequest>;
  /** rids /abort_request was asked for, oldest first (the last 1,000), for tests */
  readonly abortedByRid: string[];
  /** completion requests that arrived, the count that names them (`sim-N`) and seeds their draws */
  arrivals: number;
  /** completion requests admitted and not yet closed (TGI's admission limit) */
  inFlight: number;
  /** until this time (monoMs) every path but /_sim/* answers 503 "Loading model" (the loadingMs wire knob) */
  readonly loadingUntilMs: number;
  /** event-loop utilization since the start or the last /_sim/reset */
  eluStart: EventLoopUtilization;
  /** reads the body the personality's way (reply.ts readBody) */
  readBody(req: IncomingMessage): Promise<Record<string, unknown>>;
  /** answers an error in the personality's shape (reply.ts sendError) */
  sendError(res: ServerResponse, status: number, message: string, type: string, param?: string | null, details?: Record<string, unknown>): void;
}

/**
 * Joins small tables into one; a key in two of them is a mistake in the tables (each route has one
 * home), so it throws when the server is created.
 */
export function joinRoutes(...tables: Routes[]): Routes {
  const out: Routes = {};
  for (const t of tables) {
    for (const [key, handler] of Object.entries(t)) {
      if (key in out) throw new Error(`sim route ${key} is defined twice`);
      out[key] = handler;
    }
  }
  return out;
}

/** The lookup over one joined table. */
export class RouteTable {
  private readonly exact = new Map<string, Handler>();
  private readonly prefixes: Array<{ method: string; prefix: string; handler: Handler }> = [];

  constructor(routes: Routes) {
    for (const [key, handler] of Object.entries(routes)) {
      const space = key.indexOf(' ');
      const method = key.slice(0, space);
      const path = key.slice(space + 1);
      if (path.endsWith('/*')) this.prefixes.push({ method, prefix: path.slice(0, -1), handler });
      else this.exact.set(key, handler);
    }
  }

  /** The handler for a request, or undefined (the server answers 404). */
  find(method: string, path: string): Handler | undefined {
    const h = this.exact.get(`${method} ${path}`) ?? this.exact.get(`* ${path}`);
    if (h) return h;
    for (const p of this.prefixes) if (p.method === method && path.startsWith(p.prefix)) return p.handler;
    return undefined;
  }
}
