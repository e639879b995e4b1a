/**
 * One streamed request in flight (stream.ts streamRequest): its sends (the first, and at most one
 * resend on a fresh connection after a stale reused one), the undici handler of each send, and
 * the request's one end (finish / fail), which resolves the timeline. The body itself goes to a
 * BodySink (body-sink.ts) chosen by the response headers.
 *
 * Callbacks of an earlier send are ignored once a resend has started (`attempt`). The per-chunk
 * path is SendHandler's onResponseData → BodySink.data: one call, nothing allocated.
 */
import type { Dispatcher } from 'undici';
import { monoMs } from '../clock.js';
import type { ClientErrorCode, RequestEnd, RequestTimeline, StreamEnding } from '../shapes/timeline.js';
import { errorBodySink, eventStreamSink, type BodySink } from './body-sink.js';
import { noteResponseEnd, unwatchSend, watchSend, type SendRecord } from './connections.js';
import { errorMessageFromBody, unrequestedEncoding, unrequestedEncodingMessage } from './error-body.js';
import { DEFAULT_MAX_ERROR_BODY_BYTES, type StreamRequestOptions } from './stream-options.js';
import { classifyTransportError, clientCaused, RequestDone, resetError } from './transport-errors.js';
import { retryAfterMs } from './retry-after.js';
import { redactUrlCredentials } from '../redact.js';

/**
 * A stale reused connection fails within this long of the send (the server had closed it: the
 * write meets its FIN or reset at once); a later failure without a response byte is not resent.
 */
export const STALE_FAILURE_WITHIN_MS = 1_000;

/** where the request goes: undici's origin and the full path, and the body serialised once */
export interface StreamTarget {
  origin: string;
  path: string;
  payload: string;
}

export class StreamRun {
  private controller: Dispatcher.DispatchController | undefined;
  private finished = false;
  /** what the body's bytes go to, set by the response headers */
  private sink: BodySink | undefined;
  /** the current send: 0 = first, 1 = the resend on a fresh connection */
  private attempt = 0;
  /** the current send's handler */
  private current: SendHandler | undefined;
  /** the current send as seen on its socket (undefined until its headers are written) */
  private sent: SendRecord | undefined;
  /** the connection of the current send closes after its response */
  private closing = false;
  /** the request headers, built once at the start */
  private headers!: Record<string, string>;
  private readonly recordSent: boolean;
  private readonly mayRetry: boolean;
  private readonly opts: StreamRequestOptions;
  private readonly timeline: RequestTimeline;
  private readonly target: StreamTarget;
  private readonly resolve: (t: RequestTimeline) => void;

  constructor(opts: StreamRequestOptions, timeline: RequestTimeline, target: StreamTarget, resolve: (t: RequestTimeline) => void) {
    this.opts = opts;
    this.timeline = timeline;
    this.target = target;
    this.resolve = resolve;
    this.recordSent = opts.recordSentHeaders !== false;
    this.mayRetry = this.recordSent && opts.retryStaleConnection !== false;
  }

  /** the send's headers on its socket (connections.ts watchSend; one function, so unwatchSend finds it) */
  private readonly onSent = (record: SendRecord): void => {
    this.sent = record;
    this.timeline.sentHeadersMs = record.atMs;
  };

  private readonly onAbort = (): void => {
    if (this.finished) return;
    this.finish({ kind: 'aborted', atMs: monoMs() }, true);
  };

  /** The request's one end: sets `end` (and `ending`), stops the body, resolves the timeline. */
  readonly finish = (end: RequestEnd, abortTransport: boolean, ending?: StreamEnding): void => {
    if (this.finished) return;
    this.finished = true;
    const { timeline, opts } = this;
    timeline.end = end;
    if (end.kind === 'done' && ending !== undefined) timeline.ending = ending;
    opts.signal?.removeEventListener('abort', this.onAbort);
    if (this.recordSent) unwatchSend(opts.id, this.onSent);
    // no event after the end may change the timeline (an abort from inside a callback ends it
    // while the rest of that socket read is still being parsed)
    this.sink?.stop();
    // after the current socket read: a response that read completed keeps its connection
    if (abortTransport && this.controller !== undefined) {
      const c = this.controller;
      queueMicrotask(() => {
        if (!c.aborted) c.abort(new RequestDone());
      });
    }
    try {
      if (end.kind === 'done' && this.closing) opts.onConnectionClosing?.();
      opts.onEnd?.(timeline);
    } finally {
      this.resolve(timeline);
    }
  };

