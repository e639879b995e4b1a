/**
 * One undici Client (one keep-alive connection, pipelining 1) per load worker. A shared Pool's
 * queue and opening many connections at the moment of sending delay requests (CLIENT-PERF.md), so
 * each worker owns its connection and `preconnect()` opens them all before the window.
 *
 * undici 7 has no call that only opens a connection (`Client.connect` is the HTTP CONNECT method),
 * so `preconnect` sends one cheap GET (default `/v1/models`) on every client and reads its body;
 * the socket then stays open (keep-alive). Servers close idle connections after their keep-alive
 * timeout (uvicorn: 5 s), so preconnect right before the workers start; a closed connection is
 * reopened by undici on the next request.
 *
 * A server that closes the connection after every streamed response (llama.cpp) costs a new
 * connection per request. `prepareNext(worker)` opens that worker's next connection as soon as its
 * stream ends, before the worker sends again; undici's connect call then takes the open socket (see
 * NextConnection). It is never opened earlier: a thread-per-connection server (llama.cpp's HTTP
 * server has n_parallel + 2 threads) would spend a thread on every idle spare.
 */
import { splitBaseUrl } from './base-url.js';
import type { Socket } from 'node:net';
import { buildConnector, Client } from 'undici';
import { ClientError } from './errors.js';

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 60_000;
export const DEFAULT_PRECONNECT_PATH = '/v1/models';
export const DEFAULT_PRECONNECT_CONCURRENCY = 64;
export const DEFAULT_PRECONNECT_TIMEOUT_MS = 10_000;

export interface WorkerDispatchersOptions {
  /** TCP (+TLS) connect timeout; default 10 s */
  connectTimeoutMs?: number;
  /** idle keep-alive time the client allows itself (the server's hint wins when shorter); default 60 s */
  keepAliveTimeoutMs?: number;
}

/** what a pool's connections came to (WorkerDispatchers.connectionCounts) */
export interface ConnectionCounts {
  opened: number;
  preparedUnused: number;
}

/** the counts of several pools (a cell's own and its client threads'); an absent one adds nothing */
export function sumConnectionCounts(counts: ReadonlyArray<ConnectionCounts | undefined>): ConnectionCounts {
  return {
    opened: counts.reduce((n, c) => n + (c?.opened ?? 0), 0),
    preparedUnused: counts.reduce((n, c) => n + (c?.preparedUnused ?? 0), 0),
  };
}

export interface PreconnectOptions {
  /** GET path answered cheaply by the server; default /v1/models */
  path?: string;
  /** headers for that GET (e.g. Authorization); never logged */
  headers?: Record<string, string>;
  /** connections opened at once (a server's listen backlog is finite; Node's is 511); default 64 */
  concurrency?: number;
  /** per-request headers and body timeout; default 10 s */
  timeoutMs?: number;
}

export interface PreconnectReport {
  opened: number;
  failed: number;
  /** message of the first failure, if any */
  firstError?: string;
  /** status of the first non-2xx answer, if any (the connection is still open) */
  firstNon2xxStatus?: number;
}

export interface WorkerDispatchers {
  /** one Client per worker, index = worker number */
  readonly clients: readonly Client[];
  /**
   * open worker `index`'s next connection now (its current one is closing), so its next request
   * does not wait for a TCP (+TLS) connect; no-op when one is already open or opening
   */
  prepareNext(index: number): void;
  /**
   * Connections each worker's Client opened (preconnect and prepared ones included), once every
   * prepared connect still in flight has settled, and of them how many were prepared (prepareNext)
   * and never taken by a request: the worker stopped first (a window's end).
   */
  connectionCounts(): Promise<ConnectionCounts>;
  /**
   * The cell's window is over: no connection is opened from now on. undici opens a connection for a
   * request that was still queued when its socket closed, even one aborted meanwhile, so each
   * request aborted at the window's end would otherwise open one more (a thread-per-connection
   * server gives each a thread); those requests are aborted, so a refused connect changes no result.
   */
  stopConnecting(): void;
  /** close worker `index`'s Client now (it has no more requests to send) */
  retire(index: number): Promise<void>;
  /** open every client's connection with one cheap GET each */
  preconnect(options?: PreconnectOptions): Promise<PreconnectReport>;
  /** close every client gracefully (waits for running requests) */
  closeAll(): Promise<void>;
  /** destroy every client now (aborts running requests) */
  destroyAll(): Promise<void>;
}

function positiveInt(field: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isInteger(v) || v <= 0) {
    throw new ClientError('invalid-option', `${field} must be a positive integer (got ${String(v)}); omit it for the default ${fallback}`);
  }
  return v;
}

/**
 * One undici Client per worker for `origin`, the run's base URL (e.g. http://127.0.0.1:8000, or a
 * gateway's https://gw.example/api: the Clients connect to its origin, and preconnect goes under its path).
 */
