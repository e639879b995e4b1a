/**
 * Where a response body goes once its headers are known (BodySink): the event stream of a 2xx
 * answer, read by the SSE parser and decoded chunk by chunk, with the stream's ending rules (see
 * stream.ts, "Endings"): `data: [DONE]`, the engine's final chunk, a clean close after a finish
 * reason; or the first bytes of an error body, for its message. The per-chunk hot path is
 * `data` → SseParser.push → onEvent → decode → TokenCounter.add: no allocation of its own.
 */
import { arrivalNow, arrivalReader } from './arrival-clock.js';
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

  const reader = arrivalReader();
  return {
    data(chunk) {
      arrivalMs = arrivalNow(reader);
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
      arrivalMs = arrivalNow(reader);
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
