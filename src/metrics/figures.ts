/**
 * The figures of one sustained-decode cell (METHOD.md "Figures of a cell"), from the timelines of
 * the cell's worker requests (scout excluded), the window and the server metrics samples.
 * Pure: no I/O, no clock. All times are monoMs() values.
 *
 * "Inside the window" means windowStartMs ≤ t ≤ windowEndMs (both ends included).
 */
import { TOKEN_SOURCE_RANK, type RequestTimeline, type TokenSource } from '../shapes/timeline.js';
import type { MetricsSample } from '../shapes/engine.js';
import { DEFAULTS } from '../config/defaults.js';
import { distribution, mean, median } from './stats.js';
import type { CellFigures } from '../shapes/result.js';

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

/**
 * Where a cell's running figure came from, best first:
 * - 'decode-counters': llama.cpp's mean busy slots per decode call between the first and the last
 *   sample (`n_decode_total` × `n_busy_slots_per_decode`, decodeCounterRunning);
 * - 'samples': the mean of the server's running-requests metric over the samples (vLLM
 *   `num_requests_running`, SGLang `num_running_reqs`, llama.cpp `requests_processing`, …);
 * - 'slots': the mean of the busy slots that llama.cpp's `GET /slots` listed at each sample (its
 *   metrics have no running figure, or are off);
 * - 'client': no server figure at all; the client's own timelines (clientLoad) decide.
 */
export type RunningSource = 'decode-counters' | 'samples' | 'slots' | 'client';

