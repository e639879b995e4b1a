/**
 * Where a response body goes once its headers are known (BodySink): the event stream of a 2xx
 * answer, read by the SSE parser and decoded chunk by chunk, with the stream's ending rules (see
 * stream.ts, "Endings"): `data: [DONE]`, the engine's final chunk, a clean close after a finish
 * reason; or the first bytes of an error body, for its message. The per-chunk hot path is
 * `data` → SseParser.push → the adapter's scan of the event's bytes (no string, no JSON.parse) →
 * TokenCounter.add; an event the scan does not read goes the long way: its text, JSON.parse,
 * decode.
 */
import { arrivalNow, type ArrivalReader } from './arrival-clock.js';
import type { DecodedChunk } from '../shapes/engine.js';
import type { ClientErrorCode, RequestEnd, RequestTimeline, StreamEnding } from '../shapes/timeline.js';
import { DEFAULT_MAX_EVENT_BYTES, SseParser, type SseEndDispatch } from './sse.js';
import type { StreamRequestOptions } from './stream-options.js';
import { TokenCounter } from './token-count.js';
import { errorText, truncate } from './transport-errors.js';

export type Finish = (end: RequestEnd, abortTransport: boolean, ending?: StreamEnding) => void;
export type Fail = (code: ClientErrorCode, message: string, abortTransport: boolean) => void;

/** where the response body goes once its headers are known */
export interface BodySink {
  data(chunk: Buffer): void;
  /** the body ended normally */
  end(): void;
  /** the transport failed; the caller reports the failure */
  error(): void;
  /** the request has ended: ignore everything from now on */
  stop(): void;
}

export function eventStreamSink(
  timeline: RequestTimeline,
  opts: StreamRequestOptions,
  contentType: string | undefined,
  finish: Finish,
  fail: Fail,
): BodySink {
  return new EventStreamSink(timeline, opts, contentType, finish, fail);
}

/** A 2xx event stream: SSE events, each read by the adapter (its scan of the bytes, or JSON.parse and decode), counted, and the ending rules. */
class EventStreamSink implements BodySink, ArrivalReader {
  /** the sink is its own arrival reader (arrival-clock.ts): one object less a token event touches */
  turn = -1; // no read yet, as arrivalReader() starts
  private readonly counter: TokenCounter;
  private readonly parser: SseParser;
  /** the options a token event reads, held here: the options object stays out of the per-event path */
  private readonly scan: StreamRequestOptions['scan'];
  private readonly onFirstToken: StreamRequestOptions['onFirstToken'];
  private readonly endsWithDone: boolean;
  /** the arrival time of the socket read being parsed */
  private arrivalMs = 0;
  private stopped = false;
  private firstTokenSeen = false;
  /** a chunk with a real finish reason has arrived */
  private finishSeen = false;
  /** the adapter's scan is asked for each chunk's text */
  private readonly wantText: boolean;

  constructor(
    private readonly timeline: RequestTimeline,
    private readonly opts: StreamRequestOptions,
    private readonly contentType: string | undefined,
    private readonly finish: Finish,
    private readonly fail: Fail,
  ) {
    this.counter = new TokenCounter(timeline, {
      ...(opts.keepText !== undefined ? { keepText: opts.keepText } : {}),
      ...(opts.recountTokens ? { recountTokens: opts.recountTokens } : {}),
    });
    this.wantText = opts.keepText === true || opts.recountTokens !== undefined;
    this.scan = opts.scan;
    this.onFirstToken = opts.onFirstToken;
    this.endsWithDone = opts.endsWithDone;
    this.parser = new SseParser(this.onEvent, {
      maxEventBytes: opts.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES,
      ...(opts.scan !== undefined ? { onDataBytes: this.onEventBytes } : {}),
    });
  }

  data(chunk: Buffer): void {
    this.arrivalMs = arrivalNow(this);
    if (this.stopped) return;
    try {
      this.parser.push(chunk);
    } catch (err) {
      this.stopped = true;
      this.fail('protocol', errorText(err), true);
    }
  }

