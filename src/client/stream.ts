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
 *
 * The parts: stream-options.ts (the options and their check), stream-run.ts (the sends, the
 * resend, the undici handler, the end), body-sink.ts (the body: SSE events, the ending rules, an
 * error body's message), transport-errors.ts (what a transport failure was).
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import { splitBaseUrl } from './base-url.js';
import { errorMessageFromBody } from './error-body.js';
import { ClientError } from './errors.js';
import { validateStreamOptions, type StreamRequestOptions } from './stream-options.js';
import { StreamRun } from './stream-run.js';

export { DEFAULT_MAX_ERROR_BODY_BYTES, type StreamRequestOptions, type StreamTimeouts } from './stream-options.js';
export { STALE_FAILURE_WITHIN_MS } from './stream-run.js';
export { classifyTransportError } from './transport-errors.js';
/** the server's error message from an error body (error-body.ts), for this module's callers */
export { errorMessageFromBody };

/**
 * Stream one request; resolves with its timeline, whatever happened.
 *
 * Transport: undici's `dispatch` with a handler, not `request`: body bytes come straight from
 * undici's HTTP parser to the SSE parser, without a Readable stream in between (perf/client-floor.ts
 * measures what that saves per event). The request's sends and its end are a StreamRun
 * (stream-run.ts); the body goes to a BodySink (body-sink.ts), which holds the ending rules.
 */
export async function streamRequest(opts: StreamRequestOptions): Promise<RequestTimeline> {
  validateStreamOptions(opts);
  // undici's dispatch takes an origin and drops any path on it: a base URL's path prefix (a
  // gateway's /api) goes in front of the request's path instead, whoever the caller is
  let base: { origin: string; pathPrefix: string };
  try {
    base = splitBaseUrl(opts.origin);
  } catch {
    throw new ClientError('invalid-option', `streamRequest origin: must be an absolute URL such as http://127.0.0.1:8000 (got ${JSON.stringify(opts.origin)})`);
  }
  const target = { origin: base.origin, path: base.pathPrefix + opts.path, payload: JSON.stringify(opts.body) };
  const timeline: RequestTimeline = {
    id: opts.id,
    sendMs: 0,
    chunkMs: [],
    chunkTokens: [],
    tokenSource: 'chunks',
    reasoningTokens: 0,
  };
  return new Promise<RequestTimeline>((resolve) => new StreamRun(opts, timeline, target, resolve).start());
}
