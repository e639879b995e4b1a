/**
 * The sustained-decode cell runner (METHOD.md run sequence 5): drain barrier, scout, C closed-loop
 * workers that restart after a failure (closed-loop.ts; on this thread, or over client threads:
 * cell-streams.ts), readiness gate, fixed window with server metrics sampled inside it, then abort
 * of everything in flight. It returns raw timelines and samples; the
 * figures are computed by the pure functions in src/metrics.
 */
import { monoMs } from '../clock.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { MetricsSample, ServerRequestTimings } from '../shapes/engine.js';
import { createWorkerDispatchers, sumConnectionCounts, type WorkerDispatchers } from '../client/pool.js';
import { HttpCallError, retryWhileUnreachable } from '../engines/http.js';
import { redactUrlCredentials } from '../redact.js';
import type { CpuReading } from './client-cpu.js';
import { abortOnServer, cellAbortOf, requestBody, requestHeaders, requestOf, sampleMetrics, scrapeMetrics, sendRequest, sleep, waitUntil, type CellRequestInput, type LoadSession } from './session.js';
import { unlessServerDown, waitForIdle, type DrainOutcome } from './drain.js';
import type { CellSend, WorkerState } from './worker-state.js';
import type { CellConversations, RequestTurn } from './conversations.js';
import { cellThreads, cellThreadStreams, threadStreams, type StreamsControl } from './cell-streams.js';
import type { ThreadSelfCheck } from './self-check.js';
import type { ArrivalLagStats } from '../client/arrival-clock.js';
import { appendAll } from '../extent.js';

export interface CellRunOptions {
  context: number;
  concurrency: number;
  /**
   * worker `worker`'s request number `requestIndex` (unique within the cell): a prompt (sent with
   * the run's max output tokens) or a workload's request
   */
  promptFor: (worker: number, requestIndex: number) => CellRequestInput;
  /** scout request(s), sent one after another with max_tokens = 1, that cache the cell's context */
  scoutPrompts: CellRequestInput[];
  windowMs: number;
  gateTimeoutMs: number;
  gateSettleMs: number;
  drainTimeoutMs: number;
  metricsIntervalMs: number;
  /** aborts the whole cell (test timeout, Ctrl-C) */
  signal?: AbortSignal;
  /** progress messages for long phases */
  onPhase?: (message: string) => void;
  /**
   * client threads for the cell's streams (issue 24; load/thread-count.ts chooses it): 1 = the
   * workers run on this thread; N ≥ 2 = over N worker threads (stream-threads.ts). A multi-turn
   * cell and a custom adapter run on this thread whatever it says (the progress line says why).
   */
  threads?: number;
  /** the workers have started: what a test may do to the cell's client threads (kill one) */
  onStreamsStarted?: (control: StreamsControl) => void;
  /**
   * multi-turn workload: the C workers run these conversations (load/conversations.ts) instead of
   * `promptFor`'s independent requests; gate, window, abort and drain are the same
   */
  conversations?: CellConversations;
}

export interface CellRun {
  drain: DrainOutcome;
  scouts: RequestTimeline[];
  /** every request the workers sent (scout excluded), all ended */
  timelines: RequestTimeline[];
  /** the readiness gate: timed out, how long it waited, and the server's counts when it opened at the server's running limit */
  gate: { timedOut: boolean; waitedMs: number; atLimit?: { running: number; waiting: number } };
  windowStartMs: number;
  windowEndMs: number;
  /** metrics scrapes taken inside the window, each with the client's in-flight count at that time */
  samples: MetricsSample[];
  /** event-loop delay of the load generator from the workers' start to the window's end */
  loopDelayMs?: { p50: number; p99: number; max: number };
  /** the load generator's CPU over the same span, in cores (its thread's, where it can be read; with client threads, the busiest thread's) */
  clientCpu?: CpuReading;
  /**
   * how late the client handled response reads that were ready together, from the workers' start
   * to the window's end (client/arrival-clock.ts; with client threads, the worst thread's)
   */
  arrivalLagMs?: ArrivalLagStats;
  /** with client threads: each thread's own event-loop delay and CPU over that span */
  clientThreads?: ThreadSelfCheck[];
  /** the server's own timings per request id, where its chunks carry them (llama.cpp), for the cross-check */
  serverTimings?: Map<string, ServerRequestTimings>;
  /** how the cell's load used connections */
  connections: { opened: number; preparedUnused: number; requests: number; serverClosesAfterResponse: boolean };
  /** multi-turn cells: every worker request's conversation and turn, by id (metrics/turns.ts reads it) */
  turns?: Map<string, RequestTurn>;
}

