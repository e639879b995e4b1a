/**
 * The figures of one sustained-decode cell (METHOD.md "Figures of a cell"), from the timelines of
 * the cell's worker requests (scout excluded), the window and the server metrics samples.
 * Pure: no I/O, no clock. All times are monoMs() values.
 *
 * "Inside the window" means windowStartMs ≤ t ≤ windowEndMs (both ends included).
 */
import { TOKEN_SOURCE_RANK, type RequestTimeline, type TokenSource } from '../client/types.js';
import type { MetricsSample } from '../engines/types.js';
import { DEFAULTS } from '../config/defaults.js';
import { distribution, mean, median } from './stats.js';
import type { CellFigures } from './types.js';

/** server and client active-request counts disagree when they differ by more than this share */
export const ACTIVE_REQUESTS_DISAGREE_SHARE = 0.1;

export interface CellFiguresInput {
  /** the cell's worker requests (scout excluded), including those sent before the window */
  timelines: readonly RequestTimeline[];
  windowStartMs: number;
  windowEndMs: number;
  /** server metrics samples; only those inside the window are used */
  metricsSamples: readonly MetricsSample[];
  /**
   * where TTFT starts: 'send' (handed to undici; default, as METHOD.md) or 'sent-headers'
   * (request headers written to the socket, falling back to send time when not recorded)
   */
  ttftFrom?: 'send' | 'sent-headers';
  /**
   * stall detection: a fixed limit in ms (LLM_BENCH_STALL_S), or 'cell' for stallLimitMs's rule on
   * this cell's median time between tokens; absent = no stall detection (errors only)
   */
  stallLimit?: number | 'cell';
}

/**
 * Where the matrix starts TTFT: when the request's headers were written to the socket, so the
 * load generator's own queueing is not the server's TTFT (docs/method.md: TTFT). The accuracy
 * tests check this same start against the simulator's ground truth.
 */
export const MATRIX_TTFT_FROM = 'sent-headers' as const;

/**
 * Where a request's TTFT starts: when it was handed to undici ('send'), or when its headers were
 * written to the socket ('sent-headers', falling back to the send time where that was not recorded).
 */
export function ttftStartMs(t: RequestTimeline, from: 'send' | 'sent-headers'): number {
  return from === 'sent-headers' ? (t.sentHeadersMs ?? t.sendMs) : t.sendMs;
}

/** the window's server load: mean running (and how it was found) and max waiting */
export interface SamplesLoad {
  meanRunning?: number;
  maxWaiting?: number;
  /**
   * 'decode-counters': mean busy slots per decode call between the first and the last sample
   * (llama.cpp); 'samples': the mean of the samples' running counts
   */
  runningFrom?: 'decode-counters' | 'samples';
  /** samples with a running count (the resolution of a 'samples' mean) */
  runningSamples: number;
}

/** the decode-counter mean is used only when its rounding error is at most this many requests */
export const DECODE_COUNTER_MAX_ERROR = 0.02;

/**
 * Mean busy slots per decode call between two samples with llama.cpp's decode counters:
 * (B₂·D₂ − B₁·D₁) / (D₂ − D₁), where D = n_decode_total and B = n_busy_slots_per_decode, its
 * life-long mean. Both are printed to 6 significant digits; undefined when no decode call happened
 * between them or when the rounding error exceeds DECODE_COUNTER_MAX_ERROR. A mean per decode call,
 * not per unit of time: a call with fewer busy slots is a little shorter, so it leans low.
 *
 * It does not depend on when each scrape was served. A scrape's own timing can correlate with the
 * load: a client whose event loop wakes late serves its timer right after a stream ended and its
 * worker's next request went out, before the server admitted it (measured on a 4-slot llama.cpp,
 * 2K/4: /slots read in-cell gave 3.47 busy on average while an outside poller saw 4 in 97 %).
 */
export function decodeCounterRunning(first: MetricsSample, last: MetricsSample): number | undefined {
  const d1 = first.decodeCallsTotal;
  const d2 = last.decodeCallsTotal;
  const b1 = first.busySlotsPerDecode;
  const b2 = last.busySlotsPerDecode;
  if (d1 === undefined || d2 === undefined || b1 === undefined || b2 === undefined || !(d2 > d1)) return undefined;
  const mean = (b2 * d2 - b1 * d1) / (d2 - d1);
  // B and D are each printed to 6 significant digits (D from 10⁶ calls on): B·D is off by up to
  // 5·10⁻⁶·B·D through B, and the mean by |B − mean|·5·10⁻⁶·D through D, at each end
  const error = (5e-6 * (b1 * d1 + b2 * d2 + Math.abs(b1 - mean) * d1 + Math.abs(b2 - mean) * d2)) / (d2 - d1);
  return error <= DECODE_COUNTER_MAX_ERROR && Number.isFinite(mean) ? Math.max(0, mean) : undefined;
}

