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
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Dispatcher } from 'undici';
import { monoMs } from '../clock.js';
import type { DecodedChunk } from '../engines/types.js';
import { ClientError } from './errors.js';
import { DEFAULT_MAX_EVENT_BYTES, SseParser } from './sse.js';
import { TokenCounter } from './token-count.js';
import type { ClientErrorCode, RequestEnd, RequestTimeline } from './types.js';

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
  /** record sentHeadersMs through undici's diagnostics channel; default true */
  recordSentHeaders?: boolean;
  /** default 16 MiB */
  maxEventBytes?: number;
  /** default 64 KiB */
  maxErrorBodyBytes?: number;
  /** called once, at the first text-carrying chunk; must not throw */
  onFirstToken?: (t: RequestTimeline) => void;
  /** called once, when `end` is set (before the promise resolves); must not throw */
  onEnd?: (t: RequestTimeline) => void;
}

/** timelines waiting for their request headers to be written, by X-Request-Id */
const awaitingSend = new Map<string, RequestTimeline>();
let subscribed = false;

interface SendHeadersMessage {
  request: { headers?: unknown };
}

function onSendHeaders(message: unknown): void {
  if (awaitingSend.size === 0) return;
  const headers = (message as SendHeadersMessage).request?.headers;
  if (!Array.isArray(headers)) return;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const key = headers[i];
    if (key === 'x-request-id' || (typeof key === 'string' && key.toLowerCase() === 'x-request-id')) {
      const id = headers[i + 1];
      if (typeof id !== 'string') return;
      const t = awaitingSend.get(id);
      if (t !== undefined) {
        t.sentHeadersMs = monoMs();
        awaitingSend.delete(id);
      }
      return;
    }
  }
}

function subscribeSendHeaders(): void {
  if (subscribed) return;
  subscribed = true;
  diagnosticsChannel.subscribe('undici:client:sendHeaders', onSendHeaders);
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
  if (recordSent) {
    subscribeSendHeaders();
    awaitingSend.set(opts.id, timeline);
  }

  return new Promise<RequestTimeline>((resolve) => {
    const signal = opts.signal;
    let controller: Dispatcher.DispatchController | undefined;
    let finished = false;
    /** what the body's bytes go to, set by the response headers */
    let sink: BodySink | undefined;

    const onAbort = (): void => {
      if (finished) return;
      finish({ kind: 'aborted', atMs: monoMs() }, true);
    };
    const finish = (end: RequestEnd, abortTransport: boolean): void => {
      if (finished) return;
      finished = true;
      timeline.end = end;
      signal?.removeEventListener('abort', onAbort);
      if (recordSent && awaitingSend.get(opts.id) === timeline) awaitingSend.delete(opts.id);
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
    // an abort never gets here: its listener (onAbort) has already finished the request
    const onTransportError = (err: unknown): void => {
      if (finished) return;
      const { code, message } = classifyTransportError(err);
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

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (finished) c.abort(new RequestDone());
      },
      onResponseStart(c, statusCode, resHeaders) {
        if (statusCode < 200) return; // 1xx informational: the real answer follows
        if (finished) {
          c.abort(new RequestDone());
          return;
        }
        timeline.headersMs = monoMs();
        if (statusCode > 299) {
          sink = errorBodySink(opts.maxErrorBodyBytes ?? DEFAULT_MAX_ERROR_BODY_BYTES, (text, complete) => {
            const detail = errorMessageFromBody(text);
            // a body over the limit is cut off (the connection closes); a complete one leaves it reusable
            fail('http-status', `HTTP ${statusCode}${detail ? `: ${detail}` : ''}`, !complete, statusCode);
          });
          return;
        }
        const type = resHeaders['content-type'];
        sink = eventStreamSink(timeline, opts, typeof type === 'string' ? type : undefined, finish, fail);
      },
      onResponseData(_c, chunk) {
        sink?.data(chunk);
      },
      onResponseEnd() {
        sink?.end();
        if (!finished) fail('no-done', 'response ended before its headers were handled', false);
      },
      onResponseError(_c, err) {
        if (err instanceof RequestDone) return;
        sink?.error();
        onTransportError(err);
      },
    };

    timeline.sendMs = monoMs();
    try {
      opts.dispatcher.dispatch(
        {
          origin: opts.origin,
          path: opts.path,
          method: 'POST',
          headers,
          body: payload,
          headersTimeout: opts.timeouts.headersMs,
          bodyTimeout: opts.timeouts.stallMs,
        },
        handler,
      );
    } catch (err) {
      onTransportError(err);
    }
  });
}

/** the reason this module aborts a request it has already ended; never reported */
class RequestDone extends Error {
  constructor() {
    super('request ended by the client');
    this.name = 'RequestDone';
  }
}

type Finish = (end: RequestEnd, abortTransport: boolean) => void;
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
  const counter = new TokenCounter(timeline);
  let arrivalMs = 0;
  let stopped = false;
  let firstTokenSeen = false;

  const onEvent = (data: string): void => {
    if (stopped) return;
    if (data === '[DONE]') {
      stopped = true;
      // keep reading to the end of the body, so the connection is reused
      finish({ kind: 'done', atMs: arrivalMs }, false);
      return;
    }
    let decoded: DecodedChunk;
    try {
      decoded = opts.decode(JSON.parse(data));
    } catch (err) {
      stopped = true;
      fail('protocol', `unparseable SSE data (${errorText(err)}): ${truncate(data, 200)}`, true);
      return;
    }
    if (decoded.error !== undefined) {
      stopped = true;
      const code = decoded.error.code !== undefined ? ` (code ${String(decoded.error.code)})` : '';
      fail('error-event', `error event in stream${code}: ${truncate(decoded.error.message, 500)}`, true);
      return;
    }
    counter.add(decoded, arrivalMs);
    if (!firstTokenSeen && timeline.firstTokenMs !== undefined) {
      firstTokenSeen = true;
      opts.onFirstToken?.(timeline);
    }
    if (decoded.final === true && !opts.endsWithDone) {
      stopped = true;
      finish({ kind: 'done', atMs: arrivalMs }, false);
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
        parser.end();
      } catch (err) {
        stopped = true;
        fail('protocol', errorText(err), false);
        return;
      }
      if (stopped) return;
      stopped = true;
      const typeNote = contentType !== undefined && !contentType.includes('text/event-stream') ? ` (content-type ${contentType})` : '';
      const marker = opts.endsWithDone ? 'data: [DONE]' : "the engine's final chunk";
      fail('no-done', `stream closed without ${marker}${typeNote}`, false);
    },
    error() {
      stopped = true;
    },
    stop() {
      stopped = true;
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

/**
 * The server's error message from an error body: `{error:{message}}`, `{object:'error',message}`,
 * `{error:'...'}`, `{message}`, `{detail}`; otherwise the text itself (truncated to 500 chars).
 */
export function errorMessageFromBody(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length === 0) return '';
  try {
    const json: unknown = JSON.parse(trimmed);
    if (json !== null && typeof json === 'object') {
      const o = json as Record<string, unknown>;
      const e = o.error;
      if (typeof e === 'string' && e.length > 0) return truncate(e, 500);
      if (e !== null && typeof e === 'object') {
        const m = (e as Record<string, unknown>).message;
        if (typeof m === 'string') return truncate(m, 500);
      }
      if (typeof o.message === 'string') return truncate(o.message, 500);
      if (typeof o.detail === 'string') return truncate(o.detail, 500);
      if (o.detail !== undefined) return truncate(JSON.stringify(o.detail), 500);
    }
  } catch {
    // not JSON: use the text
  }
  return truncate(trimmed, 500);
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
