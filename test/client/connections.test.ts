/**
 * Connection robustness of the streaming client against servers that do not keep connections the
 * way they say (issue 10): llama.cpp closes after every streamed response while it answers
 * `Keep-Alive: timeout=5, max=100`; a server may close every connection before answering; a
 * server may say `Connection: close` or send a short keep-alive hint.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { buildConnector, Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionPolicy } from '../../src/client/connections.js';
import { createWorkerDispatchers, NextConnection } from '../../src/client/pool.js';
import { streamRequest, type StreamRequestOptions } from '../../src/client/stream.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { DONE, decodeOpenAi, role, sleep, text } from './helpers.js';

interface Srv {
  origin: string;
  connections: number;
  /** the Connection header of every request, in order */
  connectionHeaders: Array<string | undefined>;
  close(): Promise<void>;
}

const toClose: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of toClose.splice(0)) await c();
});

/**
 * An HTTP server whose streamed answers end with `mode`:
 * - 'close-after': the whole SSE response, then the server closes the socket (llama.cpp b4748);
 * - 'keep': the whole response, connection kept;
 * - 'connection-close': the response says `Connection: close` and the server closes.
 * `keepAliveS` sets the keep-alive timeout Node announces in its Keep-Alive header.
 */
async function sseServer(mode: 'close-after' | 'keep' | 'connection-close', keepAliveS = 5): Promise<Srv> {
  const state: Srv = { origin: '', connections: 0, connectionHeaders: [], close: async () => {} };
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.connectionHeaders.push(req.headers.connection);
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"data":[]}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', ...(mode === 'connection-close' ? { connection: 'close' } : {}) });
      res.end(role() + text('a') + text('b') + DONE);
      if (mode === 'close-after') res.once('finish', () => req.socket.end());
    });
  });
  server.keepAliveTimeout = keepAliveS * 1000;
  server.on('connection', (s) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  };
  toClose.push(state.close);
  return state;
}

/**
 * A TCP server that reads each request's head and closes the connection without a byte of answer
 * (after `delayMs`), except for GET /v1/models.
 */
async function closesBeforeAnswering(delayMs = 0): Promise<Srv> {
  const state: Srv = { origin: '', connections: 0, connectionHeaders: [], close: async () => {} };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    let head = '';
    s.on('data', (d) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      if (head.startsWith('GET /v1/models')) {
        head = '';
        s.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\nkeep-alive: timeout=5\r\n\r\n{"data":[]}');
        return;
      }
      if (delayMs > 0) setTimeout(() => s.destroy(), delayMs);
      else s.destroy();
    });
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  };
  toClose.push(state.close);
  return state;
}

let n = 0;
function stream(origin: string, dispatcher: StreamRequestOptions['dispatcher'], extra: Partial<StreamRequestOptions> = {}): Promise<RequestTimeline> {
  return streamRequest({
    id: `conn-${++n}`,
    dispatcher,
    origin,
    path: '/v1/chat/completions',
    body: { stream: true },
    decode: decodeOpenAi,
    endsWithDone: true,
    timeouts: { headersMs: 5_000, stallMs: 5_000 },
    ...extra,
  });
}

function client(origin: string): Client {
  const c = new Client(origin, { pipelining: 1 });
  toClose.push(() => c.destroy());
  return c;
}

