/**
 * One streamed request → one RequestTimeline. Transport and timing only: the engine adapter's
 * `decode` interprets the payloads. The promise never rejects for a request failure; the
 * timeline's `end` says what happened (only invalid options reject, with a ClientError).
 *
 * Timing: `sendMs` when the request is handed to undici; `sentHeadersMs` when undici writes the
 * request headers to the socket (diagnostics channel `undici:client:sendHeaders`, matched by the
 * X-Request-Id header); `headersMs` when the response headers are delivered; every SSE event of
 * one socket read gets that read's arrival time, taken in the handler's onResponseData before parsing.
 *
 * Timeouts are undici's own: `headersTimeout` (from the request being written to the response
 * headers) → `headers-timeout`; `bodyTimeout` (no body bytes for that long) → `stall`, the request
 * is aborted. The connect timeout belongs to the dispatcher (see pool.ts) → `connect`.
 *
 * Connections (connections.ts): a request whose send went on a reused keep-alive connection and
 * failed before any response byte arrived (the server had closed that connection: llama.cpp closes
 * after every streamed response while it advertises keep-alive) is sent once more, on a fresh
 * connection; `connectionRetries` says so and its times are the resend's. Never more than once: a
 * server that closes every connection before answering gets `closed-before-response` failures.
 * undici itself honours `Connection: close` and `Keep-Alive: timeout=N` on responses.
 *
 * Endings (`timeline.ending`, see StreamEnding): `data: [DONE]` ends a stream (or the engine's
 * final chunk where the stream has no [DONE]). When the body ends cleanly without it (undici's
 * onResponseEnd: a close-delimited HTTP/1.0 body whose server closed, or a framed body that ended
 * normally), the SSE parser's clean end dispatches a last event that had no blank line, so
 * `data: [DONE]` then the close is done ('unterminated-last'); a close after a chunk with a real
 * finish reason (DecodedChunk.finishReason, which the adapters leave unset for null, "null" and "")
 * is done too ('close-after-finish'). A clean close before any finish reason is `no-done`, and a
 * transport error (reset, a chunked body cut short) is a failure whatever came before it: the
 * parser's error end dispatches nothing. undici ends a close-delimited body at a reset as if it
 * were complete; the socket's own error tells the two apart (where the send was recorded).
 */
import type { Dispatcher } from 'undici';
import { monoMs } from '../clock.js';
import type { DecodedChunk } from '../shapes/engine.js';
import { noteResponseEnd, unwatchSend, watchSend, type ConnectionPolicy, type SendRecord } from './connections.js';
import { splitBaseUrl } from './base-url.js';
import { ClientError } from './errors.js';
import { errorMessageFromBody, unrequestedEncoding, unrequestedEncodingMessage } from './error-body.js';
import { DEFAULT_MAX_EVENT_BYTES, SseParser, type SseEndDispatch } from './sse.js';
import { TokenCounter } from './token-count.js';
import type { ClientErrorCode, RequestEnd, RequestTimeline, StreamEnding } from '../shapes/timeline.js';

/** the server's error message from an error body (error-body.ts), for this module's callers */
export { errorMessageFromBody };

/** bytes of a non-2xx response body read for its error message */
export const DEFAULT_MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface StreamTimeouts {
  /** ms from the request being written to the response headers; 0 disables */
  headersMs: number;
  /** ms without any body byte before the request fails as `stall`; 0 disables */
  stallMs: number;
}