  readonly fail = (code: ClientErrorCode, message: string, abortTransport: boolean, httpStatus?: number, retryAfter?: number): void => {
    const end: RequestEnd = { kind: 'error', atMs: monoMs(), code, message };
    if (httpStatus !== undefined) end.httpStatus = httpStatus;
    if (retryAfter !== undefined) end.retryAfterMs = retryAfter;
    this.finish(end, abortTransport);
  };

  /** Sends the request, unless its signal has already aborted it. */
  start(): void {
    const { opts, timeline } = this;
    const signal = opts.signal;
    if (signal?.aborted) {
      timeline.sendMs = monoMs();
      this.onAbort();
      return;
    }
    signal?.addEventListener('abort', this.onAbort, { once: true });
    this.headers = {
      ...opts.headers,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'x-request-id': opts.id,
    };
    this.dispatch();
  }

  /** no byte of a response arrived on the current send's socket (known only when its send was seen) */
  private noResponseByte(): boolean {
    const sent = this.sent;
    return this.timeline.headersMs === undefined && sent !== undefined && sent.socket.bytesRead === sent.bytesReadAtSend;
  }

  // an abort never gets here: its listener (onAbort) has already finished the request
  private onTransportError(err: unknown): void {
    if (this.finished) return;
    const { code, message } = classifyTransportError(err);
    if (code === 'socket' && this.noResponseByte() && !clientCaused(err)) {
      const sent = this.sent;
      if (this.mayRetry && this.attempt === 0 && sent?.reused === true && monoMs() - sent.atMs <= STALE_FAILURE_WITHIN_MS) {
        this.resend(message);
        return;
      }
      const again = this.attempt > 0 ? `, on a fresh connection too, after one resend (first: ${this.timeline.retriedAfter})` : '';
      this.fail('closed-before-response', `the server closed the connection before answering${again}: ${message}`, true);
      return;
    }
    this.fail(code, message, true);
  }

  /** one send; callbacks of an earlier send are ignored once a resend has started */
  private dispatch(): void {
    const { opts, timeline } = this;
    const reset = opts.connections?.closesAfterResponse === true;
    this.closing = reset;
    if (this.attempt > 0) timeline.connectionRetries = this.attempt;
    this.sent = undefined;
    const handler = this.handler(this.attempt);
    if (this.recordSent) watchSend(opts.id, this.onSent);
    timeline.sendMs = monoMs();
    try {
      opts.dispatcher.dispatch(
        {
          origin: this.target.origin,
          path: this.target.path,
          method: 'POST',
          headers: this.headers,
          body: this.target.payload,
          headersTimeout: opts.timeouts.headersMs,
          bodyTimeout: opts.timeouts.stallMs,
          ...(reset ? { reset: true } : {}),
        },
        handler,
      );
    } catch (err) {
      this.onTransportError(err);
    }
  }

  /** The undici handler of send number `mine` (SendHandler, below). */
  private handler(mine: number): Dispatcher.DispatchHandler {
    this.current = new SendHandler(this, mine);
    return this.current;
  }

  /** SendHandler's onRequestStart: the controller of the current send */
  requestStarted(mine: number, c: Dispatcher.DispatchController): void {
    if (mine !== this.attempt) return;
    this.controller = c;
    if (this.finished) c.abort(new RequestDone());
  }

  /** SendHandler's onResponseStart: the current send's headers choose its sink, which its handler then feeds */
  responseStarted(handler: SendHandler, c: Dispatcher.DispatchController, statusCode: number, resHeaders: Record<string, string | string[] | undefined>): void {
    if (handler.mine !== this.attempt) return;
    this.responseStart(c, statusCode, resHeaders);
    handler.sink = this.sink;
  }

  /** SendHandler's onResponseEnd */
  responseEnded(mine: number): void {
    if (mine === this.attempt) this.responseEnd();
  }

  /** SendHandler's onResponseError */
  responseFailed(mine: number, err: Error): void {
    if (mine !== this.attempt || err instanceof RequestDone) return;
    this.sink?.error();
    this.onTransportError(err);
  }