/**
 * The server load over metrics samples: mean running from the decode counters of the first and
 * last sample where they exist (decodeCounterRunning), else the mean of the finite `running`
 * values; max of the finite `waiting` values; undefined where no sample has the field.
 */
export function samplesLoad(samples: readonly MetricsSample[]): SamplesLoad {
  const running: number[] = [];
  let maxWaiting: number | undefined;
  const counted: MetricsSample[] = [];
  for (const s of samples) {
    if (s.running !== undefined && Number.isFinite(s.running)) running.push(s.running);
    if (s.waiting !== undefined && Number.isFinite(s.waiting)) maxWaiting = maxWaiting === undefined ? s.waiting : Math.max(maxWaiting, s.waiting);
    if (s.decodeCallsTotal !== undefined && s.busySlotsPerDecode !== undefined) counted.push(s);
  }
  const out: SamplesLoad = { runningSamples: running.length };
  counted.sort((a, b) => a.atMs - b.atMs);
  const fromCounters = counted.length >= 2 ? decodeCounterRunning(counted[0]!, counted[counted.length - 1]!) : undefined;
  const m = fromCounters ?? mean(running);
  if (m !== undefined) {
    out.meanRunning = m;
    out.runningFrom = fromCounters !== undefined ? 'decode-counters' : 'samples';
  }
  if (maxWaiting !== undefined) out.maxWaiting = maxWaiting;
  return out;
}

/** the weakest of the token sources (chunks < chunk-token-ids < usage); 'chunks' when none */
export function weakestTokenSource(sources: Iterable<TokenSource>): TokenSource {
  let weakest: TokenSource | undefined;
  for (const s of sources) if (weakest === undefined || TOKEN_SOURCE_RANK[s] < TOKEN_SOURCE_RANK[weakest]) weakest = s;
  return weakest ?? 'chunks';
}

/**
 * A request's mean time between tokens inside the window, in ms, or undefined.
 *
 * Uses only its token-carrying chunks inside the window; needs at least 2 of them and a positive
 * time span between the first and the last. Value = (last chunk time − first chunk time) /
 * (tokens in the window − tokens of the first chunk in the window).
 *
 * Deliberate departure from METHOD.md's (last − first) / (tokens − 1): with multi-token chunks
 * (k tokens per chunk: speculative decoding, stream intervals) all k tokens of the first chunk
 * arrive at its time, so the span is covered by the tokens after the first chunk only. With one
 * token per chunk both formulas agree.
 */
export function requestTimeBetweenTokensMs(t: RequestTimeline, windowStartMs: number, windowEndMs: number): number | undefined {
  let firstMs: number | undefined;
  let firstTokens = 0;
  let lastMs = 0;
  let tokens = 0;
  let chunks = 0;
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  for (let i = 0; i < n; i++) {
    const at = t.chunkMs[i]!;
    const k = t.chunkTokens[i]!;
    if (k <= 0 || at < windowStartMs || at > windowEndMs) continue;
    if (firstMs === undefined) {
      firstMs = at;
      firstTokens = k;
    }
    lastMs = at;
    tokens += k;
    chunks++;
  }
  if (firstMs === undefined || chunks < 2) return undefined;
  const spanMs = lastMs - firstMs;
  const after = tokens - firstTokens;
  if (!(spanMs > 0) || after <= 0) return undefined;
  return spanMs / after;
}

/** tokens of a request whose chunk arrival time is inside the window */
export function tokensInWindow(t: RequestTimeline, windowStartMs: number, windowEndMs: number): number {
  let sum = 0;
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  for (let i = 0; i < n; i++) {
    const at = t.chunkMs[i]!;
    if (at >= windowStartMs && at <= windowEndMs) sum += t.chunkTokens[i]!;
  }
  return sum;
}

/**
 * Time-weighted mean over the window of the number of requests in flight: a request is in flight
 * for sendMs ≤ t < end.atMs, or to the window's end when it has no end.
 */
export function clientActiveRequests(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number): number {
  const windowMs = windowEndMs - windowStartMs;
  let busyMs = 0;
  for (const t of timelines) {
    const from = Math.max(t.sendMs, windowStartMs);
    const to = Math.min(t.end?.atMs ?? windowEndMs, windowEndMs);
    if (to > from) busyMs += to - from;
  }
  return busyMs / windowMs;
}

/** Failures of the cell up to the window's end, by code, with the first message. */
export interface ErrorSummary {
  count: number;
  byCode: Record<string, number>;
  firstMessage?: string;
}

