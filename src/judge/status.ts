/**
 * Statuses of a measured cell (METHOD.md "Statuses"), as pure rules with evidence, and the Over
 * capacity rule that keeps a cell from running.
 */
import { streamBunching } from '../metrics/bunching.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { MetricsSample } from '../shapes/engine.js';
import { MATRIX_TTFT_FROM } from '../metrics/request.js';
import { queueLoad, type SamplesSetAside } from '../metrics/server-load.js';
import { clientLoad, type ClientLoad } from '../metrics/client-load.js';
import { connectionRetrySummary, errorSummary, type ErrorSummary } from '../metrics/failures.js';
import type { StreamEndings } from '../metrics/stream-endings.js';
import { DEFAULTS } from '../config/defaults.js';
import type { CellEvidence, CellFigures, CellStatus } from '../shapes/result.js';
import { isBuffered } from './buffered.js';

/** a cell is "requests queued" when mean running < this share of C */
export const QUEUED_RUNNING_SHARE = 0.95;

/**
 * client-side evidence (no server figures): a cell is "requests queued" when the server never ran
 * all C at once and was held at its peak, with a request waiting, for at least this share of the window
 */
export const CLIENT_QUEUED_HELD_SHARE = 0.5;

export interface CellStatusInput {
  /** C, the cell's requests at once */
  concurrency: number;
  figures: Pick<
    CellFigures,
    'failedRequests' | 'serverActiveRequests' | 'clientActiveRequests' | 'maxWaitingRequests' | 'activeRequestsDisagree' | 'runningFrom'
  > &
    Partial<Pick<CellFigures, 'completedRequests' | 'timeBetweenTokensMs' | 'measuredForS'>>;
  /** the cell's worker requests: the errors evidence (count by code, first message) comes from them */
  timelines?: readonly RequestTimeline[];
  /**
   * the cell's failures as its figure counted them (cellFailures: window and stalls); without it
   * the evidence is built from the timelines' error ends
   */
  failures?: ErrorSummary;
  /** the window's server samples; when given, requests-queued is judged from them, else from figures */
  samples?: readonly MetricsSample[];
  /** samples whose running and waiting counts were set aside (metrics/server-load.ts screenSamples): evidence */
  samplesSetAside?: SamplesSetAside;
  /** the window's completed requests by ending (metrics/stream-endings.ts); evidence when any is not 'done' */
  streamEndings?: StreamEndings;
  /**
   * the window; with the timelines, requests-queued is judged from the client's own timelines
   * (clientLoad) when the samples (or figures) carry neither a running nor a waiting figure
   */
  windowStartMs?: number;
  windowEndMs?: number;
  /**
   * the client's load over the window (clientLoad, from MATRIX_TTFT_FROM), when the figures have
   * it already; else computed here from the timelines when the client-side rule needs it
   */
  clientLoad?: ClientLoad;
  /** the readiness gate timed out, after waiting this long */
  gateTimedOut?: boolean;
  gateWaitedMs?: number;
  /** the drain barrier before the cell timed out, after waiting this long */
  drainTimedOut?: boolean;
  drainWaitedMs?: number;
  /** event-loop delay over the window (load/loop-monitor.ts), when monitored */
  loopDelayMs?: { p99: number };
  /**
   * the client is limited when its timing error estimate p99 (loop delay p99 and read lag
   * p99 combined: timingErrorEstimateMs) exceeds this bound, in ms (suite clientLimitedLoopDelayMs)
   */
  loopDelayBoundMs: number;
  /** the load generator's CPU over the same span, in cores, when measured */
  clientCpuCores?: number;
  /** …or when its CPU exceeds this many cores (default 0.9) */
  cpuBoundCores?: number;
  /** the share of the same span its thread waited, ready to run, for a core (Linux; evidence only) */
  clientCoreWaitShare?: number;
  /**
   * with client threads (load/stream-threads.ts): each thread's own loop delay p99 and CPU; the
   * worst thread decides (loopDelayMs and clientCpuCores are then that thread's and the busiest's)
   */
  clientThreads?: readonly ClientSelfCheck[];
  /** read lag of response reads over the same span (client/arrival-clock.ts), when measured */
  arrivalLagMs?: { p99: number };
}

/** One stream keeper's self-check (the cell's own thread, or one client thread). */
export interface ClientSelfCheck {
  loopDelayMs?: { p99: number };
  arrivalLagMs?: { p99: number };
  cpuCores: number;
  /** the share of the span it waited, ready to run, for a core (evidence only: it names the cause, not the verdict) */
  coreWaitShare?: number;
}

