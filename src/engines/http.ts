/**
 * Small JSON/text helpers for control-plane calls (probe, metrics, tokenize) over `undici.request`.
 * Not for the measured load: the streaming client has its own connections. One shared Agent with
 * modest limits; every call has a timeout. The API key is sent as a Bearer header and never appears
 * in a thrown message.
 */
import { monoMs } from '../clock.js';
import { DEFAULTS } from '../config/defaults.js';
import { SpeedMatrixError } from '../errors.js';
import { redactUrlCredentials, redactValues } from '../redact.js';
import { Agent, request } from 'undici';
import type { HttpTarget } from '../shapes/engine.js';
import { tlsProblem } from '../client/tls.js';
import { unrequestedEncoding } from '../client/error-body.js';

/** Default limit for one control-plane call (headers and body together). */
export const DEFAULT_CONTROL_TIMEOUT_MS = 10_000;
/** Connections per origin for control-plane calls. */
export const CONTROL_CONNECTIONS_PER_ORIGIN = 4;

let sharedAgent: Agent | undefined;

/** The Agent all control-plane calls share (created on first use). */
export function controlAgent(): Agent {
  sharedAgent ??= new Agent({
    connections: CONTROL_CONNECTIONS_PER_ORIGIN,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 10_000,
    connectTimeout: DEFAULT_CONTROL_TIMEOUT_MS,
  });
  return sharedAgent;
}

/** Close the shared Agent (tests, process end). A later call creates a new one. */
export async function closeControlAgent(): Promise<void> {
  const agent = sharedAgent;
  sharedAgent = undefined;
  if (agent) await agent.close();
}

export interface HttpCallOptions {
  /** whole-call limit in ms; default DEFAULT_CONTROL_TIMEOUT_MS */
  timeoutMs?: number;
  /** extra request headers */
  headers?: Record<string, string>;
  /** outside cancellation (test timeout, Ctrl-C) */
  signal?: AbortSignal;
  /**
   * send `Connection: close` and drop the connection after the answer: for thread-per-connection
   * servers (llama.cpp's HTTP server has n_parallel + 2 threads), where an idle kept-alive control
   * connection holds a thread that a load request then waits for
   */
  closeConnection?: boolean;
}

export interface HttpResult {
  status: number;
  /** the body as text (always present; '' when empty) */
  text: string;
  /** the body parsed as JSON when it parses; undefined otherwise */
  json?: unknown;
  /** content-type header, lowercased, when sent */
  contentType?: string;
  /** content-encoding header, lowercased, when sent and not identity (we never ask for one) */
  contentEncoding?: string;
  /** a redirect's Location header, as sent (control calls follow none) */
  location?: string;
}

/** A control-plane call that got no HTTP response (connect refused, timeout, reset). */
/** code: 'timeout' when our limit fired, 'aborted' for outside cancellation, else 'transport' */
/** code 'tls': the server's certificate was refused (tls.ts); a setup error, never retried */
export class HttpCallError extends SpeedMatrixError<'timeout' | 'aborted' | 'transport' | 'tls'> {
  override name = 'HttpCallError';
  constructor(message: string, code: 'timeout' | 'aborted' | 'transport' | 'tls') {
    super(code, message);
  }
}

/**
 * Remove the target's secrets from a text before it can surface in an error: the API key, and the
 * user-info of the URL (`http://user:password@host`: the pattern and the password itself).
 */
export function redactTarget(text: string, target: HttpTarget): string {
  let password: string | undefined;
  try {
    password = decodeURIComponent(new URL(target.baseUrl).password) || undefined;
  } catch {
    password = undefined;
  }
  // the password first: a raw "@" in it would end the user-info pattern early
  return redactUrlCredentials(redactValues(text, [target.apiKey, password]));
}

function joinUrl(baseUrl: string, path: string): string {
  const base = baseUrl.endsWith('/') ? baseUrl.slice(0, -1) : baseUrl;
  return path.startsWith('/') ? base + path : `${base}/${path}`;
}

/** A status that refuses the request's API key (or its absence): no later try would change it. */
export function refusesKey(status: number | undefined): boolean {
  return status === 401 || status === 403;
}

/**
 * The server (or a gateway in front of it) says it is not ready: 502, 503 or 504, as llama.cpp
 * answers every path with 503 "Loading model" while it loads its model, and a gateway while its
 * upstream is not up yet. Setup waits for it (LLM_BENCH_RETRY_S), as for a server that does not answer.
 */
export function notReady(status: number | undefined): boolean {
  return status === 502 || status === 503 || status === 504;
}

/** What to do when setup's calls were still answered {@link notReady} after LLM_BENCH_RETRY_S. */
export const NOT_READY_FIX =
  'A server loading its model answers so until it is ready, and so does a gateway whose upstream is not up. ' +
  'The run waits for it up to LLM_BENCH_RETRY_S (default 30 s): raise it for a model that loads longer, or start the run once the server\'s health endpoint answers 200. ' +
  'If it stays so, check the server\'s log (or the gateway\'s upstream).';

/**
 * What to do when the server refused the request with `status` (401 or 403): whether a key was
 * sent picks the fix, and a 403 says what else forbids (a key without access to this model or
 * endpoint, a gateway's allow-list); the key itself is never named.
 */
export function apiKeyFix(keySent: boolean, status: number): string {
  if (!keySent) return 'No API key was sent: set LLM_BENCH_API_KEY (target.apiKey in a suite file) to a key the server accepts (it is sent as Authorization: Bearer).';
  if (status === 403) {
    return (
      'The server forbade the request with the API key sent (LLM_BENCH_API_KEY, or target.apiKey in a suite file, as Authorization: Bearer): ' +
      'the key may lack access to this model or endpoint, or a gateway may block this client.'
    );
  }
  return 'The API key sent (LLM_BENCH_API_KEY, or target.apiKey in a suite file, as Authorization: Bearer) was refused: check it is a key this server accepts, and that it takes the key in that header.';
}