/** the origin for a message, without user-info */
function displayOrigin(origin: string): string {
  return redactUrlCredentials(origin);
}

/**
 * The readiness gate stops waiting when every worker's last this many requests failed (with the
 * backoff, about 1.5 s): a server that fails everything is measured at once, while one that refuses
 * a start-up burst a few times and then streams is waited for as usual.
 */
export const FAILING_WORKER_REQUESTS = 5;

/**
 * The cell's clients, one per worker and one for the scout, with their connections opened. A
 * server that is down as the cell starts (a restart) is waited for; one that stays down means the
 * cell cannot start (an unreachable HttpCallError, which the cell test stores as Not run).
 */
async function openPool(session: LoadSession, C: number, signal: AbortSignal | undefined, say: (m: string) => void): Promise<WorkerDispatchers> {
  const origin = session.target.baseUrl;
  const headers = requestHeaders(session);
  return unlessServerDown(session, async () => {
    const pool = createWorkerDispatchers(origin, C + 1, { connectTimeoutMs: session.timeouts.headersMs });
    try {
      await retryWhileUnreachable(
        async () => {
          const report = await pool.preconnect({ headers });
          if (report.opened === 0) throw new HttpCallError(`no connection to ${displayOrigin(origin)} could be opened (${report.firstError ?? 'no answer'})`, 'transport');
        },
        { budgetMs: session.timeouts.unreachableRetryMs, signal, onRetry: (_e, ms) => say(`the server is not answering; trying again in ${(ms / 1000).toFixed(1)} s`) },
      );
    } catch (error) {
      await pool.destroyAll();
      throw error;
    }
    return pool;
  }, signal);
}

/** The cell's send: one request on the given client. */
function cellSend(session: LoadSession, pool: WorkerDispatchers, C: number): CellSend {
  return (id, request, dispatcherIndex, signal, onFirstToken, onChunk) =>
    sendRequest(session, {
      id,
      ...requestBody(request),
      dispatcher: pool.clients[dispatcherIndex]!,
      signal,
      ...(onFirstToken ? { onFirstToken } : {}),
      // a worker's next connection; the scout's client is retired after the scouts instead
      ...(dispatcherIndex < C ? { onConnectionClosing: () => pool.prepareNext(dispatcherIndex) } : {}),
      ...(onChunk ? { onChunk } : {}),
    });
}

/** the server's own timings per request id, where the requests' chunks carried them (llama.cpp) */
function serverTimingsOf(timelines: readonly RequestTimeline[]): { serverTimings?: Map<string, ServerRequestTimings> } {
  const map = new Map<string, ServerRequestTimings>();
  for (const t of timelines) if (t.serverTimings !== undefined) map.set(t.id, t.serverTimings);
  return map.size > 0 ? { serverTimings: map } : {};
}

/**
 * Readiness gate: every worker has a token and the server queue is empty, held for the settle
 * time. Two departures from METHOD.md (see the README), else such cells would all time out:
 * - above the server's known running limit the queue can never empty: it may hold the C − limit
 *   requests that cannot run;
 * - a server at its running limit, known or not (vLLM without its dev-mode /server_info does not
 *   say max_num_seqs), opens the gate too: requests are waiting and every request the server runs
 *   is one of ours that is decoding, and running + waiting holds all ours in flight (none in
 *   prefill), so it admits no more while these decode. Held over the settle time with the same
 *   running count in every sample; the gate's `atLimit` records the running and waiting counts.
 */