/**
 * The client's estimate of its own token timing error at p99 (issue 24, calibrated in
 * docs/accuracy.md): a chunk is stamped late by the time its thread's loop was busy before the
 * turn that handles it (the event-loop delay, loop-monitor.ts) and by the reads handled before it
 * in that turn plus, on Linux, the thread's wait for a core before the turn (the read lag,
 * client/arrival-clock.ts). The estimate is the root of the sum of
 * the two p99s' squares, not their sum: a long turn of reads delays the loop's timer too, so one
 * stall shows in both, and a sum counted it twice (at 64 streams on one thread, a true p99 of
 * 1.6–2.3 ms read 4.2–5.4 ms, over the 5 ms bound now and then).
 */
export function timingErrorEstimateMs(c: Pick<ClientSelfCheck, 'loopDelayMs' | 'arrivalLagMs'>): number | undefined {
  if (c.loopDelayMs === undefined && c.arrivalLagMs === undefined) return undefined;
  return Math.hypot(c.loopDelayMs?.p99 ?? 0, c.arrivalLagMs?.p99 ?? 0);
}

/**
 * A thread whose response reads were late (read lag p99 at least this, ms: they queued behind each
 * other, or the thread waited for a core when they came) could not time them. Below it, reads are
 * handled one to a turn as they come, and a loop late only on its timer (a collection, another
 * timer) delayed no read; the loop bound below still catches a long one.
 */
export const LOADED_READ_LAG_MS = 1;
/** METHOD.md's bound on the event-loop delay p99 alone, loaded or not */
export const METHOD_LOOP_DELAY_MS = 50;

/**
 * One stream keeper's token timing is over the bound: its timing error estimate is over
 * `boundMs` while its reads were late (read lag p99 ≥ LOADED_READ_LAG_MS; always, where the lag
 * was not measured), or its event-loop delay p99 alone is over METHOD's 50 ms. The decode cells'
 * rule (clientLimitedEvidence) and the rate cells' (judge-rate.ts).
 */
export function timingOver(c: Pick<ClientSelfCheck, 'loopDelayMs' | 'arrivalLagMs'>, boundMs: number): boolean {
  const estimate = timingErrorEstimateMs(c);
  const loaded = c.arrivalLagMs === undefined || c.arrivalLagMs.p99 >= LOADED_READ_LAG_MS;
  return (estimate !== undefined && estimate > boundMs && loaded) || (c.loopDelayMs?.p99 ?? 0) > METHOD_LOOP_DELAY_MS;
}

/**
 * The client could not time its tokens (METHOD.md: the load generator fell behind): on its worst
 * thread, its timing error estimate p99 (timingErrorEstimateMs) is over `loopDelayBoundMs`
 * (default 5 ms) while its reads were late (read lag p99 ≥ LOADED_READ_LAG_MS; always, where the
 * lag was not measured), or its event-loop delay p99 is over METHOD's 50 ms, or a thread used more
 * than `cpuBound` of a core. Undefined when none is over. The evidence names the figures of the
 * worst thread that is over (and which one, with client threads).
 */
export function clientLimitedEvidence(
  input: Pick<CellStatusInput, 'loopDelayMs' | 'arrivalLagMs' | 'loopDelayBoundMs' | 'clientCpuCores' | 'cpuBoundCores' | 'clientThreads' | 'clientCoreWaitShare'>,
): CellEvidence['clientLimited'] {
  const keepers: ClientSelfCheck[] = input.clientThreads?.length
    ? [...input.clientThreads]
    : [
        {
          ...(input.loopDelayMs ? { loopDelayMs: input.loopDelayMs } : {}),
          ...(input.arrivalLagMs ? { arrivalLagMs: input.arrivalLagMs } : {}),
          cpuCores: input.clientCpuCores ?? 0,
          ...(input.clientCoreWaitShare !== undefined ? { coreWaitShare: input.clientCoreWaitShare } : {}),
        },
      ];
  const cpuBound = input.cpuBoundCores ?? DEFAULTS.clientLimitedCpuCores;
  const bound = input.loopDelayBoundMs;
  const cpuKnown = input.clientThreads?.length ? true : input.clientCpuCores !== undefined;
  const over = (c: ClientSelfCheck): boolean => timingOver(c, bound) || (cpuKnown && c.cpuCores > cpuBound);
  const score = (c: ClientSelfCheck): number => Math.max((timingErrorEstimateMs(c) ?? 0) / bound, c.cpuCores / cpuBound);
  // the worst of the threads that are over: a thread whose estimate is higher but whose reads were
  // not late (a loop late only on its timer) must not hide one that is over
  let worst = -1;
  keepers.forEach((c, k) => {
    if (over(c) && (worst < 0 || score(c) > score(keepers[worst]!))) worst = k;
  });
  if (worst < 0) return undefined;
  const c = keepers[worst]!;
  const estimate = timingErrorEstimateMs(c);
  const evidence: NonNullable<CellEvidence['clientLimited']> = { eventLoopDelayP99Ms: c.loopDelayMs?.p99 ?? 0, boundMs: bound };
  if (c.arrivalLagMs !== undefined) Object.assign(evidence, { arrivalLagP99Ms: c.arrivalLagMs.p99, timingErrorP99Ms: estimate });
  if (cpuKnown) Object.assign(evidence, { cpuCores: c.cpuCores, cpuBoundCores: cpuBound });
  if (c.coreWaitShare !== undefined) evidence.coreWaitShare = c.coreWaitShare;
  if (keepers.length > 1) Object.assign(evidence, { threads: keepers.length, thread: worst + 1 });
  return evidence;
}

