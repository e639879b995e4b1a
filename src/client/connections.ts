/**
 * What the client knows about its connections: which socket carried each request, whether that
 * socket was reused, when its last response ended, and what the server has shown about keeping
 * connections open. Transport facts only; no engine.
 *
 * undici publishes `undici:client:sendHeaders` with the request and its socket just before it
 * writes a request's headers. Every undici request of the process counts on its socket here
 * (preconnect GETs included), so a stream request knows whether its socket had carried a request
 * before: a reused keep-alive connection, which a server may have closed meanwhile.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { monoMs } from '../clock.js';

/**
 * A stale-connection failure on a socket that had been idle for at most this long since its last
 * response ended means the server closes connections right after a response (llama.cpp's HTTP
 * server does, while it answers `Keep-Alive: timeout=5, max=100`). A longer idle time is an
 * idle-timeout race, which the retry alone covers.
 */
export const CLOSES_AFTER_RESPONSE_IDLE_MS = 1_000;

/** One send of a request, as seen on its socket. */
export interface SendRecord {
  /** when the headers were handed to the socket (monoMs) */
  atMs: number;
  socket: Socket;
  /** the socket had carried a request before this one */
  reused: boolean;
  /** ms since the socket's previous response ended, when one did */
  idleMs?: number;
  /** socket.bytesRead at the send: equal at a failure = no response byte arrived */
  bytesReadAtSend: number;
}

interface SocketState {
  requests: number;
  lastResponseEndMs?: number;
}

const sockets = new WeakMap<Socket, SocketState>();
/** sends waiting for their headers to be written, by X-Request-Id */
const awaitingSend = new Map<string, (record: SendRecord) => void>();
let subscribed = false;

interface SendHeadersMessage {
  request?: { headers?: unknown };
  socket?: Socket;
}

function requestIdOf(headers: unknown): string | undefined {
  if (!Array.isArray(headers)) return undefined;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const key = headers[i];
    if (key === 'x-request-id' || (typeof key === 'string' && key.toLowerCase() === 'x-request-id')) {
      const id = headers[i + 1];
      return typeof id === 'string' ? id : undefined;
    }
  }
  return undefined;
}

function onSendHeaders(message: unknown): void {
  const m = message as SendHeadersMessage;
  const socket = m.socket;
  if (socket === undefined) return;
  const atMs = monoMs();
  let state = sockets.get(socket);
  if (state === undefined) {
    state = { requests: 0 };
    sockets.set(socket, state);
  }
  const reused = state.requests > 0;
  state.requests++;
  if (awaitingSend.size === 0) return;
  const id = requestIdOf(m.request?.headers);
  if (id === undefined) return;
  const listener = awaitingSend.get(id);
  if (listener === undefined) return;
  awaitingSend.delete(id);
  const record: SendRecord = { atMs, socket, reused, bytesReadAtSend: socket.bytesRead };
  if (state.lastResponseEndMs !== undefined) record.idleMs = atMs - state.lastResponseEndMs;
  listener(record);
}

/** Call `listener` when the request with X-Request-Id `id` has its headers written (once). */
export function watchSend(id: string, listener: (record: SendRecord) => void): void {
  if (!subscribed) {
    subscribed = true;
    diagnosticsChannel.subscribe('undici:client:sendHeaders', onSendHeaders);
  }
  awaitingSend.set(id, listener);
}

/** Stop waiting for the send of `id` (the request ended before its headers were written). */
export function unwatchSend(id: string, listener: (record: SendRecord) => void): void {
  if (awaitingSend.get(id) === listener) awaitingSend.delete(id);
}

/** A response on `socket` ended normally now: the socket's idle time starts. */
export function noteResponseEnd(socket: Socket | undefined): void {
  if (socket === undefined) return;
  const state = sockets.get(socket);
  if (state) state.lastResponseEndMs = monoMs();
}

/**
 * What one run has learned about the server's connections, shared by all its requests. When the
 * server closes connections right after a streamed response, every later stream request says
 * `Connection: close` (undici's `reset`), so no request is written to a socket the server is
 * closing; the worker's next connection is opened when the stream ends (see pool.ts).
 */
export class ConnectionPolicy {
  /** the server closed a kept-alive connection right after a response */
  closesAfterResponse = false;
  /** the request that taught it: its connection was closed `idleMs` after its response ended */
  learnedFrom?: { requestId: string; idleMs: number };
  /** responses still to watch for a close that follows them (see watchAfterResponse) */
  private watchesLeft = POLICY_WATCHES;

  /** the server closed the connection `idleMs` after the response of `requestId` ended (seen by a watch, or by a stale failure) */
  noteCloseAfterResponse(requestId: string, idleMs: number): void {
    if (this.closesAfterResponse || idleMs > CLOSES_AFTER_RESPONSE_IDLE_MS) return;
    this.closesAfterResponse = true;
    this.learnedFrom = { requestId, idleMs };
  }

  /**
   * After a response that kept its connection: watch that socket for the server's close for up to
   * CLOSES_AFTER_RESPONSE_IDLE_MS, so the first responses (the warm-up) teach the policy before any
   * request is written to a closing connection. Only the first POLICY_WATCHES responses are watched.
   */
  watchAfterResponse(requestId: string, socket: Socket): void {
    if (this.closesAfterResponse || this.watchesLeft <= 0 || socket.destroyed) return;
    this.watchesLeft--;
    // one watch per socket: this response's replaces the one of the response before it
    watched.get(socket)?.();
    const endedMs = monoMs();
    // a close after the socket carried another request is that request's, not this response's
    const requestsThen = sockets.get(socket)?.requests;
    if (socket.readableEnded) {
      this.noteCloseAfterResponse(requestId, 0);
      return;
    }
    const stop = (): void => {
      clearTimeout(timer);
      socket.off('end', onEnd);
      if (watched.get(socket) === stop) watched.delete(socket);
    };
    const onEnd = (): void => {
      stop();
      if (sockets.get(socket)?.requests === requestsThen) this.noteCloseAfterResponse(requestId, monoMs() - endedMs);
    };
    const timer = setTimeout(stop, CLOSES_AFTER_RESPONSE_IDLE_MS);
    timer.unref();
    socket.once('end', onEnd);
    watched.set(socket, stop);
  }
}

/** sockets a ConnectionPolicy is watching for a close, with the call that ends that watch (one per socket) */
const watched = new WeakMap<Socket, () => void>();

/** responses a ConnectionPolicy watches for a close that follows them */
export const POLICY_WATCHES = 32;
