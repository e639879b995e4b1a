/**
 * The client's own view of a cell's load over the window, from the timelines alone: requests in
 * flight (clientActiveRequests), and running and waiting (clientLoad) for servers that expose no
 * running or waiting figure. Pure.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import { MATRIX_TTFT_FROM, ttftStartMs } from './request.js';

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

/** The client's busy time over a window (clientBusy). */
export interface ClientBusy {
  /**
   * the mean number of requests in flight over the part of the window where at least one is
   * (busy time / time with any request in flight); 0 when nothing was in flight
   */
  whileBusy: number;
  /** the share of the window with at least one request in flight, 0–1 */
  busyShare: number;
}

/**
 * The client's in-flight count while busy, and how much of the window it was busy: what a count
 * per decode call (llama.cpp's busy slots per decode) is comparable with, and what scales it to a
 * mean over the window, since a server decodes nothing while no request is in flight (multi-turn
 * think times, a low open-loop rate). A window always busy has busyShare 1, and whileBusy is then
 * clientActiveRequests.
 */
export function clientBusy(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number): ClientBusy {
  const edges: Array<[number, number]> = [];
  for (const t of timelines) {
    const from = Math.max(t.sendMs, windowStartMs);
    const to = Math.min(t.end?.atMs ?? windowEndMs, windowEndMs);
    if (to > from) edges.push([from, 1], [to, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let inFlight = 0;
  let busyMs = 0;
  let anyMs = 0;
  let last = windowStartMs;
  for (const [at, step] of edges) {
    if (inFlight > 0) {
      busyMs += inFlight * (at - last);
      anyMs += at - last;
    }
    inFlight += step;
    last = at;
  }
  const windowMs = windowEndMs - windowStartMs;
  return { whileBusy: anyMs > 0 ? busyMs / anyMs : 0, busyShare: windowMs > 0 ? Math.min(1, anyMs / windowMs) : 0 };
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
 * A request that goes silent mid-stream for longer than this many times its own usual gap
 * between chunks (the lower median of its gaps), and at least CLIENT_WAIT_MIN_MS, is waiting
 * again, not running, for that silence (clientLoad): a server that takes streams by turns sends a
 * stream that waits its first chunk (what a poller found generated before it) and then nothing
 * while another stream runs (issue 60).
 */
export const CLIENT_WAIT_GAP_FACTOR = 8;
export const CLIENT_WAIT_MIN_MS = 50;
/**
 * …but not for a stream whose usual gap is under this (ms): its chunks come bunched (a buffering
 * proxy, bursts 1 ms apart; stream-buffered's business), and its silences between bunches are the
 * way the bunches come, not a wait for another stream
 */
export const CLIENT_WAIT_BUNCHED_GAP_MS = 2;

/** reused by waitThresholdMs: a request's gaps, sorted for their lower median */
let gapBuf = new Float64Array(256);

/**
 * The silence after which request `t`'s stream counts as waiting (CLIENT_WAIT_GAP_FACTOR × the
 * lower median of the gaps between its token-carrying chunks, at least CLIENT_WAIT_MIN_MS);
 * Infinity with fewer than two gaps (nothing to judge a silence by) or a usual gap under
 * CLIENT_WAIT_BUNCHED_GAP_MS.
 */
export function waitThresholdMs(t: Pick<RequestTimeline, 'chunkMs' | 'chunkTokens'>): number {
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  if (gapBuf.length < n) gapBuf = new Float64Array(Math.max(n, gapBuf.length * 2));
  let gaps = 0;
  let prev: number | undefined;
  for (let i = 0; i < n; i++) {
    if (!(t.chunkTokens[i]! > 0)) continue;
    const at = t.chunkMs[i]!;
    if (prev !== undefined) gapBuf[gaps++] = at - prev;
    prev = at;
  }
  if (gaps < 2) return Infinity;
  const usual = gapBuf.subarray(0, gaps).sort()[(gaps - 1) >> 1]!;
  return usual < CLIENT_WAIT_BUNCHED_GAP_MS ? Infinity : Math.max(CLIENT_WAIT_MIN_MS, CLIENT_WAIT_GAP_FACTOR * usual);
}

/**
 * The client's running and waiting counts over the window, from the timelines alone (METHOD.md
 * has no such figure; docs/method.md "Requests queued" says where it is used):
 * - waiting: from the TTFT start (ttftStartMs with `from`) to the first token, or to the
 *   request's end (or the window's end) when it has none;
 * - running: from the first token (the first token-carrying chunk or the first text, whichever
 *   is earlier) to the last token-carrying chunk, except a silence between two chunks longer
 *   than the request's waitThresholdMs while other streams streamed through it
 *   (CLIENT_WAIT_BINS_STREAMED), which is waiting again (a server taking streams by turns). The
 *   time from the last token to the stream's end ([DONE], usage) is neither.
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
  const othersStreamed = othersStreamedCheck(timelines);
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
    addRunning(t, first, Math.max(first, lastChunk ?? first), add, othersStreamed);
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

/**
 * Request `t`'s running time from `first` to `last` as clientLoad counts it: one span, split where
 * the stream was silent longer than its waitThresholdMs while other streams were streaming
 * (`othersStreamed`), the silence counted as waiting. Chunks are read in arrival order (a stream's
 * chunk times only grow).
 */
function addRunning(t: RequestTimeline, first: number, last: number, add: (a: number, b: number, running: number, waiting: number) => void, othersStreamed: (self: RequestTimeline, a: number, b: number) => boolean): void {
  const limit = waitThresholdMs(t);
  if (limit === Infinity) return add(first, last, 1, 0);
  let spanStart = first;
  let prev = first;
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  for (let i = 0; i < n; i++) {
    if (!(t.chunkTokens[i]! > 0)) continue;
    const at = t.chunkMs[i]!;
    if (at - prev > limit && othersStreamed(t, prev, at)) {
      add(spanStart, prev, 1, 0);
      add(prev, at, 0, 1);
      spanStart = at;
    }
    if (at > prev) prev = at;
  }
  add(spanStart, Math.max(spanStart, last), 1, 0);
}

/**
 * A silence of one stream is a wait for another only when other streams were streaming through it:
 * cut into CLIENT_WAIT_BINS equal parts, at least CLIENT_WAIT_BINS_STREAMED of them hold a token
 * chunk of another stream. A client that stalls (a loaded machine) stamps every stream's chunks at
 * the stall's end, and a server that stalls every stream at once (a long prompt's prefill) sends
 * none inside it: neither is a queue. A server that takes streams by turns streams another one all
 * through the silence. The silence is at least CLIENT_WAIT_GAP_FACTOR (8) usual gaps long, so a part
 * is about one gap of a stream at the same pace: 16 parts of a 200 ms silence between 20 ms polls
 * left a third of them empty.
 */
export const CLIENT_WAIT_BINS = 8;
export const CLIENT_WAIT_BINS_STREAMED = 6;

/** at most this many timeline visits for the silences' checks; past it no silence is split (clientLoad as before issue 60) */
const OTHERS_CHECK_BUDGET = 20_000_000;

/**
 * `othersStreamed(self, a, b)` for clientLoad (CLIENT_WAIT_BINS_STREAMED of CLIENT_WAIT_BINS parts
 * of (a, b) hold another stream's chunk). Each call visits every timeline (binary searches in
 * those that overlap); past OTHERS_CHECK_BUDGET visits it answers false.
 */
function othersStreamedCheck(timelines: readonly RequestTimeline[]): (self: RequestTimeline, a: number, b: number) => boolean {
  let visits = 0;
  const marked = new Uint8Array(CLIENT_WAIT_BINS);
  return (self, a, b) => {
    visits += timelines.length;
    if (visits > OTHERS_CHECK_BUDGET) return false;
    marked.fill(0);
    const width = (b - a) / CLIENT_WAIT_BINS;
    let count = 0;
    for (const u of timelines) {
      if (u === self) continue;
      const n = Math.min(u.chunkMs.length, u.chunkTokens.length);
      if (n === 0 || !(u.chunkMs[0]! < b) || !(u.chunkMs[n - 1]! > a)) continue;
      for (let k = 0; k < CLIENT_WAIT_BINS; k++) {
        if (marked[k] === 1) continue;
        const from = a + k * width;
        const i = firstChunkAfter(u.chunkMs, n, from, false);
        if (i < n && u.chunkMs[i]! < from + width) {
          marked[k] = 1;
          if (++count >= CLIENT_WAIT_BINS_STREAMED) return true;
        }
      }
    }
    return false;
  };
}

/**
 * The index of the first of the first `n` ascending times at or after (`orAt`) or strictly after
 * `ms`; n when there is none. A stream's chunk times only grow.
 */
export function firstChunkAfter(times: ArrayLike<number>, n: number, ms: number, orAt: boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (orAt ? times[mid]! >= ms : times[mid]! > ms) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