export interface StreamRequestOptions {
  /** sent as X-Request-Id; the timeline's id */
  id: string;
  /** one undici Client per worker (pool.ts), or any undici Dispatcher */
  dispatcher: Dispatcher;
  /** e.g. http://127.0.0.1:8000 */
  origin: string;
  /** e.g. /v1/chat/completions */
  path: string;
  /** extra request headers (Authorization …); never logged */
  headers?: Record<string, string>;
  /** JSON-serialised once */
  body: unknown;
  /** the engine adapter's decodeChunk */
  decode: (payload: unknown) => DecodedChunk;
  /** the stream's normal end is `data: [DONE]`; otherwise a chunk with `final` ends it */
  endsWithDone: boolean;
  /** abort ⇒ end.kind 'aborted' */
  signal?: AbortSignal;
  timeouts: StreamTimeouts;
  /**
   * record sentHeadersMs through undici's diagnostics channel; default true. Without it the client
   * cannot tell a reused connection, so it never resends.
   */
  recordSentHeaders?: boolean;
  /** resend once on a fresh connection after a stale reused one (see the header); default true */
  retryStaleConnection?: boolean;
  /**
   * what the run has learned about the server's connections: when it closes after each response,
   * the request is sent with `Connection: close`, and a stale failure here teaches it
   */
  connections?: ConnectionPolicy;
  /**
   * called once, when the response has ended normally and its connection will not carry another
   * request (we sent or the server answered `Connection: close`): the moment to open the next one;
   * must not throw
   */
  onConnectionClosing?: () => void;
  /** default 16 MiB */
  maxEventBytes?: number;
  /** default 64 KiB */
  maxErrorBodyBytes?: number;
  /** keep the text of each token-carrying chunk in `chunkText` (what a local tokenizer counts) */
  keepText?: boolean;
  /**
   * a local tokenizer's per-chunk recount (src/tokenizer/recount.ts): when the request's tokens
   * came from `chunks`, each chunk's tokens become its tokenized text when the request ends
   * (tokenSource `local-tokenizer`); implies keepText; must not throw
   */
  recountTokens?: (texts: readonly string[]) => number[];
  /** called once, at the first text-carrying chunk; must not throw */
  onFirstToken?: (t: RequestTimeline) => void;
  /** called once, when `end` is set (before the promise resolves); must not throw */
  onEnd?: (t: RequestTimeline) => void;
}

function validate(opts: StreamRequestOptions): void {
  const bad = (field: string, rule: string): never => {
    throw new ClientError('invalid-option', `streamRequest ${field}: ${rule}`);
  };
  if (typeof opts.id !== 'string' || opts.id.length === 0) bad('id', 'must be a non-empty string (sent as X-Request-Id)');
  if (typeof opts.path !== 'string' || !opts.path.startsWith('/')) bad('path', `must start with "/" (got ${JSON.stringify(opts.path)})`);
  for (const k of ['headersMs', 'stallMs'] as const) {
    const v = opts.timeouts?.[k];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      bad(`timeouts.${k}`, `must be a finite number of ms ≥ 0, 0 disables it (got ${String(v)})`);
    }
  }
}

/**
 * Stream one request; resolves with its timeline, whatever happened.
 *
 * Transport: undici's `dispatch` with a handler, not `request`: body bytes come straight from
 * undici's HTTP parser to the SSE parser, without a Readable stream in between (perf/client-floor.ts
 * measures what that saves per event).
 */