/**
 * The stall limit of a cell: a request silent this long after its first token, inside the window,
 * has stalled. `configuredMs` (LLM_BENCH_STALL_S) when given; else max(5 s, 50 × the cell's median
 * time between tokens), at most the window (so a silence through a whole short window still counts).
 */
export function stallLimitMs(medianTbtMs: number | undefined, windowMs: number, configuredMs?: number): number {
  if (configuredMs !== undefined) return configuredMs;
  const fromTbt = medianTbtMs !== undefined ? DEFAULTS.stallLimitTbtMultiple * medianTbtMs : 0;
  return Math.min(windowMs, Math.max(DEFAULTS.stallLimitMinMs, fromTbt));
}

/**
 * A request's longest silence inside the window after its first token: the gaps between its
 * token chunks, and from its last chunk to its end (or the window's end), each clipped to the window.
 * Silence before the first token is waiting (queue, prefill), not a stall. Undefined without a first
 * token by the window's end.
 */
export function longestSilenceMs(t: RequestTimeline, windowStartMs: number, windowEndMs: number): number | undefined {
  const first = t.firstTokenMs;
  if (first === undefined || first > windowEndMs) return undefined;
  const clipped = (a: number, b: number): number => Math.max(0, Math.min(b, windowEndMs) - Math.max(a, windowStartMs));
  let longest = 0;
  let last = first;
  for (const at of t.chunkMs) {
    if (at <= last) continue;
    longest = Math.max(longest, clipped(last, at));
    last = at;
  }
  const end = t.end?.atMs ?? windowEndMs;
  return Math.max(longest, clipped(last, end));
}

/**
 * The cell's failed requests (METHOD.md "Failed requests"): requests that ended in an error up to
 * the window's end, and requests that stalled (longestSilenceMs ≥ stallLimit) without ending in
 * one, counted under code `stall` with a message saying how long. One summary, used for the figure
 * and for the Errors evidence alike.
 */
export function cellFailures(
  timelines: readonly RequestTimeline[],
  windowStartMs: number,
  windowEndMs: number,
  stallLimit?: number,
): ErrorSummary {
  const summary: ErrorSummary = { count: 0, byCode: {} };
  let firstAt = Infinity;
  const add = (code: string, atMs: number, message: string): void => {
    summary.count++;
    summary.byCode[code] = (summary.byCode[code] ?? 0) + 1;
    if (atMs < firstAt) {
      firstAt = atMs;
      summary.firstMessage = message;
    }
  };
  for (const t of timelines) {
    const failure = requestFailure(t, windowStartMs, windowEndMs, stallLimit);
    if (failure) add(failure.code, failure.atMs, failure.message);
  }
  return summary;
}

/**
 * How one request failed by the window's end, if it did: an error, or (with a stall limit) a
 * silence of at least that long after its first token inside the window. The rule behind the
 * cell's failed requests, and behind goodput (src/slo/goodput.ts: a failed request never meets).
 */
export function requestFailure(
  t: RequestTimeline,
  windowStartMs: number,
  windowEndMs: number,
  stallLimit?: number,
): { code: string; atMs: number; message: string } | undefined {
  const e = t.end;
  if (e?.kind === 'error' && e.atMs <= windowEndMs) return { code: e.code, atMs: e.atMs, message: e.message };
  if (stallLimit === undefined) return undefined;
  const silence = longestSilenceMs(t, windowStartMs, windowEndMs);
  if (silence === undefined || silence < stallLimit) return undefined;
  return {
    code: 'stall',
    atMs: t.firstTokenMs ?? windowStartMs,
    message: `stalled: no token for ${(silence / 1000).toFixed(1)} s after the first, inside the window (stall limit ${(stallLimit / 1000).toFixed(1)} s)`,
  };
}

/** Requests that ended in an error up to `windowEndMs` (no stall detection): cellFailures without a limit. */
export function errorSummary(timelines: readonly RequestTimeline[], windowEndMs: number): ErrorSummary {
  return cellFailures(timelines, -Infinity, windowEndMs);
}

/** Requests resent once on a fresh connection after a stale reused one (client/stream.ts), with the first reason. */
export function connectionRetrySummary(timelines: readonly RequestTimeline[]): { count: number; firstReason?: string } {
  const out: { count: number; firstReason?: string } = { count: 0 };
  let firstAt = Infinity;
  for (const t of timelines) {
    if ((t.connectionRetries ?? 0) === 0) continue;
    out.count++;
    if (t.sendMs < firstAt && t.retriedAfter !== undefined) {
      firstAt = t.sendMs;
      out.firstReason = t.retriedAfter;
    }
  }
  return out;
}

