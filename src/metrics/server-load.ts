/**
 * The server's load over a cell's window from its metrics samples: mean running (and where that
 * came from) and max waiting, and the client's own in-flight count at the sample times. The
 * figure Requests queued is judged on (src/judge/status.ts). Pure.
 */
import type { MetricsSample } from '../shapes/engine.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import { CLIENT_WAIT_MIN_MS, firstChunkAfter, waitThresholdMs } from './client-load.js';
import { mean } from './stats.js';

/**
 * Where a cell's running figure came from, best first:
 * - 'decode-counters': llama.cpp's mean busy slots per decode call between the first and the last
 *   sample (`n_decode_total` × `n_busy_slots_per_decode`, decodeCounterRunning);
 * - 'samples': the mean of the server's running-requests metric over the samples (vLLM
 *   `num_requests_running`, SGLang `num_running_reqs`, llama.cpp `requests_processing`, …);
 * - 'slots': the mean of the busy slots that llama.cpp's `GET /slots` listed at each sample (its
 *   metrics have no running figure, or are off), every slot where the client had more in flight
 *   than the slots (slotsRunning); Requests queued reads each sample with a slot idle as what the
 *   client had in flight, up to the slots (queueLoad, slotsRunningForQueue);
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
 * values, a `/slots` sample's as slotsRunning reads it ('slots' when every one of them came from
 * `/slots`, else 'samples'); max of the finite
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
      running.push(s.runningFrom === 'slots' ? (slotsRunning(s) ?? s.running) : s.running);
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

/** The window's server load as the Requests-queued rule reads it (src/judge/status.ts). */
export interface QueueLoad {
  /** the mean running count the rule reads: samplesLoad's, except a 'slots' mean, read sample by sample by slotsRunningForQueue */
  meanRunning?: number;
  maxWaiting?: number;
  /** mean of the client's in-flight count at the sample times */
  meanClientInFlight?: number;
  /**
   * samples a 'samples' mean was taken over (its resolution), or a 'slots' one where a sample read its
   * raw busy slots (no slot count or client count: slotsRunningForQueue); absent for the decode
   * counters' mean and for a 'slots' mean read by slotsRunningForQueue throughout
   */
  runningSamples?: number;
  /** where meanRunning came from (the decode counters' mean also counts each request's hand-over: status.ts decodeTurnover) */
  runningFrom?: RunningSource;
}

/**
 * The running count of one `GET /slots` sample as Average active requests reads it: its busy
 * slots, except where the client had more requests in flight than the server has slots: then every
 * slot. llama.cpp defers a request only when no slot is free and hands a freed slot the deferred
 * one on its next loop turn, so a slot idle there is a hand-over; and those are the moments such
 * a scrape is served: its HTTP server serves each connection on one of max(slots + 2, cores − 1)
 * threads, closes a stream's connection when the stream ends, and a scrape that found every thread
 * taken waits for one (a real b4748 with 4 slots at 0/8, 2 cores: scrapes took 66–301 ms against
 * 2–12 ms at 0/3 and read 0–4 busy, 2.25 on average, while a keep-alive poller at 40 Hz saw 3.85).
 * It reads the hand-over's own idle time (one loop turn) as busy: 4.00 there. With the client's
 * in-flight count at or under the slots the sample is read as it is. A sample without the slot
 * count or the client's count reads its busy slots.
 */
export function slotsRunning(s: MetricsSample): number | undefined {
  const busy = s.running;
  if (busy === undefined || !slotsReadable(s) || s.clientInFlight <= s.slotsTotal) return busy;
  return Math.max(busy, s.slotsTotal);
}

/**
 * The running count of one `GET /slots` sample as Requests queued reads it: its busy slots while
 * every slot is busy; with a slot idle, the larger of its busy slots and what the client had in
 * flight (at most the slots), since no request waited for a slot then. llama.cpp's /slots has no
 * waiting count, and a slot is busy only from when the server hands it the request: before that,
 * the prompt's transfer, its template and its tokenization (a 32K prompt on the 2026 build here:
 * the one slot idle 16–20 % of the time while the client had its one request in flight, 0.5–0.8
 * of it in 4–8 s windows' samples) would read as a queue. A sample without the slot count or the
 * client's count reads its busy slots.
 */
export function slotsRunningForQueue(s: MetricsSample): number | undefined {
  const busy = s.running;
  if (busy === undefined || !slotsReadable(s) || busy >= s.slotsTotal) return busy;
  return Math.max(busy, Math.min(s.clientInFlight, s.slotsTotal));
}

/** a /slots sample slotsRunningForQueue can read: it carries the slot count and the client's count */
function slotsReadable(s: MetricsSample): s is MetricsSample & { slotsTotal: number; clientInFlight: number } {
  return s.slotsTotal !== undefined && s.clientInFlight !== undefined;
}