export interface CellStatusResult {
  /** the one shown, by precedence: client-limited > stream-buffered > warmup-timed-out > errors > requests-queued > valid */
  status: CellStatus;
  /** every status that applies, in that precedence order; ['valid'] when none */
  statuses: CellStatus[];
  evidence: CellEvidence;
}

/**
 * Which statuses apply to a measured cell. Rules:
 * - client-limited: the client's timing error estimate p99 (event-loop delay p99 ⊕ read lag p99,
 *   on its worst thread) > loopDelayBoundMs, or a client thread's CPU > cpuBoundCores (0.9
 *   of a core) over the same span (the figures may be wrong, so it comes first; clientLimitedEvidence);
 * - stream-buffered: with the timelines and the window, the chunks arrived bunched (buffered.ts:
 *   most gaps between a request's chunks under 0.5 ms or a quarter of its own rhythm, or bursts of 16+ tokens at one instant);
 * - warmup-timed-out: the gate or the drain barrier timed out (the gate's evidence wins when both);
 * - errors: figures.failedRequests > 0 (evidence by code from the timelines' error ends);
 * - requests-queued, from the server's figures when it has any: any sample with waiting > 0, or the
 *   mean of running < queuedRunningBound: 0.95 × min(C, mean of the client's in-flight count at the
 *   sample times), or that minus one request in one sample when that is lower; with llama.cpp's
 *   decode counters, less each request's turnover too (decodeTurnover); with its `/slots` busy
 *   slots, a sample with a slot idle reads what the client had in flight, up to the slots
 *   (metrics/server-load.ts slotsRunningForQueue);
 * - requests-queued, from the client's own timelines when the server exposes neither running nor
 *   waiting (evidence source 'client'; metrics/client-load.ts): the most requests running at
 *   once (peakRunning, held for 0.5 % of the window) is below C, and the running count stayed at
 *   that peak (within 10 %) with a request waiting for at least half the window
 *   (CLIENT_QUEUED_HELD_SHARE). Why not METHOD.md's rule on the client's counts: in a closed loop
 *   every new request waits for its first token (prefill, one engine step) even on a server that
 *   never queues, so "waiting > 0" always holds and mean running stays below 0.95 × C whenever
 *   TTFT is over 5 % of a request (sglang-h200 at 64 tokens: about 9 %). A server that queues
 *   holds a cap: its running count sits at its limit while the others wait. One that runs all C
 *   has no cap: its running count reaches C (measured on the simulator, tiny and sglang-h200,
 *   C = 1–8, 64 tokens, 2–5 s windows: peak = C in every cell; with one slot at C = 2 and 4: peak
 *   1, held ≥ 0.9 of the window; a real llama.cpp b4748 with -np 1 and no --metrics, 64 tokens,
 *   4 s, contexts 0 and 1K: C = 1 Valid, C = 2 and 4 peak 1, held 0.87–0.93; docs/method.md).
 *   A cap just under C (C − 1 slots) at large TTFT cannot be told from a server that runs all C
 *   with a long TTFT, and is read Valid; at large C the rule errs the same way (sglang-h200 16K/32:
 *   peak 29, held 0.45, Valid, where the server's own queue gauge says Requests queued).
 *   `queued` then carries the client's figures.
 * `activeDisagreement` evidence is added when figures.activeRequestsDisagree, and
 * `connectionRetries` when a request was resent on a fresh connection, and `streamEndings` when a
 * completed stream ended without a complete `data: [DONE]` event (a close after the finish reason,
 * an unterminated last event); none of them is a status. A cell whose streams all ended normally
 * has no `streamEndings` evidence, so a normal server's cells carry none.
 */