export async function streamRequest(opts: StreamRequestOptions): Promise<RequestTimeline> {
  validate(opts);
  // undici's dispatch takes an origin and drops any path on it: a base URL's path prefix (a
  // gateway's /api) goes in front of the request's path instead, whoever the caller is
  let base: { origin: string; pathPrefix: string };
  try {
    base = splitBaseUrl(opts.origin);
  } catch {
    throw new ClientError('invalid-option', `streamRequest origin: must be an absolute URL such as http://127.0.0.1:8000 (got ${JSON.stringify(opts.origin)})`);
  }
  const origin = base.origin;
  const path = base.pathPrefix + opts.path;
  const payload = JSON.stringify(opts.body);
  const timeline: RequestTimeline = {
    id: opts.id,
    sendMs: 0,
    chunkMs: [],
    chunkTokens: [],
    tokenSource: 'chunks',
    reasoningTokens: 0,
  };
  const recordSent = opts.recordSentHeaders !== false;
  const mayRetry = recordSent && opts.retryStaleConnection !== false;

  return new Promise<RequestTimeline>((resolve) => {
    const signal = opts.signal;
    let controller: Dispatcher.DispatchController | undefined;
    let finished = false;
    /** what the body's bytes go to, set by the response headers */
    let sink: BodySink | undefined;
    /** the current send: 0 = first, 1 = the resend on a fresh connection */
    let attempt = 0;
    /** the current send as seen on its socket (undefined until its headers are written) */
    let sent: SendRecord | undefined;
    /** the connection of the current send closes after its response */
    let closing = false;
    const onSent = (record: SendRecord): void => {
      sent = record;
      timeline.sentHeadersMs = record.atMs;
    };

    const onAbort = (): void => {
      if (finished) return;
      finish({ kind: 'aborted', atMs: monoMs() }, true);
    };
    const finish = (end: RequestEnd, abortTransport: boolean, ending?: StreamEnding): void => {
      if (finished) return;
      finished = true;
      timeline.end = end;
      if (end.kind === 'done' && ending !== undefined) timeline.ending = ending;
      signal?.removeEventListener('abort', onAbort);
      if (recordSent) unwatchSend(opts.id, onSent);
      // no event after the end may change the timeline (an abort from inside a callback ends it
      // while the rest of that socket read is still being parsed)
      sink?.stop();
      // after the current socket read: a response that read completed keeps its connection
      if (abortTransport && controller !== undefined) {
        const c = controller;
        queueMicrotask(() => {
          if (!c.aborted) c.abort(new RequestDone());
        });
      }
      try {
        if (end.kind === 'done' && closing) opts.onConnectionClosing?.();
        opts.onEnd?.(timeline);
      } finally {
        resolve(timeline);
      }
    };
    const fail = (code: ClientErrorCode, message: string, abortTransport: boolean, httpStatus?: number): void => {
      const end: RequestEnd = { kind: 'error', atMs: monoMs(), code, message };
      if (httpStatus !== undefined) end.httpStatus = httpStatus;
      finish(end, abortTransport);
    };
    /** no byte of a response arrived on the current send's socket (known only when its send was seen) */
    const noResponseByte = (): boolean => timeline.headersMs === undefined && sent !== undefined && sent.socket.bytesRead === sent.bytesReadAtSend;
    // an abort never gets here: its listener (onAbort) has already finished the request
    const onTransportError = (err: unknown): void => {
      if (finished) return;
      const { code, message } = classifyTransportError(err);
      if (code === 'socket' && noResponseByte() && !clientCaused(err)) {
        if (mayRetry && attempt === 0 && sent?.reused === true && monoMs() - sent.atMs <= STALE_FAILURE_WITHIN_MS) {
          resend(message);
          return;
        }
        const again = attempt > 0 ? `, on a fresh connection too, after one resend (first: ${timeline.retriedAfter})` : '';
        fail('closed-before-response', `the server closed the connection before answering${again}: ${message}`, true);
        return;
      }
      fail(code, message, true);
    };

    if (signal?.aborted) {
      timeline.sendMs = monoMs();
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });

    const headers: Record<string, string> = {
      ...opts.headers,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'x-request-id': opts.id,
    };

    /** one send; callbacks of an earlier send are ignored once a resend has started */
    const dispatch = (): void => {
      const mine = attempt;
      const current = (): boolean => mine === attempt;
      const reset = opts.connections?.closesAfterResponse === true;
      closing = reset;
      if (attempt > 0) timeline.connectionRetries = attempt;
      sent = undefined;
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          if (!current()) return;
          controller = c;
          if (finished) c.abort(new RequestDone());
        },
        onResponseStart(c, statusCode, resHeaders) {
          if (!current()) return;
          if (statusCode < 200) return; // 1xx informational: the real answer follows
          if (finished) {
            c.abort(new RequestDone());
            return;
          }
          timeline.headersMs = monoMs();
          const connection = resHeaders.connection;
          if (typeof connection === 'string' && /\bclose\b/i.test(connection)) closing = true;
          if (statusCode > 299) {
            sink = errorBodySink(opts.maxErrorBodyBytes ?? DEFAULT_MAX_ERROR_BODY_BYTES, (text, complete) => {
              const detail = errorMessageFromBody(text);
              // a body over the limit is cut off (the connection closes); a complete one leaves it reusable
              fail('http-status', `HTTP ${statusCode}${detail ? `: ${detail}` : ''}`, !complete, statusCode);
            });
            return;
          }
          const encoding = unrequestedEncoding(resHeaders['content-encoding']);
          if (encoding !== undefined) {
            fail('protocol', unrequestedEncodingMessage(encoding), true);
            return;
          }
          const type = resHeaders['content-type'];
          sink = eventStreamSink(timeline, opts, typeof type === 'string' ? type : undefined, finish, fail);
        },
        onResponseData(_c, chunk) {
          if (current()) sink?.data(chunk);
        },
        onResponseEnd() {
          if (!current()) return;
          // undici completes a close-delimited body at a reset too (ECONNRESET with a response
          // that is not keep-alive: "all incoming data so far is a valid response"); the socket
          // says which it was, and a reset is a transport error, never a clean end
          const reset = resetError(sent?.socket);
          if (reset !== undefined && !finished) {
            sink?.error();
            onTransportError(reset);
            return;
          }
          noteResponseEnd(sent?.socket);
          if (!closing && sent !== undefined) opts.connections?.watchAfterResponse(opts.id, sent.socket);
          // the server ended this body by closing (close-delimited HTTP/1.0): no other request
          // goes on this connection, so a stream that ends here says so (onConnectionClosing)
          if (sent?.socket.readableEnded === true) closing = true;
          sink?.end();
          if (!finished) fail('no-done', 'response ended before its headers were handled', false);
        },
        onResponseError(_c, err) {
          if (!current() || err instanceof RequestDone) return;
          sink?.error();
          onTransportError(err);
        },
      };

      if (recordSent) watchSend(opts.id, onSent);
      timeline.sendMs = monoMs();
      try {
        opts.dispatcher.dispatch(
          {
            origin,
            path,
            method: 'POST',
            headers,
            body: payload,
            headersTimeout: opts.timeouts.headersMs,
            bodyTimeout: opts.timeouts.stallMs,
            ...(reset ? { reset: true } : {}),
          },
          handler,
        );
      } catch (err) {
        onTransportError(err);
      }
    };

    /** the first send failed on a stale reused connection before any response byte: send once more */
    const resend = (reason: string): void => {
      if (sent?.idleMs !== undefined) opts.connections?.noteCloseAfterResponse(opts.id, sent.idleMs);
      attempt++;
      timeline.retriedAfter = reason;
      delete timeline.sentHeadersMs;
      sink = undefined;
      controller = undefined;
      // undici is still unwinding the dead socket: send from a fresh turn of the event loop, on the
      // fresh connection the dispatcher opens for it
      setImmediate(() => {
        if (!finished) dispatch();
      });
    };

    dispatch();
  });
}