/** the window's server load: mean running (and how it was found) and max waiting */
export interface SamplesLoad {
  meanRunning?: number;
  maxWaiting?: number;
  /** how meanRunning was found (never 'client' here); undefined with meanRunning */
  runningFrom?: Exclude<RunningSource, 'client'>;
  /** samples with a running count (the resolution of a 'samples' or 'slots' mean) */
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
 * values ('slots' when every one of them came from `/slots`, else 'samples'); max of the finite
 * `waiting` values; undefined where no sample has the field (a figure the server does not expose
 * is unknown, never 0).
 */
export function samplesLoad(samples: readonly MetricsSample[]): SamplesLoad {
  const running: number[] = [];
  let fromSlots = 0;
  let maxWaiting: number | undefined;
  const counted: MetricsSample[] = [];
  for (const s of samples) {
    if (s.running !== undefined && Number.isFinite(s.running)) {
      running.push(s.running);
      if (s.runningFrom === 'slots') fromSlots++;
    }
    if (s.waiting !== undefined && Number.isFinite(s.waiting)) maxWaiting = maxWaiting === undefined ? s.waiting : Math.max(maxWaiting, s.waiting);
    if (s.decodeCallsTotal !== undefined && s.busySlotsPerDecode !== undefined) counted.push(s);
  }
  const out: SamplesLoad = { runningSamples: running.length };
  counted.sort((a, b) => a.atMs - b.atMs);
  const fromCounters = counted.length >= 2 ? decodeCounterRunning(counted[0]!, counted[counted.length - 1]!) : undefined;
  const m = fromCounters ?? mean(running);
  if (m !== undefined) {
    out.meanRunning = m;
    out.runningFrom = fromCounters !== undefined ? 'decode-counters' : fromSlots === running.length ? 'slots' : 'samples';
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

/**
 * The client's own view of the server's load over the window, for servers that expose no running
 * or waiting figure (clientLoad). Time-weighted over [windowStartMs, windowEndMs].
 */
export interface ClientLoad {
  /** mean count of requests between their first and their last token */
  meanRunning: number;
  /** mean count of requests sent (headers written) and without a first token yet */
  meanWaiting: number;
  /** most requests waiting at once */
  maxWaiting: number;
  /**
   * the most requests running at once, held for at least CLIENT_PEAK_MIN_SHARE of the window (so
   * that a hand-over a few ms long, one stream's last token read after the next one's first,
   * does not count)
   */
  peakRunning: number;
  /**
   * share of the window (0..1) with running ≥ peakRunning − floor(peakRunning / 10) and at least
   * one request waiting: a server held at its peak while requests wait for it
   */
  heldAtPeakShare: number;
}

/** a running count counts as the peak only when held this share of the window (0.5 %) */
export const CLIENT_PEAK_MIN_SHARE = 0.005;

/**
 * The client's running and waiting counts over the window, from the timelines alone (METHOD.md
 * has no such figure; docs/method.md "Requests queued" says where it is used):
 * - waiting: from the TTFT start (ttftStartMs with `from`) to the first token, or to the
 *   request's end (or the window's end) when it has none;
 * - running: from the first token (the first token-carrying chunk or the first text, whichever
 *   is earlier) to the last token-carrying chunk. The time from the last token to the stream's
 *   end ([DONE], usage) is neither.
 * Each interval is clipped to the window. peakRunning and heldAtPeakShare as in ClientLoad.
 */
export function clientLoad(
  timelines: readonly RequestTimeline[],
  windowStartMs: number,
  windowEndMs: number,
  from: 'send' | 'sent-headers' = MATRIX_TTFT_FROM,
): ClientLoad {
  const windowMs = windowEndMs - windowStartMs;
  if (!(windowMs > 0)) return { meanRunning: 0, meanWaiting: 0, maxWaiting: 0, peakRunning: 0, heldAtPeakShare: 0 };
  // +1/-1 steps of the running and waiting counts, clipped to the window
  const steps: Array<[atMs: number, running: number, waiting: number]> = [];
  const add = (a: number, b: number, running: number, waiting: number): void => {
    const lo = Math.max(a, windowStartMs);
    const hi = Math.min(b, windowEndMs);
    if (!(hi > lo)) return;
    steps.push([lo, running, waiting], [hi, -running, -waiting]);
  };
  for (const t of timelines) {
    let firstChunk: number | undefined;
    let lastChunk: number | undefined;
    const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
    for (let i = 0; i < n; i++) {
      if (!(t.chunkTokens[i]! > 0)) continue;
      const at = t.chunkMs[i]!;
      if (firstChunk === undefined || at < firstChunk) firstChunk = at;
      if (lastChunk === undefined || at > lastChunk) lastChunk = at;
    }
    const first = t.firstTokenMs !== undefined && (firstChunk === undefined || t.firstTokenMs < firstChunk) ? t.firstTokenMs : firstChunk;
    const start = ttftStartMs(t, from);
    if (first === undefined) {
      add(start, t.end?.atMs ?? windowEndMs, 0, 1);
      continue;
    }
    add(start, first, 0, 1);
    add(first, Math.max(first, lastChunk ?? first), 1, 0);
  }
  // ends before starts at the same instant: a hand-over at one timestamp is not an overlap
  steps.sort((a, b) => a[0] - b[0] || a[1] + a[2] - (b[1] + b[2]));
  /** time (ms) at each running count, and at each running count with someone waiting */
  const atRunning: number[] = [];
  const atRunningWaiting: number[] = [];
  let running = 0;
  let waiting = 0;
  let maxWaiting = 0;
  let prev = windowStartMs;
  let runningMs = 0;
  let waitingMs = 0;
  for (const [at, dr, dw] of steps) {
    const span = at - prev;
    if (span > 0) {
      atRunning[running] = (atRunning[running] ?? 0) + span;
      if (waiting > 0) atRunningWaiting[running] = (atRunningWaiting[running] ?? 0) + span;
      runningMs += running * span;
      waitingMs += waiting * span;
      prev = at;
    }
    running += dr;
    waiting += dw;
    if (waiting > maxWaiting) maxWaiting = waiting;
  }
  if (windowEndMs > prev) atRunning[running] = (atRunning[running] ?? 0) + (windowEndMs - prev);
  // the peak: the largest count k with time at ≥ k for at least the minimum share
  let peakRunning = 0;
  let atLeast = 0;
  for (let k = atRunning.length - 1; k >= 1; k--) {
    atLeast += atRunning[k] ?? 0;
    if (atLeast >= CLIENT_PEAK_MIN_SHARE * windowMs) {
      peakRunning = k;
      break;
    }
  }
  let heldMs = 0;
  for (let k = Math.max(1, peakRunning - Math.floor(peakRunning / 10)); k < atRunningWaiting.length; k++) heldMs += atRunningWaiting[k] ?? 0;
  return {
    meanRunning: runningMs / windowMs,
    meanWaiting: waitingMs / windowMs,
    maxWaiting,
    peakRunning,
    heldAtPeakShare: peakRunning > 0 ? heldMs / windowMs : 0,
  };
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
  const { meanRunning: server, maxWaiting, runningFrom } = samplesLoad(inWindow);
  const client = clientActiveRequests(timelines, ws, we);
  const own = clientLoad(timelines, ws, we, input.ttftFrom ?? 'send');

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
    clientRunningRequests: own.meanRunning,
    clientWaitingRequests: own.meanWaiting,
    clientMaxWaitingRequests: own.maxWaiting,
  };
  // the running figure Requests queued is judged on (status.ts): the server's; the client's own
  // when the server has neither running nor waiting; none when it has a waiting figure only
  if (runningFrom !== undefined) figures.runningFrom = runningFrom;
  else if (maxWaiting === undefined) figures.runningFrom = 'client';
  const perRequest = median(perRequestTps);
  if (perRequest !== undefined) figures.perRequestTokensPerSecond = perRequest;
  const tbt = distribution(tbtValues);
  const limit = input.stallLimit === 'cell' ? stallLimitMs(tbt?.median, we - ws) : input.stallLimit;
  figures.failedRequests = cellFailures(timelines, ws, we, limit).count;
  if (limit !== undefined) figures.stallLimitMs = limit;
  if (tbt !== undefined) figures.timeBetweenTokensMs = tbt;
  const ttft = distribution(ttftValues);
  if (ttft !== undefined) figures.ttftMs = ttft;
  const notComputed = whyNotComputed(timelines, ws, we, tbt === undefined, ttft === undefined);
  if (notComputed !== undefined) figures.notComputed = notComputed;
  if (server !== undefined) figures.serverActiveRequests = server;
  if (maxWaiting !== undefined) figures.maxWaitingRequests = maxWaiting;
  const prompt = median(promptTokens);
  if (prompt !== undefined) figures.promptTokens = prompt;
  return figures;
}

/**
 * Why the time between tokens (and so per-request tok/s) or TTFT could not be computed, in words
 * for the page: no token in the window, every request's window tokens at one instant (one chunk,
 * or a burst that a buffering proxy released), or no request with two chunks in the window.
 */
export function whyNotComputed(
  timelines: readonly RequestTimeline[],
  ws: number,
  we: number,
  noTbt: boolean,
  noTtft: boolean,
): { timeBetweenTokensMs?: string; ttftMs?: string } | undefined {
  if (!noTbt && !noTtft) return undefined;
  const out: { timeBetweenTokensMs?: string; ttftMs?: string } = {};
  if (noTbt) {
    let withTokens = 0;
    let oneInstant = 0;
    for (const t of timelines) {
      let first: number | undefined;
      let spread = false;
      const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
      for (let i = 0; i < n; i++) {
        const at = t.chunkMs[i]!;
        if (t.chunkTokens[i]! <= 0 || at < ws || at > we) continue;
        if (first === undefined) first = at;
        else if (at - first > 0) spread = true;
      }
      if (first === undefined) continue;
      withTokens++;
      if (!spread) oneInstant++;
    }
    out.timeBetweenTokensMs =
      withTokens === 0
        ? 'no token arrived inside the window'
        : oneInstant === withTokens
          ? "each request's tokens inside the window arrived at one instant (one chunk, or a burst a proxy held back), so there is no gap between tokens to time"
          : 'no request had two token chunks inside the window';
  }
  if (noTtft) out.ttftMs = timelines.length === 0 ? 'no request was sent' : "no request's first token arrived by the window's end";
  return out;
}