export function cellStatuses(input: CellStatusInput): CellStatusResult {
  const statuses: CellStatus[] = [];
  const evidence: CellEvidence = {};
  const { figures, concurrency } = input;

  const clientLimited = clientLimitedEvidence(input);
  if (clientLimited) {
    statuses.push('client-limited');
    evidence.clientLimited = clientLimited;
  }
  // chunks bunched on the way (a buffering proxy): the client-side times are the proxy's
  if (input.timelines && input.windowStartMs !== undefined && input.windowEndMs !== undefined) {
    const bunching = streamBunching(input.timelines, input.windowStartMs, input.windowEndMs);
    if (bunching && isBuffered(bunching)) {
      statuses.push('stream-buffered');
      evidence.streamBuffered = bunching;
    }
  }
  if (input.gateTimedOut === true || input.drainTimedOut === true) {
    statuses.push('warmup-timed-out');
    evidence.warmupTimedOut =
      input.gateTimedOut === true
        ? { phase: 'gate', waitedMs: input.gateWaitedMs ?? 0 }
        : { phase: 'drain', waitedMs: input.drainWaitedMs ?? 0 };
  }
  if (figures.failedRequests > 0) {
    statuses.push('errors');
    const summary = input.failures ?? (input.timelines ? errorSummary(input.timelines, Infinity) : undefined);
    evidence.errors = { count: figures.failedRequests, byCode: summary ? summary.byCode : {} };
    if (summary?.firstMessage !== undefined) evidence.errors.firstMessage = summary.firstMessage;
  }
  const { meanRunning, maxWaiting, meanClientInFlight, runningSamples, runningFrom } = input.samples
    ? queueLoad(input.samples)
    : // without the samples: the figures' server mean, except a decode-counter one (a mean over the window, not the per-call count the rule reads)
      // and a /slots one (slotsRunning's reading, not slotsRunningForQueue's, which the rule takes)
      { meanRunning: figures.runningFrom === 'decode-counters' || figures.runningFrom === 'slots' ? undefined : figures.serverActiveRequests, maxWaiting: figures.maxWaitingRequests, meanClientInFlight: undefined, runningSamples: undefined, runningFrom: undefined };
  if (meanRunning !== undefined || maxWaiting !== undefined) {
    const waitingSeen = maxWaiting !== undefined && maxWaiting > 0;
    // Compared with what the client actually had in flight at the sample times (at most C): a worker
    // waiting out its backoff after a failure is the client holding back, not the server queueing.
    const offered = Math.min(concurrency, meanClientInFlight ?? concurrency);
    // the decode counters' mean the rule read (queueLoad's own source: the figures' may be from other samples)
    const turnover = runningFrom === 'decode-counters' ? decodeTurnover(figures) : 0;
    const runningShort = meanRunning !== undefined && meanRunning < queuedRunningBound(offered, runningSamples) - turnover;
    if (waitingSeen || runningShort) {
      statuses.push('requests-queued');
      const queued: NonNullable<CellEvidence['queued']> = { concurrency };
      if (maxWaiting !== undefined) queued.maxWaiting = maxWaiting;
      if (meanRunning !== undefined) queued.meanRunning = meanRunning;
      if (meanClientInFlight !== undefined) queued.meanClientInFlight = meanClientInFlight;
      evidence.queued = queued;
    }
  } else if (input.timelines && input.windowStartMs !== undefined && input.windowEndMs !== undefined && input.windowEndMs > input.windowStartMs) {
    const own = input.clientLoad ?? clientLoad(input.timelines, input.windowStartMs, input.windowEndMs, MATRIX_TTFT_FROM);
    if (clientQueued(own, concurrency)) {
      statuses.push('requests-queued');
      evidence.queued = {
        concurrency,
        source: 'client',
        meanRunning: own.meanRunning,
        meanWaiting: own.meanWaiting,
        maxWaiting: own.maxWaiting,
        peakRunning: own.peakRunning,
        heldAtPeakShare: own.heldAtPeakShare,
      };
    }
  }
  if (figures.activeRequestsDisagree && figures.serverActiveRequests !== undefined) {
    evidence.activeDisagreement = { server: figures.serverActiveRequests, client: figures.clientActiveRequests };
  }
  if (input.samplesSetAside) evidence.metricSamplesSetAside = { ...input.samplesSetAside };
  const retries = input.timelines ? connectionRetrySummary(input.timelines) : undefined;
  if (retries !== undefined && retries.count > 0) evidence.connectionRetries = retries;
  const endings = input.streamEndings;
  if (endings !== undefined && endings.closeAfterFinish + endings.unterminatedLast > 0) evidence.streamEndings = { ...endings };
  if (statuses.length === 0) statuses.push('valid');
  return { status: statuses[0]!, statuses, evidence };
}

