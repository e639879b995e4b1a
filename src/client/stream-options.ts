/**
 * The options of one streamed request (streamRequest, stream.ts) and their check: only invalid
 * options make streamRequest reject, with a ClientError `invalid-option`.
 */
import type { Dispatcher } from 'undici';
import type { ChunkScan, DecodedChunk } from '../shapes/engine.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { ConnectionPolicy } from './connections.js';
import { ClientError } from './errors.js';

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
  /**
   * the engine adapter's scanChunk: a token event's payload read from its bytes, JSON.parse and
   * `decode` only where it returns undefined; asked for text only with keepText or recountTokens
   */
  scan?: ChunkScan;
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

/** Throws ClientError `invalid-option` naming the field and its rule. */
export function validateStreamOptions(opts: StreamRequestOptions): void {
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