describe('a server that closes the connection after every streamed response (llama.cpp)', () => {
  it('resends a request that failed on the reused connection, once, on a fresh connection; not a failure', async () => {
    const srv = await sseServer('close-after');
    const c = client(srv.origin);
    const first = await stream(srv.origin, c);
    expect(first.end?.kind).toBe('done');
    expect(first.connectionRetries).toBeUndefined();
    // the next request goes out before the client has seen the server's FIN: it fails on the
    // closed connection and is sent once more
    const second = await stream(srv.origin, c);
    expect(second.end?.kind).toBe('done');
    expect(second.chunkTokens).toEqual([1, 1]);
    expect(second.connectionRetries).toBe(1);
    expect(second.retriedAfter).toMatch(/closed|socket|reset/i);
    // its clock starts at the resend: sendMs and sentHeadersMs are the resend's, after the first end
    expect(second.sendMs).toBeGreaterThan(first.end!.atMs);
    expect(second.sentHeadersMs).toBeGreaterThanOrEqual(second.sendMs);
    expect(second.firstTokenMs).toBeGreaterThan(second.sentHeadersMs!);
    // the first connection carried request 1 and the failed send; the resend opened the second
    expect(srv.connections).toBe(2);
  });

  it('learns it once: later requests say Connection: close, so none is written to a closing connection', async () => {
    const srv = await sseServer('close-after');
    const c = client(srv.origin);
    const policy = new ConnectionPolicy();
    const timelines: RequestTimeline[] = [];
    for (let i = 0; i < 6; i++) timelines.push(await stream(srv.origin, c, { connections: policy }));
    expect(timelines.every((t) => t.end?.kind === 'done')).toBe(true);
    expect(policy.closesAfterResponse).toBe(true);
    // request 1's close taught it (seen after its response), or request 2's resend did, when request 2
    // went out before the client had read the server's FIN
    const retries = timelines.map((t) => t.connectionRetries ?? 0);
    expect(retries.slice(2)).toEqual([0, 0, 0, 0]);
    expect(retries[1]).toBeLessThanOrEqual(1);
    expect([timelines[0]!.id, timelines[1]!.id]).toContain(policy.learnedFrom?.requestId);
    // from request 3 on, each says close
    expect(srv.connectionHeaders.slice(-4)).toEqual(['close', 'close', 'close', 'close']);
    // one connection per request (request 2's failed send, if any, went on request 1's)
    expect(srv.connections).toBe(6);
  });

  it('learns it from the close that follows a response, before any request fails (the warm-up teaches it)', async () => {
    const srv = await sseServer('close-after');
    const c = client(srv.origin);
    const policy = new ConnectionPolicy();
    const first = await stream(srv.origin, c, { connections: policy });
    expect(first.end?.kind).toBe('done');
    await sleep(50); // the server's FIN arrives
    expect(policy.closesAfterResponse).toBe(true);
    expect(policy.learnedFrom?.requestId).toBe(first.id);
    expect(policy.learnedFrom!.idleMs).toBeLessThan(50);
    const second = await stream(srv.origin, c, { connections: policy });
    expect(second.end?.kind).toBe('done');
    expect(second.connectionRetries).toBeUndefined();
    expect(srv.connectionHeaders).toEqual(['keep-alive', 'close']);
  });

  it('opens the worker\'s next connection as the stream ends (pool.prepareNext), one per request', async () => {
    const srv = await sseServer('close-after');
    const pool = createWorkerDispatchers(srv.origin, 1);
    toClose.push(() => pool.destroyAll());
    const policy = new ConnectionPolicy();
    policy.closesAfterResponse = true;
    await pool.preconnect();
    let prepared = 0;
    for (let i = 0; i < 5; i++) {
      const t = await stream(srv.origin, pool.clients[0]!, {
        connections: policy,
        onConnectionClosing: () => {
          prepared++;
          pool.prepareNext(0);
        },
      });
      expect(t.end?.kind).toBe('done');
      expect(t.connectionRetries).toBeUndefined();
    }
    expect(prepared).toBe(5);
    // preconnect's connection carried the first request; each of the 5 ends opened the next one
    // (the last, still connecting at the end, is discarded unused): 6 in all, never a second
    // connect for one request
    await sleep(50);
    // that last one is counted apart: prepared, never taken by a request
    expect(await pool.connectionCounts()).toEqual({ opened: 6, preparedUnused: 1 });
    await pool.destroyAll();
    // the server saw at least one per request (the unused last one may be gone before it is accepted)
    expect(srv.connections).toBeGreaterThanOrEqual(5);
    expect(srv.connections).toBeLessThanOrEqual(6);
  });
});

describe('a server that closes every connection before answering', () => {
  it('fails the request with closed-before-response; a reused connection gets one resend, never a loop', async () => {
    const srv = await closesBeforeAnswering();
    const c = client(srv.origin);
    // a fresh connection: nothing to resend
    const fresh = await stream(srv.origin, c);
    expect(fresh.end).toMatchObject({ kind: 'error', code: 'closed-before-response' });
    expect(fresh.end?.kind === 'error' && fresh.end.message).toMatch(/the server closed the connection before answering/);
    expect(fresh.connectionRetries).toBeUndefined();
    expect(srv.connections).toBe(1);
    // a reused connection (a GET first): resent once, fails again, and says so
    const get = await c.request({ path: '/v1/models', method: 'GET' });
    await get.body.text();
    const reused = await stream(srv.origin, c);
    expect(reused.end).toMatchObject({ kind: 'error', code: 'closed-before-response' });
    expect(reused.connectionRetries).toBe(1);
    expect(reused.end?.kind === 'error' && reused.end.message).toMatch(/on a fresh connection too, after one resend/);
    expect(srv.connections).toBe(3);
  });

  it('does not resend a reused connection that failed long after the send (not a stale connection)', async () => {
    const srv = await closesBeforeAnswering(1_200);
    const c = client(srv.origin);
    const get = await c.request({ path: '/v1/models', method: 'GET' });
    await get.body.text();
    const t = await stream(srv.origin, c);
    expect(t.end).toMatchObject({ kind: 'error', code: 'closed-before-response' });
    expect(t.connectionRetries).toBeUndefined();
    expect(srv.connections).toBe(1);
  });

  it('does not resend when resends are turned off', async () => {
    const srv = await closesBeforeAnswering();
    const c = client(srv.origin);
    const get = await c.request({ path: '/v1/models', method: 'GET' });
    await get.body.text();
    const t = await stream(srv.origin, c, { retryStaleConnection: false });
    expect(t.end).toMatchObject({ kind: 'error', code: 'closed-before-response' });
    expect(t.connectionRetries).toBeUndefined();
    expect(srv.connections).toBe(1);
  });
});