/**
 * The client-side rule (see cellStatuses): the server never ran all C at once, and sat at its
 * peak with a request waiting for at least CLIENT_QUEUED_HELD_SHARE of the window.
 */
export function clientQueued(load: Pick<ClientLoad, 'peakRunning' | 'heldAtPeakShare'>, concurrency: number): boolean {
  return load.peakRunning >= 1 && load.peakRunning < concurrency && load.heldAtPeakShare >= CLIENT_QUEUED_HELD_SHARE;
}

/**
 * The mean running below which a cell counts as queued: METHOD.md's 0.95 × what the client offered,
 * but never closer to it than one request in one sample (offered − 1 / samples). A closed
 * loop's worker has its next request in flight while the server has not admitted it yet (about
 * 2–5 ms per request here: reconnect, parse, the next step); a sample that lands there reads one
 * request short. With 30 samples (30 s window, 1 s interval) 5 % is the larger at every C; with the
 * 8 samples of a short test window one such sample at C = 1 reads 0.875 and must not decide alone.
 */
export function queuedRunningBound(offered: number, runningSamples: number | undefined): number {
  const share = QUEUED_RUNNING_SHARE * offered;
  return runningSamples !== undefined && runningSamples > 0 ? Math.min(share, offered - 1 / runningSamples) : share;
}

/**
 * What a closed loop's turnover takes off the decode counters' mean running (llama.cpp: busy slots
 * per decode call), in requests: a worker's next request is admitted when the decode step in
 * progress at its arrival ends, about one step after its previous request's last (the client's
 * reconnect and the server's parse fall inside that step), and meanwhile the other slots decode with
 * its slot idle. So each completed request costs about one step (the median time between tokens)
 * of one slot: completed × step / window. Negligible for long requests, it is what separates 2
 * streams on a 4-slot server from a queue when requests are short: a real llama.cpp b4748 at 0/2
 * with 32-token requests (80 done in 4 s, steps of 2.95 ms) read 1.88 running, under METHOD.md's
 * 0.95 × 2 with nothing waiting; the turnover is 0.06 of it. 0 without the figures.
 */
export function decodeTurnover(f: Partial<Pick<CellFigures, 'completedRequests' | 'timeBetweenTokensMs' | 'measuredForS'>>): number {
  const step = f.timeBetweenTokensMs?.median;
  if (step === undefined || !(step > 0) || f.completedRequests === undefined || !(f.measuredForS !== undefined && f.measuredForS > 0)) return 0;
  return (f.completedRequests * step) / (f.measuredForS * 1000);
}

/**
 * Whether a cell must not run (METHOD.md "Over capacity"): C × (context + max output) > the KV
 * capacity in tokens; equal is not over. Unknown capacity: run. A context-0 row's cell whose C is
 * within the server's max running requests always runs; when max running requests is unknown, a
 * context-0 cell follows the capacity rule like any other. `requestTokens`: what one request holds
 * where a workload sends its own lengths (its largest request, matrix/workload-run.ts); the
 * exemption stays the row's context's (a file row's nominal 0 included).
 * Returns the evidence when over capacity, else undefined.
 */
export function overCapacity(
  context: number,
  concurrency: number,
  maxOutputTokens: number,
  kvCapacityTokens?: number,
  maxRunningRequests?: number,
  requestTokens = context + maxOutputTokens,
): { requiredTokens: number; kvCapacityTokens: number; requestTokens: number } | undefined {
  if (context === 0 && maxRunningRequests !== undefined && concurrency <= maxRunningRequests) return undefined;
  if (kvCapacityTokens === undefined) return undefined;
  const requiredTokens = concurrency * requestTokens;
  return requiredTokens > kvCapacityTokens ? { requiredTokens, kvCapacityTokens, requestTokens } : undefined;
}