  /** The response headers: an error body's sink, a refusal, or the event stream's sink. */
  private responseStart(c: Dispatcher.DispatchController, statusCode: number, resHeaders: Record<string, string | string[] | undefined>): void {
    if (statusCode < 200) return; // 1xx informational: the real answer follows
    if (this.finished) {
      c.abort(new RequestDone());
      return;
    }
    const { opts, timeline } = this;
    timeline.headersMs = monoMs();
    const connection = resHeaders.connection;
    if (typeof connection === 'string' && /\bclose\b/i.test(connection)) this.closing = true;
    if (statusCode > 299) {
      // a 429 is its own kind: the server's rate limit, with when to come back (Retry-After)
      const wait = statusCode === 429 ? retryAfterMs(resHeaders['retry-after']) : undefined;
      this.sink = errorBodySink(opts.maxErrorBodyBytes ?? DEFAULT_MAX_ERROR_BODY_BYTES, (text, complete) => {
        const detail = errorMessageFromBody(text);
        // a body over the limit is cut off (the connection closes); a complete one leaves it reusable
        const location = statusCode < 400 ? resHeaders.location : undefined;
        if (location !== undefined) {
          // a redirect of the stream's POST is not followed (its hop would be in every TTFT): named, with the fix
          // secrets out of the Location, and its query string (tokens ride there) not shown
          const to = redactUrlCredentials(Array.isArray(location) ? location[0]! : location).replace(/\?.*$/, '?…');
          this.fail('http-status', `HTTP ${statusCode}: redirects to ${to}; the stream's POST is not sent on: set LLM_BENCH_URL to the server itself`, !complete, statusCode);
        } else if (statusCode === 429) {
          const after = wait !== undefined ? `; Retry-After ${(wait / 1000).toFixed(wait % 1000 === 0 ? 0 : 1)} s` : '';
          this.fail('rate-limited', `HTTP 429: rate limited${detail ? ` (${detail})` : ''}${after}`, !complete, statusCode, wait);
        } else {
          this.fail('http-status', `HTTP ${statusCode}${detail ? `: ${detail}` : ''}`, !complete, statusCode);
        }
      });
      return;
    }
    const encoding = unrequestedEncoding(resHeaders['content-encoding']);
    if (encoding !== undefined) {
      this.fail('protocol', unrequestedEncodingMessage(encoding), true);
      return;
    }
    const type = resHeaders['content-type'];
    this.sink = eventStreamSink(timeline, opts, typeof type === 'string' ? type : undefined, this.finish, this.fail);
  }

  /** The body ended (cleanly, as undici sees it). */
  private responseEnd(): void {
    const sent = this.sent;
    // undici completes a close-delimited body at a reset too (ECONNRESET with a response
    // that is not keep-alive: "all incoming data so far is a valid response"); the socket
    // says which it was, and a reset is a transport error, never a clean end
    const reset = resetError(sent?.socket);
    if (reset !== undefined && !this.finished) {
      this.sink?.error();
      this.onTransportError(reset);
      return;
    }
    noteResponseEnd(sent?.socket);
    if (!this.closing && sent !== undefined) this.opts.connections?.watchAfterResponse(this.opts.id, sent.socket);
    // the server ended this body by closing (close-delimited HTTP/1.0): no other request
    // goes on this connection, so a stream that ends here says so (onConnectionClosing)
    if (sent?.socket.readableEnded === true) this.closing = true;
    this.sink?.end();
    if (!this.finished) this.fail('no-done', 'response ended before its headers were handled', false);
  }

  /** the first send failed on a stale reused connection before any response byte: send once more */
  private resend(reason: string): void {
    const sent = this.sent;
    if (sent?.idleMs !== undefined) this.opts.connections?.noteCloseAfterResponse(this.opts.id, sent.idleMs);
    this.attempt++;
    this.timeline.retriedAfter = reason;
    delete this.timeline.sentHeadersMs;
    this.sink = undefined;
    // the earlier send's body, if any more comes, goes nowhere
    if (this.current !== undefined) this.current.sink = undefined;
    this.controller = undefined;
    // undici is still unwinding the dead socket: send from a fresh turn of the event loop, on the
    // fresh connection the dispatcher opens for it
    setImmediate(() => {
      if (!this.finished) this.dispatch();
    });
  }
}

/**
 * The undici handler of one send of a StreamRun. A body's bytes go straight to `sink`, which the
 * run sets when this send's response headers choose one (and clears when a resend replaces this
 * send): a token event touches this object and the sink, not a closure and the run behind it (one
 * cold object less per event at 1,024 streams).
 */
class SendHandler implements Dispatcher.DispatchHandler {
  /** where this send's body goes; undefined before its headers and after a resend replaced it */
  sink: BodySink | undefined = undefined;

  constructor(
    private readonly run: StreamRun,
    /** the send's number in its run */
    readonly mine: number,
  ) {}

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.run.requestStarted(this.mine, c);
  }

  onResponseStart(c: Dispatcher.DispatchController, statusCode: number, resHeaders: Record<string, string | string[] | undefined>): void {
    this.run.responseStarted(this, c, statusCode, resHeaders);
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.sink?.data(chunk);
  }

  onResponseEnd(): void {
    this.run.responseEnded(this.mine);
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.run.responseFailed(this.mine, err);
  }
}