describe('learning from a close', () => {
  it('a close after the socket carried the next request is that request\'s: learned from the second response', async () => {
    // keeps the connection after the first stream, closes it after the second
    let n = 0;
    const sockets = new Set<net.Socket>();
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const socket = res.socket;
        res.end(role() + text('a') + DONE);
        if (++n === 2) res.once('finish', () => socket?.destroySoon());
      });
    });
    server.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    toClose.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    });
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const c = client(origin);
    const policy = new ConnectionPolicy();
    const first = await stream(origin, c, { connections: policy });
    const second = await stream(origin, c, { connections: policy });
    await sleep(50);
    expect([first.end?.kind, second.end?.kind]).toEqual(['done', 'done']);
    expect(policy.closesAfterResponse).toBe(true);
    expect(policy.learnedFrom?.requestId).toBe(second.id);
  });
});

describe('keep-alive hints', () => {
  it('Connection: close on a response: the next request opens a new connection, no failure, no resend', async () => {
    const srv = await sseServer('connection-close');
    const c = client(srv.origin);
    let closing = 0;
    for (let i = 0; i < 3; i++) {
      const t = await stream(srv.origin, c, { onConnectionClosing: () => closing++ });
      expect(t.end?.kind).toBe('done');
      expect(t.connectionRetries).toBeUndefined();
    }
    expect(closing).toBe(3);
    expect(srv.connections).toBe(3);
  });

  it('Keep-Alive: timeout=1 (shorter than undici\'s 2 s margin): not reused after an idle second, no failure', async () => {
    const srv = await sseServer('keep', 1);
    const c = client(srv.origin);
    expect((await stream(srv.origin, c)).end?.kind).toBe('done');
    await sleep(1_100);
    const t = await stream(srv.origin, c);
    expect(t.end?.kind).toBe('done');
    expect(t.connectionRetries).toBeUndefined();
    expect(srv.connections).toBe(2);
  });

  it('a server that keeps connections: one connection, nothing resent, nothing learned', async () => {
    const srv = await sseServer('keep');
    const c = client(srv.origin);
    const policy = new ConnectionPolicy();
    for (let i = 0; i < 4; i++) {
      const t = await stream(srv.origin, c, { connections: policy });
      expect(t.end?.kind).toBe('done');
      expect(t.connectionRetries).toBeUndefined();
    }
    expect(policy.closesAfterResponse).toBe(false);
    expect(srv.connections).toBe(1);
    expect(srv.connectionHeaders).toEqual(['keep-alive', 'keep-alive', 'keep-alive', 'keep-alive']);
  });
});

describe('NextConnection', () => {
  it('hands the prepared socket to the next connect, and connects afresh when it was closed meanwhile', async () => {
    const accepted: net.Socket[] = [];
    const server = net.createServer((s) => accepted.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    toClose.push(async () => {
      for (const s of accepted) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    });
    const port = String((server.address() as AddressInfo).port);
    const next = new NextConnection(buildConnector({ timeout: 2_000 }));
    const options = { hostname: '127.0.0.1', host: `127.0.0.1:${port}`, protocol: 'http:', port };
    const connect = () => new Promise<net.Socket>((resolve, reject) => next.connect(options, (err, s) => (err ? reject(err) : resolve(s!))));

    // nothing prepared before the first connect (no options known yet)
    next.prepare();
    const a = await connect();
    expect(next.opened).toBe(1);
    next.prepare();
    await sleep(50);
    expect(accepted).toHaveLength(2);
    const b = await connect();
    expect(b).not.toBe(a);
    expect(next.opened).toBe(2); // the prepared one, no new connect
    // prepared, then the server closes it before it is used: a fresh connect instead
    next.prepare();
    await sleep(50);
    accepted[2]!.end();
    await sleep(50);
    const c = await connect();
    expect(next.opened).toBe(4);
    expect(c.readyState).toBe('open');
    // a prepared one the server closed is not counted unused: its request connected afresh (a second connect)
    expect(next.unused).toBe(0);
    // prepared and discarded without a request: unused; untaken() is the one still waiting
    next.prepare();
    expect(await next.untaken()).toBeInstanceOf(net.Socket);
    next.discard();
    await sleep(20);
    expect(next.unused).toBe(1);
    expect(await next.untaken()).toBeUndefined();
    // the cell's end: nothing more is opened, prepared or not (undici's reconnect for an aborted queued request)
    next.stop();
    next.prepare();
    expect(await next.untaken()).toBeUndefined();
    await expect(connect()).rejects.toThrow('no new connections: the cell has ended');
    await sleep(20);
    expect(next.opened).toBe(5);
    expect(accepted).toHaveLength(5);
    for (const s of [a, b, c]) s.destroy();
  });
});