/**
 * A stale reused connection fails within this long of the send (the server had closed it: the
 * write meets its FIN or reset at once); a later failure without a response byte is not resent.
 */
export const STALE_FAILURE_WITHIN_MS = 1_000;

/**
 * The error a socket was destroyed with, when the response "ended" because the connection was
 * reset (undici then ends a close-delimited body as if it were complete). Known only where the
 * send was recorded (recordSentHeaders); without it a reset there reads as a clean close.
 */
function resetError(socket: { errored?: Error | null } | undefined): Error | undefined {
  const err = socket?.errored;
  return err !== null && err !== undefined ? err : undefined;
}

/** undici errors of our own making (a destroyed or closed dispatcher, an abort): never resent */
function clientCaused(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_CLOSED' || code === 'UND_ERR_ABORTED';
}

/** the reason this module aborts a request it has already ended; never reported */
class RequestDone extends Error {
  constructor() {
    super('request ended by the client');
    this.name = 'RequestDone';
  }
}

type Finish = (end: RequestEnd, abortTransport: boolean, ending?: StreamEnding) => void;
type Fail = (code: ClientErrorCode, message: string, abortTransport: boolean) => void;

/** where the response body goes once its headers are known */
interface BodySink {
  data(chunk: Buffer): void;
  /** the body ended normally */
  end(): void;
  /** the transport failed; the caller reports the failure */
  error(): void;
  /** the request has ended: ignore everything from now on */
  stop(): void;
}