async function readinessGate(session: LoadSession, opts: CellRunOptions, state: WorkerState, signal: AbortSignal, say: (m: string) => void): Promise<CellRun['gate']> {
  const maxRunning = session.facts.maxRunningRequests?.value;
  const queueAllowed = maxRunning !== undefined ? Math.max(0, opts.concurrency - maxRunning) : 0;
  const gateStart = monoMs();
  const gateDeadline = gateStart + opts.gateTimeoutMs;
  let readySince: number | undefined;
  let gateTimedOut = false;
  let lastGateScrape = 0;
  let queueSettled = true;
  let atLimit: { running: number; waiting: number } | undefined;
  while (!signal.aborted) {
    const now = monoMs();
    if (now - lastGateScrape >= 250) {
      lastGateScrape = now;
      const s = await scrapeMetrics(session);
      // a failed scrape of a server that has metrics says nothing: not settled
      queueSettled = s === undefined ? !session.hasMetrics : s.waiting === undefined || s.waiting <= queueAllowed;
      const seen = s !== undefined ? serverAtLimit(s, state.decoding, state.inFlight.size) : undefined;
      // the same running count in every sample of the settle time (SGLang's gauges lag by a few steps)
      if (seen && atLimit && seen.running !== atLimit.running) readySince = undefined;
      atLimit = seen;
    }
    // every worker failing again and again: nothing will get ready, measure the failures now
    if (state.failingInARow.every((n) => n >= FAILING_WORKER_REQUESTS)) {
      say(`every worker's last ${FAILING_WORKER_REQUESTS} requests failed: opening the window now`);
      break;
    }
    // METHOD's condition (with the known-limit departure); else the server at its running limit
    const settled = state.gotToken.every(Boolean) && queueSettled;
    if (settled || atLimit) {
      readySince ??= now;
      if (now - readySince >= opts.gateSettleMs) {
        if (settled || !atLimit) break;
        say(`the server runs ${atLimit.running} of the ${opts.concurrency} requests and queues ${atLimit.waiting}: at its running limit, opening the window`);
        return { timedOut: false, waitedMs: monoMs() - gateStart, atLimit };
      }
    } else {
      readySince = undefined;
    }
    if (now >= gateDeadline) {
      gateTimedOut = true;
      say(`readiness gate timed out after ${Math.round(now - gateStart)} ms; measuring anyway`);
      break;
    }
    await sleep(25, signal);
  }
  return { timedOut: gateTimedOut, waitedMs: monoMs() - gateStart };
}

/**
 * The server is at its running limit: a metrics sample shows requests waiting while every request
 * it runs is one of ours that is decoding (`decoding`: workers whose request in flight has had its
 * first token), and it accounts for all of ours in flight (running + waiting ≥ `inFlight`). A
 * request in prefill is running without a token yet (vLLM, llama.cpp), or in neither count (SGLang's
 * chunked prefill): either way a server still admitting is not taken for one at its limit.
 */
export function serverAtLimit(sample: Pick<MetricsSample, 'running' | 'waiting'>, decoding: readonly boolean[], inFlight: number): { running: number; waiting: number } | undefined {
  const { running, waiting } = sample;
  if (running === undefined || waiting === undefined || waiting <= 0 || running <= 0) return undefined;
  if (running + waiting < inFlight) return undefined;
  const decodingNow = decoding.reduce((n, d) => n + (d ? 1 : 0), 0);
  return running <= decodingNow ? { running, waiting } : undefined;
}

/**
 * The window: open for windowMs, the server's metrics scraped every metricsIntervalMs inside it
 * (each with the client's in-flight count). Resolves when it closes (`windowCompleted`: not by
 * an abort); `sampler` ends after the scrape in progress.
 */
async function measureWindow(
  session: LoadSession,
  opts: CellRunOptions,
  state: WorkerState,
  signal: AbortSignal,
  onOpen: (dueMs: number) => void,
): Promise<{ windowStartMs: number; windowEndMs: number; windowCompleted: boolean; samples: MetricsSample[]; sampler: Promise<void> }> {
  const windowStartMs = monoMs();
  const windowDue = windowStartMs + opts.windowMs;
  onOpen(windowDue);
  const samples: MetricsSample[] = [];
  const sampler = sampleMetrics(session, {
    fromMs: windowStartMs,
    untilMs: windowDue,
    intervalMs: opts.metricsIntervalMs,
    inFlight: () => state.inFlight.size,
    signal,
    stopped: () => state.stopping,
  }).then((s) => void appendAll(samples, s));
  await waitUntil(windowDue, signal);
  // an abort that comes after the window closed does not throw away a measured cell
  const windowCompleted = !signal.aborted;
  return { windowStartMs, windowEndMs: monoMs(), windowCompleted, samples, sampler };
}