  end(): void {
    if (this.stopped) return;
    this.arrivalMs = arrivalNow(this);
    try {
      // a clean end: a last event without its blank line (or its line end) is dispatched
      this.parser.end('clean');
    } catch (err) {
      this.stopped = true;
      this.fail('protocol', errorText(err), false);
      return;
    }
    if (this.stopped) return;
    this.stopped = true;
    if (this.finishSeen) {
      this.finish({ kind: 'done', atMs: this.arrivalMs }, false, 'close-after-finish');
      return;
    }
    const type = this.contentType;
    const typeNote = type !== undefined && !type.includes('text/event-stream') ? ` (content-type ${type})` : '';
    const marker = this.opts.endsWithDone ? 'data: [DONE]' : "the engine's final chunk";
    this.fail('no-done', `stream closed without ${marker}, and no chunk had a finish_reason${typeNote}`, false);
  }

  error(): void {
    this.stopped = true;
    // nothing pending is dispatched after a transport failure
    this.parser.end('error');
  }

  stop(): void {
    this.stopped = true;
    // the request has ended (any way): recount its tokens from the text, when asked to
    try {
      this.counter.complete();
    } catch {
      // a failing recount keeps the chunk counts
    }
  }

  /** a token event read from its bytes by the adapter's scan; false: the parser makes its text for onEvent */
  private readonly onEventBytes = (bytes: Buffer, start: number, end: number): boolean => {
    if (this.stopped) return true;
    const decoded = this.scan!(bytes, start, end, this.wantText);
    if (decoded === undefined) return false;
    this.take(decoded);
    return true;
  };

  /** an event's text: [DONE], or JSON.parse and the adapter's decode */
  private readonly onEvent = (data: string, atEnd?: SseEndDispatch): void => {
    if (this.stopped) return;
    if (data === '[DONE]') {
      this.stopped = true;
      // keep reading to the end of the body, so the connection is reused
      this.finish({ kind: 'done', atMs: this.arrivalMs }, false, atEnd !== undefined ? 'unterminated-last' : 'done');
      return;
    }
    let decoded: DecodedChunk;
    try {
      decoded = this.opts.decode(JSON.parse(data));
    } catch (err) {
      this.stopped = true;
      if (atEnd?.unterminatedLine === true) {
        // the body stopped inside the last line: a stream cut off at the close, not a bad chunk
        this.fail('no-done', `stream closed in the middle of its last event (${errorText(err)}): ${truncate(data, 200)}`, false);
      } else {
        this.fail('protocol', `unparseable SSE data (${errorText(err)}): ${truncate(data, 200)}`, true);
      }
      return;
    }
    this.take(decoded);
  };

  /** one decoded chunk: an error event, or its tokens and the stream's end */
  private take(decoded: DecodedChunk): void {
    const timeline = this.timeline;
    if (decoded.error !== undefined) {
      this.stopped = true;
      const code = decoded.error.code !== undefined ? ` (code ${String(decoded.error.code)})` : '';
      this.fail('error-event', `error event in stream${code}: ${truncate(decoded.error.message, 500)}`, true);
      return;
    }
    this.counter.add(decoded, this.arrivalMs);
    if (decoded.serverTimings !== undefined) timeline.serverTimings = decoded.serverTimings;
    if (decoded.finishReason !== undefined) this.finishSeen = true;
    if (!this.firstTokenSeen && timeline.firstTokenMs !== undefined) {
      this.firstTokenSeen = true;
      this.onFirstToken?.(timeline);
    }
    if (decoded.final === true && !this.endsWithDone) {
      this.stopped = true;
      this.finish({ kind: 'done', atMs: this.arrivalMs }, false, 'final-chunk');
    }
  }
}

/** Collects up to maxBytes of an error body; `onText(text, complete)` once, at its end or at the limit. */
export function errorBodySink(maxBytes: number, onText: (text: string, complete: boolean) => void): BodySink {
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