function eventStreamSink(
  timeline: RequestTimeline,
  opts: StreamRequestOptions,
  contentType: string | undefined,
  finish: Finish,
  fail: Fail,
): BodySink {
  const counter = new TokenCounter(timeline, {
    ...(opts.keepText !== undefined ? { keepText: opts.keepText } : {}),
    ...(opts.recountTokens ? { recountTokens: opts.recountTokens } : {}),
  });
  let arrivalMs = 0;
  let stopped = false;
  let firstTokenSeen = false;
  /** a chunk with a real finish reason has arrived */
  let finishSeen = false;

  const onEvent = (data: string, atEnd?: SseEndDispatch): void => {
    if (stopped) return;
    if (data === '[DONE]') {
      stopped = true;
      // keep reading to the end of the body, so the connection is reused
      finish({ kind: 'done', atMs: arrivalMs }, false, atEnd !== undefined ? 'unterminated-last' : 'done');
      return;
    }
    let decoded: DecodedChunk;
    try {
      decoded = opts.decode(JSON.parse(data));
    } catch (err) {
      stopped = true;
      if (atEnd?.unterminatedLine === true) {
        // the body stopped inside the last line: a stream cut off at the close, not a bad chunk
        fail('no-done', `stream closed in the middle of its last event (${errorText(err)}): ${truncate(data, 200)}`, false);
      } else {
        fail('protocol', `unparseable SSE data (${errorText(err)}): ${truncate(data, 200)}`, true);
      }
      return;
    }
    if (decoded.error !== undefined) {
      stopped = true;
      const code = decoded.error.code !== undefined ? ` (code ${String(decoded.error.code)})` : '';
      fail('error-event', `error event in stream${code}: ${truncate(decoded.error.message, 500)}`, true);
      return;
    }
    counter.add(decoded, arrivalMs);
    if (decoded.finishReason !== undefined) finishSeen = true;
    if (!firstTokenSeen && timeline.firstTokenMs !== undefined) {
      firstTokenSeen = true;
      opts.onFirstToken?.(timeline);
    }
    if (decoded.final === true && !opts.endsWithDone) {
      stopped = true;
      finish({ kind: 'done', atMs: arrivalMs }, false, 'final-chunk');
    }
  };

  const parser = new SseParser(onEvent, { maxEventBytes: opts.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES });

  return {
    data(chunk) {
      arrivalMs = monoMs();
      if (stopped) return;
      try {
        parser.push(chunk);
      } catch (err) {
        stopped = true;
        fail('protocol', errorText(err), true);
      }
    },
    end() {
      if (stopped) return;
      arrivalMs = monoMs();
      try {
        // a clean end: a last event without its blank line (or its line end) is dispatched
        parser.end('clean');
      } catch (err) {
        stopped = true;
        fail('protocol', errorText(err), false);
        return;
      }
      if (stopped) return;
      stopped = true;
      if (finishSeen) {
        finish({ kind: 'done', atMs: arrivalMs }, false, 'close-after-finish');
        return;
      }
      const typeNote = contentType !== undefined && !contentType.includes('text/event-stream') ? ` (content-type ${contentType})` : '';
      const marker = opts.endsWithDone ? 'data: [DONE]' : "the engine's final chunk";
      fail('no-done', `stream closed without ${marker}, and no chunk had a finish_reason${typeNote}`, false);
    },
    error() {
      stopped = true;
      // nothing pending is dispatched after a transport failure
      parser.end('error');
    },
    stop() {
      stopped = true;
      // the request has ended (any way): recount its tokens from the text, when asked to
      try {
        counter.complete();
      } catch {
        // a failing recount keeps the chunk counts
      }
    },
  };
}

/** Collects up to maxBytes of an error body; `onText(text, complete)` once, at its end or at the limit. */
function errorBodySink(maxBytes: number, onText: (text: string, complete: boolean) => void): BodySink {
  const parts: Buffer[] = [];
  let bytes = 0;
  let delivered = false;
  const deliver = (complete: boolean): void => {
    if (delivered) return;
    delivered = true;
    onText(Buffer.concat(parts, Math.min(bytes, maxBytes)).toString('utf8'), complete);
  };
  return {
    data(chunk) {
      if (delivered) return;
      parts.push(chunk);
      bytes += chunk.length;
      if (bytes > maxBytes) deliver(false);
    },
    end: () => deliver(true),
    error: () => deliver(true),
    stop: () => {
      delivered = true;
    },
  };
}

const CONNECT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/** Map an undici / system error to a ClientErrorCode and a message. */
export function classifyTransportError(err: unknown): { code: ClientErrorCode; message: string } {
  const code = (err as { code?: unknown } | null)?.code;
  const message = errorText(err);
  if (err instanceof ClientError && err.code !== 'invalid-option') return { code: err.code, message };
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return { code: 'headers-timeout', message };
  if (code === 'UND_ERR_BODY_TIMEOUT') return { code: 'stall', message };
  if (typeof code === 'string' && CONNECT_CODES.has(code)) return { code: 'connect', message };
  if (code === 'UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE' || code === 'HPE_INVALID_CONSTANT' || code === 'UND_ERR_INFO') {
    return { code: 'protocol', message };
  }
  return { code: 'socket', message };
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}