/** Completed requests of a cell by how their streams ended (StreamEnding). */
export interface StreamEndings {
  /** ended by `data: [DONE]` as a complete event, or by the engine's final chunk */
  done: number;
  /** no [DONE]: the body ended cleanly after a chunk with a real finish reason */
  closeAfterFinish: number;
  /** `data: [DONE]` without its blank line, dispatched when the body ended */
  unterminatedLast: number;
}

/**
 * Completed requests (end kind 'done', ended inside the window, as completedRequests counts them)
 * by ending: 'done' and 'final-chunk' (and a timeline without an ending) count as done.
 */
export function streamEndings(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number): StreamEndings {
  const out: StreamEndings = { done: 0, closeAfterFinish: 0, unterminatedLast: 0 };
  for (const t of timelines) {
    if (t.end?.kind !== 'done' || t.end.atMs < windowStartMs || t.end.atMs > windowEndMs) continue;
    if (t.ending === 'close-after-finish') out.closeAfterFinish++;
    else if (t.ending === 'unterminated-last') out.unterminatedLast++;
    else out.done++;
  }
  return out;
}

/**
 * Server and client active counts disagree when |server − client| > 10 % × max(client, 1): the
 * client's own in-flight count is the reference (it is exact), and max(·, 1) keeps the bound at
 * 0.1 request for cells with about one request in flight.
 */
export function activeRequestsDisagree(server: number, client: number): boolean {
  return Math.abs(server - client) > ACTIVE_REQUESTS_DISAGREE_SHARE * Math.max(client, 1);
}

export function computeCellFigures(input: CellFiguresInput): CellFigures {
  const { timelines, windowStartMs: ws, windowEndMs: we } = input;
  if (!Number.isFinite(ws) || !Number.isFinite(we) || !(we > ws)) {
    throw new RangeError(`computeCellFigures: windowEndMs (${we}) must be finite and after windowStartMs (${ws})`);
  }
  const measuredForS = (we - ws) / 1000;

  let outputTokens = 0;
  const tbtValues: number[] = [];
  const perRequestTps: number[] = [];
  const ttftValues: number[] = [];
  const promptTokens: number[] = [];
  const sources: TokenSource[] = [];
  let completedRequests = 0;

  for (const t of timelines) {
    outputTokens += tokensInWindow(t, ws, we);
    const tbt = requestTimeBetweenTokensMs(t, ws, we);
    if (tbt !== undefined) {
      tbtValues.push(tbt);
      perRequestTps.push(1000 / tbt);
    }
    if (t.firstTokenMs !== undefined && t.firstTokenMs <= we) {
      ttftValues.push(t.firstTokenMs - ttftStartMs(t, input.ttftFrom ?? 'send'));
    }
    if (t.promptTokens !== undefined) promptTokens.push(t.promptTokens);
    if (t.chunkTokens.length > 0) sources.push(t.tokenSource);
    if (t.end?.kind === 'done' && t.end.atMs >= ws && t.end.atMs <= we) completedRequests++;
  }

  const inWindow = input.metricsSamples.filter((s) => s.atMs >= ws && s.atMs <= we);
  const { meanRunning: server, maxWaiting } = samplesLoad(inWindow);
  const client = clientActiveRequests(timelines, ws, we);

  const figures: CellFigures = {
    outputTokens,
    tokenSource: sources.length > 0 ? weakestTokenSource(sources) : weakestTokenSource(timelines.map((t) => t.tokenSource)),
    measuredForS,
    totalTokensPerSecond: outputTokens / measuredForS,
    clientActiveRequests: client,
    averageActiveRequests: server ?? client,
    averageActiveRequestsSource: server !== undefined ? 'server' : 'client',
    activeRequestsDisagree: server !== undefined && activeRequestsDisagree(server, client),
    completedRequests,
    failedRequests: 0,
    startedRequests: timelines.length,
  };
  const perRequest = median(perRequestTps);
  if (perRequest !== undefined) figures.perRequestTokensPerSecond = perRequest;
  const tbt = distribution(tbtValues);
  const limit = input.stallLimit === 'cell' ? stallLimitMs(tbt?.median, we - ws) : input.stallLimit;
  figures.failedRequests = cellFailures(timelines, ws, we, limit).count;
  if (limit !== undefined) figures.stallLimitMs = limit;
  if (tbt !== undefined) figures.timeBetweenTokensMs = tbt;
  const ttft = distribution(ttftValues);
  if (ttft !== undefined) figures.ttftMs = ttft;
  if (server !== undefined) figures.serverActiveRequests = server;
  if (maxWaiting !== undefined) figures.maxWaitingRequests = maxWaiting;
  const prompt = median(promptTokens);
  if (prompt !== undefined) figures.promptTokens = prompt;
  return figures;
}