/** One HTTP call to `target.baseUrl + path`; resolves for any HTTP status, throws HttpCallError otherwise. */
export async function httpCall(
  target: HttpTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  options: HttpCallOptions = {},
): Promise<HttpResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONTROL_TIMEOUT_MS;
  const url = joinUrl(target.baseUrl, path);
  const headers: Record<string, string> = { accept: 'application/json, text/plain;q=0.9, */*;q=0.5', ...options.headers };
  if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
  let payload: string | undefined;
  if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] = 'application/json';
  }
  const timeoutSignal = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeoutSignal, options.signal]) : timeoutSignal;
  try {
    const res = await request(url, {
      method,
      headers,
      body: payload,
      signal,
      dispatcher: controlAgent(),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(options.closeConnection ? { reset: true } : {}),
    });
    const text = await res.body.text();
    const ct = res.headers['content-type'];
    const contentType = (Array.isArray(ct) ? ct[0] : ct)?.toLowerCase();
    const result: HttpResult = { status: res.statusCode, text };
    if (contentType !== undefined) result.contentType = contentType;
    const contentEncoding = unrequestedEncoding(res.headers['content-encoding']);
    if (contentEncoding !== undefined) result.contentEncoding = contentEncoding;
    const location = res.headers.location;
    if (res.statusCode >= 300 && res.statusCode < 400 && location !== undefined) result.location = Array.isArray(location) ? location[0] : location;
    const trimmed = text.trimStart();
    if (trimmed.startsWith('{') || trimmed.startsWith('[') || contentType?.includes('json')) {
      try {
        result.json = JSON.parse(text);
      } catch {
        // not JSON after all; text stays
      }
    }
    return result;
  } catch (err) {
    const tls = tlsProblem(err);
    if (tls !== undefined) throw new HttpCallError(redactTarget(`${method} ${url} failed: ${tls}`, target), 'tls');
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    const code = timeoutSignal.aborted ? 'timeout' : options.signal?.aborted ? 'aborted' : 'transport';
    const what = code === 'timeout' ? `no complete answer within ${timeoutMs} ms` : reason;
    throw new HttpCallError(redactTarget(`${method} ${url} failed: ${what}`, target), code);
  }
}

export function getJson(target: HttpTarget, path: string, options?: HttpCallOptions): Promise<HttpResult> {
  return httpCall(target, 'GET', path, undefined, options);
}

export function postJson(target: HttpTarget, path: string, body: unknown, options?: HttpCallOptions): Promise<HttpResult> {
  return httpCall(target, 'POST', path, body, options);
}

/** Like getJson/postJson but resolves undefined instead of throwing when no response came back. */
export async function tryCall(
  target: HttpTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  options?: HttpCallOptions,
): Promise<HttpResult | undefined> {
  try {
    return await httpCall(target, method, path, body, options);
  } catch (err) {
    if (err instanceof HttpCallError) return undefined;
    throw err;
  }
}

/**
 * A GET whose time is the midpoint of the call (a metrics scrape: the server's counters were read
 * somewhere between send and answer); `result` is undefined when no answer came.
 */
export async function timedGet(target: HttpTarget, path: string): Promise<{ result: HttpResult | undefined; atMs: number }> {
  const startMs = monoMs();
  const result = await tryCall(target, 'GET', path);
  return { result, atMs: (startMs + monoMs()) / 2 };
}

/**
 * The server could not be reached (connect refused, reset), or said it is not ready yet (a 502, 503
 * or 504 to the models list, openai.ts probeModels): worth trying again while it starts or restarts.
 */
export function isUnreachable(error: unknown): boolean {
  return (error instanceof HttpCallError && error.code === 'transport') || (error instanceof SpeedMatrixError && (error.code === 'unreachable' || error.code === 'not-ready'));
}

/**
 * Run `call` until it does not fail as unreachable, waiting 250 ms doubling to 4 s between tries
 * (or longer where the error carries the server's own `retryAfterMs`, a 429's Retry-After),
 * for at most `budgetMs` in all (default DEFAULTS.unreachableRetryMs); then its last error is thrown. Any other error is thrown at once.
 * `onRetry` hears about each wait (a progress line).
 */
export async function retryWhileUnreachable<T>(
  call: () => Promise<T>,
  options: { budgetMs?: number; onRetry?: (error: unknown, waitMs: number) => void; signal?: AbortSignal } = {},
): Promise<T> {
  const deadline = monoMs() + (options.budgetMs ?? DEFAULTS.unreachableRetryMs);
  for (let wait = 250; ; wait = Math.min(wait * 2, 4_000)) {
    try {
      return await call();
    } catch (error) {
      const left = deadline - monoMs();
      if (!isUnreachable(error) || left <= 0 || options.signal?.aborted) throw error;
      const asked = (error as { retryAfterMs?: unknown }).retryAfterMs;
      const ms = Math.min(typeof asked === 'number' ? Math.max(wait, asked) : wait, left);
      options.onRetry?.(error, ms);
      await sleepUnlessAborted(ms, options.signal);
      if (options.signal?.aborted) throw error;
    }
  }
}

function sleepUnlessAborted(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** True for a 2xx status. */
export function isOk(res: HttpResult | undefined): res is HttpResult {
  return res !== undefined && res.status >= 200 && res.status < 300;
}

/** A plain object, or undefined. */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** A finite number (numbers and numeric strings), or undefined. */
export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** A non-empty string, or undefined. */
export function asString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
