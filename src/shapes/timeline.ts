/**
 * What the streaming client records about one request. Times are `monoMs()` values
 * (see src/clock.ts). The client knows no engine: it is given a `decode` function by an
 * engine adapter that turns one SSE `data:` payload into a DecodedChunk.
 */
import type { ServerRequestTimings } from './engine.js';

/** Stable codes for why a request did not end normally. */
export type ClientErrorCode =
  | 'connect' // TCP connect failed or timed out
  | 'headers-timeout' // no response headers in time
  | 'stall' // no bytes for longer than the stall timeout
  | 'http-status' // non-2xx response
  | 'rate-limited' // HTTP 429: the server (or a gateway) refused the request for its rate limit
  | 'error-event' // the server sent an error object inside the stream
  | 'no-done' // the stream closed without its end marker ([DONE] or engine final chunk)
  | 'protocol' // unparseable chunk or otherwise malformed stream
  | 'closed-before-response' // the server closed (or reset) the connection before any response byte
  | 'socket'; // connection reset / other transport failure after the response began

export type RequestEnd =
  | { kind: 'done'; atMs: number }
  /** we aborted it (window end, test timeout); not a failure */
  | { kind: 'aborted'; atMs: number }
  | { kind: 'error'; atMs: number; code: ClientErrorCode; message: string; httpStatus?: number; retryAfterMs?: number };

/**
 * Where a request's token counts came from, best first (METHOD.md "Output tokens"):
 * `local-tokenizer` is the streamed text counted with `target.tokenizer` (LLM_BENCH_TOKENIZER).
 */
export type TokenSource = 'usage' | 'chunk-token-ids' | 'local-tokenizer' | 'chunks';

/** strength of a token source: chunks < local-tokenizer < chunk-token-ids < usage */
export const TOKEN_SOURCE_RANK: Readonly<Record<TokenSource, number>> = { chunks: 0, 'local-tokenizer': 1, 'chunk-token-ids': 2, usage: 3 };

/**
 * How a completed stream ended (client/stream.ts):
 * - 'done': `data: [DONE]` as a complete event;
 * - 'final-chunk': the engine's own final chunk, on a stream without [DONE] (endsWithDone false);
 * - 'unterminated-last': `data: [DONE]` without its blank line (and maybe without its line end),
 *   dispatched when the body ended cleanly: a server that writes `data: [DONE]` and closes;
 * - 'close-after-finish': no [DONE], but a chunk with a real finish reason came before the body
 *   ended cleanly (a close-delimited HTTP/1.0 body, or a framed one that ended normally).
 */
export type StreamEnding = 'done' | 'final-chunk' | 'close-after-finish' | 'unterminated-last';

export interface RequestTimeline {
  /** id we sent as X-Request-Id; the simulator keys its ground truth by it */
  id: string;
  /** when the request was handed to undici */
  sendMs: number;
  /** when the request headers were written to the socket (undici:client:sendHeaders), if seen */
  sentHeadersMs?: number;
  /** when response headers arrived */
  headersMs?: number;
  /** first chunk carrying non-empty content, reasoning or tool-call text */
  firstTokenMs?: number;
  /**
   * first chunk whose usage says a token was generated (completion_tokens > 0), text or not: the
   * prefill row's fallback when a reasoning parser swallows the only token of a max_tokens = 1
   * request (e.g. `<think>`), so no chunk carries text
   */
  firstOutputMs?: number;
  /**
   * Token-carrying chunks, parallel arrays: arrival time and tokens attributed to that chunk.
   * Role-only and usage-only chunks are not here (unless continuous usage attributes tokens).
   * Plain arrays while the request streams; the load runners compact a finished request's to
   * typed arrays (compact.ts: 10 B a chunk), so a long window holds every timing exactly in little
   * memory. Read them as ArrayLike (index and length).
   */
  chunkMs: number[] | Float64Array;
  chunkTokens: number[] | Uint16Array | Uint32Array;
  /**
   * parallel to chunkMs/chunkTokens: the text of each token-carrying chunk (content, reasoning or
   * tool-call text), kept only when the stream options say `keepText` (or give `recountTokens`)
   */
  chunkText?: string[];
  /** how chunkTokens were counted; the weakest source seen over the request */
  tokenSource: TokenSource;
  /**
   * the prompt tokens the workload built this request to have (WorkloadRequest.promptTokens: sized
   * with the server's tokenizer or a local one), set by the load runner; what the sent input
   * lengths fall back to where the server reports no usage (metrics/lengths.ts)
   */
  plannedPromptTokens?: number;
  /** the output cap the request asked for (its max_tokens), set by the load runner */
  askedMaxTokens?: number;
  /** final usage as reported by the server (last usage seen) */
  promptTokens?: number;
  completionTokens?: number;
  cachedTokens?: number;
  /** tokens that arrived as reasoning deltas (counted in chunkTokens too) */
  reasoningTokens: number;
  /** the server's own timings of this request, the last its chunks carried (llama.cpp `timings`) */
  serverTimings?: ServerRequestTimings;
  end?: RequestEnd;
  /** how the stream ended, set with an end of kind 'done' only (StreamEnding) */
  ending?: StreamEnding;
  /**
   * 1 when the request was sent once more on a fresh connection: its first send went on a reused
   * keep-alive connection that failed before any response byte (the server had closed it). Not a
   * failure; `sendMs` and `sentHeadersMs` are those of the resend, so TTFT starts there.
   */
  connectionRetries?: number;
  /** why the first send failed, when the request was resent */
  retriedAfter?: string;
}