export function createWorkerDispatchers(
  origin: string,
  count: number,
  options: WorkerDispatchersOptions = {},
): WorkerDispatchers {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new ClientError('invalid-option', `origin must be an absolute URL such as http://127.0.0.1:8000 (got ${JSON.stringify(origin)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ClientError('invalid-option', `origin must use http: or https: (got ${url.protocol})`);
  }
  if (!Number.isInteger(count) || count < 1) {
    throw new ClientError('invalid-option', `count (workers) must be an integer ≥ 1 (got ${String(count)})`);
  }
  const connectTimeout = positiveInt('connectTimeoutMs', options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS);
  const keepAliveTimeout = positiveInt('keepAliveTimeoutMs', options.keepAliveTimeoutMs, DEFAULT_KEEP_ALIVE_TIMEOUT_MS);

  const clients: Client[] = [];
  const connectors: NextConnection[] = [];
  for (let i = 0; i < count; i++) {
    const connector = new NextConnection(buildConnector({ timeout: connectTimeout }));
    connectors.push(connector);
    clients.push(
      new Client(url.origin, {
        pipelining: 1,
        connect: connector.connect,
        keepAliveTimeout,
        keepAliveMaxTimeout: Math.max(keepAliveTimeout, 600_000),
        // per-request values are set by streamRequest; these only bound preconnect and stray requests
        headersTimeout: 300_000,
        bodyTimeout: 300_000,
      }),
    );
  }

  const preconnect = async (opts: PreconnectOptions = {}): Promise<PreconnectReport> => {
    const given = opts.path ?? DEFAULT_PRECONNECT_PATH;
    // the base URL's path prefix (a gateway's /api) goes in front, as on every request of the run
    const path = splitBaseUrl(origin).pathPrefix + given;
    if (!given.startsWith('/')) throw new ClientError('invalid-option', `preconnect path must start with "/" (got ${JSON.stringify(given)})`);
    const concurrency = positiveInt('preconnect concurrency', opts.concurrency, DEFAULT_PRECONNECT_CONCURRENCY);
    const timeoutMs = positiveInt('preconnect timeoutMs', opts.timeoutMs, DEFAULT_PRECONNECT_TIMEOUT_MS);
    const report: PreconnectReport = { opened: 0, failed: 0 };
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < clients.length) {
        const client = clients[next++]!;
        try {
          const res = await client.request({
            path,
            method: 'GET',
            headers: opts.headers,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          });
          await res.body.dump({ limit: 1024 * 1024 });
          if ((res.statusCode < 200 || res.statusCode > 299) && report.firstNon2xxStatus === undefined) {
            report.firstNon2xxStatus = res.statusCode;
          }
          report.opened++;
        } catch (err) {
          report.failed++;
          report.firstError ??= err instanceof Error ? err.message : String(err);
        }
      }
    };
    const lanes: Promise<void>[] = [];
    for (let i = 0; i < Math.min(concurrency, clients.length); i++) lanes.push(lane());
    await Promise.all(lanes);
    return report;
  };

  return {
    clients,
    preconnect,
    prepareNext: (index) => connectors[index]?.prepare(),
    stopConnecting: () => {
      for (const c of connectors) c.stop();
    },
    connectionCounts: async () => {
      const waiting = await Promise.all(connectors.map((c) => c.untaken()));
      return {
        opened: connectors.reduce((n, c) => n + c.opened, 0),
        preparedUnused: connectors.reduce((n, c) => n + c.unused, 0) + waiting.filter((s) => s !== undefined).length,
      };
    },
    retire: async (index) => {
      const c = clients[index];
      connectors[index]?.discard();
      if (c && !c.destroyed) await c.destroy();
    },
    closeAll: async () => {
      for (const c of connectors) c.discard();
      await Promise.all(clients.map((c) => (c.closed || c.destroyed ? undefined : c.close())));
    },
    destroyAll: async () => {
      for (const c of connectors) c.discard();
      await Promise.all(clients.map((c) => (c.destroyed ? undefined : c.destroy())));
    },
  };
}

/**
 * undici's connector for one Client, able to open the next connection ahead of time: `prepare()`
 * starts a connect with the options of the last one; the Client's next `connect` takes that socket
 * (waiting for it when it is still connecting) when it is open, else connects as usual.
 */
export class NextConnection {
  private next: Promise<Socket | undefined> | undefined;
  private lastOptions: buildConnector.Options | undefined;
  /** connections opened through this connector (successful connects, used or not) */
  opened = 0;
  /** prepared connections discarded without a request taken them */
  unused = 0;
  /** stop(): no more connections */
  private stopped = false;

  constructor(private readonly base: buildConnector.connector) {}

  readonly connect: buildConnector.connector = (options, callback) => {
    if (this.stopped) {
      callback(new Error('no new connections: the cell has ended'), null);
      return;
    }
    this.lastOptions = options;
    const next = this.next;
    this.next = undefined;
    if (next === undefined) {
      this.open(options, callback);
      return;
    }
    void next.then((socket) => {
      if (socket !== undefined && isOpen(socket)) callback(null, socket);
      else {
        socket?.destroy();
        this.open(options, callback);
      }
    });
  };

  prepare(): void {
    if (this.stopped || this.next !== undefined || this.lastOptions === undefined) return;
    const options = this.lastOptions;
    this.next = new Promise((resolve) => {
      this.open(options, (err, socket) => resolve(err ? undefined : (socket ?? undefined)));
    });
  }

  /** open no connection from now on (a prepared one stays, counted untaken, until discard) */
  stop(): void {
    this.stopped = true;
  }

  /** drop a prepared connection that will not be used */
  discard(): void {
    const next = this.next;
    this.next = undefined;
    void next?.then((socket) => {
      if (socket === undefined) return;
      this.unused++;
      socket.destroy();
    });
  }

  /** the prepared connection no request has taken yet, once its connect settles (undefined: none, or it failed) */
  untaken(): Promise<Socket | undefined> {
    return this.next ?? Promise.resolve(undefined);
  }

  /** undici's connector, counting the connections it opens; a throw comes back as a connect error */
  private open(options: buildConnector.Options, callback: buildConnector.Callback): void {
    const counted: buildConnector.Callback = (...args) => {
      if (args[0] === null) this.opened++;
      callback(...args);
    };
    try {
      this.base(options, counted);
    } catch (err) {
      callback(err instanceof Error ? err : new Error(String(err)), null);
    }
  }
}

/** open both ways and not destroyed (a server that closed it meanwhile sent a FIN: 'writeOnly') */
function isOpen(socket: Socket): boolean {
  return !socket.destroyed && socket.readyState === 'open';
}