export async function runCell(session: LoadSession, opts: CellRunOptions): Promise<CellRun> {
  const { concurrency: C } = opts;
  const say = opts.onPhase ?? (() => {});
  const cellTag = `${session.runId}-c${opts.context}x${C}`;
  const threads = cellThreads(session, opts, say);

  const drain = await waitForIdle(session, opts.drainTimeoutMs, opts.signal, say);
  if (drain.timedOut) say(`drain barrier timed out after ${Math.round(drain.waitedMs)} ms`);

  // with client threads, the cell's own clients are the scout's only (index 0 = "C" below)
  const mainWorkers = threads > 1 ? 0 : C;
  const pool = await openPool(session, mainWorkers, opts.signal, say);
  const send = cellSend(session, pool, mainWorkers);

  // every worker's request (or backoff sleep) listens on it
  const { controller: cellAbort, dispose } = cellAbortOf(opts.signal);
  const state: WorkerState = {
    timelines: [],
    inFlight: new Set<string>(),
    gotToken: new Array<boolean>(C).fill(false),
    decoding: new Array<boolean>(C).fill(false),
    failingInARow: new Array<number>(C).fill(0),
    stopping: false,
    requestCounter: 0,
  };
  const turns = opts.conversations ? new Map<string, RequestTurn>() : undefined;
  // client threads open their connections while the scouts run
  const streams =
    threads > 1
      ? threadStreams(session, { concurrency: C, threads, cellTag, promptFor: opts.promptFor, state, onFailure: () => cellAbort.abort() })
      : cellThreadStreams(session, opts, { cellTag, send, state, signal: cellAbort.signal, turns });

  try {
    // a workload of unshared prompts (file, lengths) has no scout
    if (opts.scoutPrompts.length > 0) say(`scout request${opts.scoutPrompts.length > 1 ? `s (${opts.scoutPrompts.length})` : ''} (caches the context)`);
    const scouts: RequestTimeline[] = [];
    for (const [i, prompt] of opts.scoutPrompts.entries()) {
      if (cellAbort.signal.aborted) break;
      scouts.push(await send(`${cellTag}-scout${i}`, { ...requestOf(prompt, 1), maxTokens: 1 }, mainWorkers, cellAbort.signal));
    }
    // the scout's connection would sit idle through the window; a thread-per-connection server
    // (llama.cpp: n_parallel + 2 HTTP threads) would keep a thread on it that a worker may need
    await pool.retire(mainWorkers);

    say(`starting ${C} worker${C === 1 ? '' : 's'}${threads > 1 ? ` on ${threads} client threads` : ''}`);
    // the event-loop monitors cover the burst before the window too: TTFT samples come from it
    await streams.start();
    opts.onStreamsStarted?.(streams.control);

    const gate = await readinessGate(session, opts, state, cellAbort.signal, say);

    say(`window open for ${(opts.windowMs / 1000).toFixed(1)} s`);
    const { windowStartMs, windowEndMs, windowCompleted, samples, sampler } = await measureWindow(session, opts, state, cellAbort.signal, (due) => streams.windowOpen(due));
    streams.stop();

    // End: no new requests, abort everything in flight (the engine's abort call where it has one).
    state.stopping = true;
    const aborting = [...state.inFlight];
    // the aborted requests' clients would each open one more connection (pool.ts stopConnecting)
    pool.stopConnecting();
    cellAbort.abort();
    // with client threads each thread calls it for its own requests (it knows the newest at once),
    // unless one failed: every thread is then terminated, and this thread calls it for what it knows
    if (threads <= 1 || streams.control.failure !== undefined) await abortOnServer(session, aborting);
    const outcome = await streams.finished;
    await sampler;
    if (streams.control.failure) throw streams.control.failure;
    if (!windowCompleted) throw opts.signal?.reason ?? new Error('cell aborted before its window closed');
    const connections = {
      ...sumConnectionCounts([await pool.connectionCounts(), outcome.connections]),
      requests: scouts.length + state.timelines.length,
      serverClosesAfterResponse: session.connections.closesAfterResponse,
    };
    return {
      drain,
      scouts,
      timelines: state.timelines,
      gate,
      windowStartMs,
      windowEndMs,
      samples,
      ...(outcome.loopDelayMs ? { loopDelayMs: outcome.loopDelayMs } : {}),
      ...(outcome.arrivalLagMs ? { arrivalLagMs: outcome.arrivalLagMs } : {}),
      clientCpu: outcome.clientCpu,
      ...(outcome.threads ? { clientThreads: outcome.threads } : {}),
      connections,
      ...serverTimingsOf([...scouts, ...state.timelines]),
      ...(turns ? { turns } : {}),
    };
  } finally {
    cellAbort.abort();
    dispose();
    await streams.control.terminateAll();
    await pool.destroyAll();
  }
}