/** mean running and max waiting over samples (fields missing in every sample: undefined) */
export function queueLoad(samples: readonly MetricsSample[]): QueueLoad {
  const load = samplesLoad(samples);
  const out: QueueLoad = {};
  if (load.runningFrom === 'slots') {
    const m = mean(samples.flatMap((s) => {
      const r = slotsRunningForQueue(s);
      return r !== undefined && Number.isFinite(r) ? [r] : [];
    }));
    if (m !== undefined) out.meanRunning = m;
  } else if (load.meanRunning !== undefined) out.meanRunning = load.meanRunning;
  if (load.runningFrom !== undefined) out.runningFrom = load.runningFrom;
  if (load.maxWaiting !== undefined) out.maxWaiting = load.maxWaiting;
  // A mean of sampled running counts resolves one request in one sample: a sample in a hand-over
  // reads one short. The decode counters' mean has no such step, and a /slots sample read by
  // slotsRunningForQueue counts a hand-over's idle slot already: there the allowance would only let
  // C = slots + 1 pass on a window of one sample. It stays for /slots samples read raw.
  if (load.runningFrom === 'samples' || (load.runningFrom === 'slots' && !samples.every((s) => s.running === undefined || slotsReadable(s)))) {
    out.runningSamples = load.runningSamples;
  }
  const c = mean(samples.flatMap((s) => (s.clientInFlight !== undefined ? [s.clientInFlight] : [])));
  if (c !== undefined) out.meanClientInFlight = c;
  return out;
}

/** a scrape is late when it took longer than this (ms) and LATE_SCRAPE_FACTOR × the window's usual scrape */
export const LATE_SCRAPE_MIN_MS = 100;
export const LATE_SCRAPE_FACTOR = 4;

/** The window's metric samples that could be taken, and what was set aside (screenSamples). */
export interface ScreenedSamples {
  /** every sample, a set-aside one without its running and waiting counts (its counters stay) */
  samples: MetricsSample[];
  /** undefined when nothing was set aside */
  setAside?: SamplesSetAside;
}

export interface SamplesSetAside {
  /** samples whose scrape came back late (scrapeMs over lateOverMs) */
  late: number;
  /** samples that read 0 running while a stream of the client's was receiving tokens through the scrape */
  zeroWhileStreaming: number;
  /** samples with a running or waiting count, set aside or not */
  of: number;
  /** the bound a late scrape passed, ms */
  lateOverMs: number;
}

/**
 * A metric sample is evidence of the server's running and waiting counts only when it could be
 * taken (issue 60): its running and waiting counts are set aside, left out of Average active and
 * of the Requests-queued rule, when
 * - its scrape came back late: it took more than LATE_SCRAPE_MIN_MS and LATE_SCRAPE_FACTOR × the
 *   lower median of the window's scrapes (a scrape starved by the load or by the server reads the
 *   server at a moment the client's in-flight count was not taken at: a llama.cpp whose HTTP
 *   threads were all taken by streams answered after 66–301 ms against 2–12 ms, and read hand-overs);
 * - it read 0 running while a stream of the client's was receiving tokens through the scrape: two
 *   of its token chunks straddle the scrape, no further apart than the stream's own waitThresholdMs
 *   (a 2026 llama.cpp fork read 0 running at 0/8 with eight streams decoding).
 * Its counters stay (the decode-counter and cache figures read them whatever moment they were taken).
 */
export function screenSamples(samples: readonly MetricsSample[], timelines: readonly RequestTimeline[]): ScreenedSamples {
  const counted = samples.filter((s) => s.running !== undefined || s.waiting !== undefined);
  const scrapes = counted.flatMap((s) => (s.scrapeMs !== undefined ? [s.scrapeMs] : [])).sort((a, b) => a - b);
  const usual = scrapes.length > 0 ? scrapes[(scrapes.length - 1) >> 1]! : undefined;
  const lateOverMs = Math.max(LATE_SCRAPE_MIN_MS, LATE_SCRAPE_FACTOR * (usual ?? 0));
  let late = 0;
  let zero = 0;
  const out = samples.map((s) => {
    if (s.running === undefined && s.waiting === undefined) return s;
    const isLate = s.scrapeMs !== undefined && s.scrapeMs > lateOverMs;
    const isZero = !isLate && s.running === 0 && (s.clientInFlight ?? 0) >= 1 && streamingThrough(timelines, s.atMs - (s.scrapeMs ?? 0), s.atMs);
    if (!isLate && !isZero) return s;
    if (isLate) late++;
    else zero++;
    const { running: _r, waiting: _w, runningFrom: _f, slotsTotal: _t, ...rest } = s;
    return rest;
  });
  if (late + zero === 0) return { samples: out };
  return { samples: out, setAside: { late, zeroWhileStreaming: zero, of: counted.length, lateOverMs } };
}

/**
 * some request was receiving tokens through [fromMs, toMs]: it had token chunks before fromMs and
 * after toMs, and the gaps over the two edges are no longer than its own waitThresholdMs (or
 * CLIENT_WAIT_MIN_MS). A stream whose last token came during the scrape is not evidence: the
 * server may have finished it before it read its gauge.
 */
function streamingThrough(timelines: readonly RequestTimeline[], fromMs: number, toMs: number): boolean {
  for (const t of timelines) {
    const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
    if (n < 2 || !(t.chunkMs[0]! < fromMs) || !(t.chunkMs[n - 1]! > toMs)) continue;
    const a = firstChunkAfter(t.chunkMs, n, fromMs, true);
    const b = firstChunkAfter(t.chunkMs, n, toMs, false);
    const own = waitThresholdMs(t);
    const limit = Math.max(CLIENT_WAIT_MIN_MS, own === Infinity ? 0 : own);
    if (t.chunkMs[a]! - t.chunkMs[a - 1]! <= limit && t.chunkMs[b]! - t.chunkMs[b - 1]! <= limit) return true;
  }
  return false;
}
