/**
 * The open-loop rate cell runner (issue 22): drain barrier, scout, then requests sent at the times
 * a fixed schedule says (load/arrivals.ts), whether or not the server has finished the earlier
 * ones; server metrics sampled inside the window; then abort of everything in flight. It returns
 * raw timelines, each with its scheduled time, and the schedule; figures are computed in
 * src/metrics (open-loop.ts) and the status in src/judge (rate.ts).
 *
 * Sends never wait on the server. Each request in flight has its own connection (one undici
 * Client, pipelining 1, from a free list that grows as needed): the number in flight is bounded
 * only by `maxInFlight`. A due request that finds the ceiling reached waits for a free connection;
 * that wait is counted (`ceiling.waited`) and shows in its dispatch delay, never hidden.
 */
import { monoMs } from '../clock.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { MetricsSample } from '../shapes/engine.js';
import { createWorkerDispatchers, type WorkerDispatchers } from '../client/pool.js';
import type { CpuReading } from './client-cpu.js';
import type { ArrivalLagStats } from '../client/arrival-clock.js';
import { startSelfCheck, worstOfThreads } from './self-check.js';
import { abortOnServer, cellAbortOf, requestBody, requestOf, sampleMetrics, sendRequest, waitUntil, type CellRequestInput, type LoadSession } from './session.js';
import { waitForIdle, type DrainOutcome } from './drain.js';
import type { ArrivalSchedule } from './arrivals.js';
import { dueRequestId, followSchedule, sendDue, type FollowOutcome, type ScheduledTimeline } from './schedule-follower.js';
import { startRateThreads } from './rate-threads.js';
import { adapterRunsOnThreads } from './cell-streams.js';

export interface RateRunOptions {
  context: number;
  /** requests per second inside the window; names the cell's requests */
  rate: number;
  /** the due times, fixed before the window opens */
  schedule: ArrivalSchedule;
  /**
   * request number `index` (unique within the cell): a prompt (sent with the run's max output
   * tokens) or a workload's request; called once, shortly before its due time (one ahead on the
   * cell's own thread, rate-threads.ts LOOKAHEAD_MS ahead with client threads), so it must not
   * wait for anything
   */
  promptFor: (index: number) => CellRequestInput;
  scoutPrompts: CellRequestInput[];
  windowMs: number;
  /** the most requests in flight at once (the client's ceiling) */
  maxInFlight: number;
  drainTimeoutMs: number;
  metricsIntervalMs: number;
  signal?: AbortSignal;
  onPhase?: (message: string) => void;
  /** client threads to send the schedule from (rate-threads.ts); 1 or absent: this thread */
  threads?: number;
  /** tests: called once the threads are ready, with a way to end thread k as a crash would */
  onThreads?: (kill: (thread: number) => Promise<void>) => void;
}

export type { ScheduledTimeline } from './schedule-follower.js';

export interface RateRun {
  drain: DrainOutcome;
  scouts: RequestTimeline[];
  /** every scheduled request that was sent (ramp included), all ended */
  requests: ScheduledTimeline[];
  /** requests due before the window closed that were never sent (the ceiling held them to the end) */
  unsent: number;
  windowStartMs: number;
  windowEndMs: number;
  samples: MetricsSample[];
  ceiling: { maxInFlight: number; peakInFlight: number; waited: number };
  loopDelayMs?: { p50: number; p99: number; max: number };
  /** how late the client handled response reads that were ready together (client/arrival-clock.ts) */
  arrivalLagMs?: ArrivalLagStats;
  clientCpu?: CpuReading;
  /** the client threads that sent the schedule (absent: the cell's own thread) */
  clientThreads?: number;
}

/** Sends the schedule's requests at their times from `startMs` on this thread; resolves when every sent one ended. */
function followHere(session: LoadSession, opts: RateRunOptions, pool: WorkerDispatchers, startMs: number, signal: AbortSignal, inFlight: Set<string>): Promise<FollowOutcome> {
  const { atMs } = opts.schedule;
  const tag = rateTag(session, opts);
  let i = 0;
  return followSchedule({
    // made one ahead, before its due time: the workload's request never delays a send
    next: () => (i < atMs.length ? { index: i, dueMs: startMs + atMs[i]!, request: requestOf(opts.promptFor(i++), session.maxOutputTokens) } : undefined),
    remaining: () => atMs.length - i,
    lanes: opts.maxInFlight,
    send: (d, lane, s) => sendDue(session, tag, d, pool.clients[lane]!, s),
    signal,
    onSent: (d) => void inFlight.add(dueRequestId(tag, d)),
    onEnded: (s) => void inFlight.delete(s.timeline.id),
  });
}

/** the prefix of a rate cell's request ids */
export function rateTag(session: LoadSession, opts: Pick<RateRunOptions, 'context' | 'rate'>): string {
  return `${session.runId}-r${opts.context}x${opts.rate}`;
}

/** Run one rate cell. Throws only when aborted from outside before its window closed, or when a client thread failed (ClientThreadError). */
export async function runRateCell(session: LoadSession, opts: RateRunOptions): Promise<RateRun> {
  const say = opts.onPhase ?? (() => {});
  const drain = await waitForIdle(session, opts.drainTimeoutMs, opts.signal, say);
  if (drain.timedOut) say(`drain barrier timed out after ${Math.round(drain.waitedMs)} ms`);
  let threaded = (opts.threads ?? 1) > 1;
  if (threaded && !adapterRunsOnThreads(session)) {
    say(`client threads: the adapter is not a built-in engine's, so the schedule is sent from one thread (asked for ${opts.threads})`);
    threaded = false;
  }
  // one client for the scout, and without threads the cell's lanes before it (they open as requests need them)
  const scoutLane = threaded ? 0 : opts.maxInFlight;
  const pool = createWorkerDispatchers(session.target.baseUrl, scoutLane + 1, { connectTimeoutMs: session.timeouts.headersMs });
  const { controller: cellAbort, dispose } = cellAbortOf(opts.signal);
  // the threads start while the scouts run (a thread takes a moment to load its code)
  const threads = threaded ? startRateThreads(session, { threads: opts.threads!, maxInFlight: opts.maxInFlight, cellTag: rateTag(session, opts), onFailure: () => cellAbort.abort() }) : undefined;
  try {
    const scouts: RequestTimeline[] = [];
    for (const [i, prompt] of opts.scoutPrompts.entries()) {
      if (cellAbort.signal.aborted) break;
      const id = `${rateTag(session, opts)}-scout${i}`;
      scouts.push(await sendRequest(session, { id, ...requestBody({ ...requestOf(prompt, 1), maxTokens: 1 }), dispatcher: pool.clients[scoutLane]!, signal: cellAbort.signal }));
    }
    await pool.retire(scoutLane);
    if (threads) {
      await threads.ready;
      if (threads.failure) throw threads.failure;
      opts.onThreads?.((k) => threads.kill(k));
    }
    const rampS = opts.schedule.windowStartMs / 1000;
    const over = threads ? ` over ${threads.threadCount} client threads` : '';
    say(`${opts.rate} requests/s${over}${rampS > 0 ? ` after a ${rampS.toFixed(1)} s ramp` : ''}: window of ${(opts.windowMs / 1000).toFixed(1)} s`);
    const self = threads ? undefined : startSelfCheck();
    // a short lead so the first due time is not already late when the loop starts (threads: when their first requests reach them)
    const startMs = monoMs() + (threads ? 50 : 20);
    const windowStartMs = startMs + opts.schedule.windowStartMs;
    const windowDue = windowStartMs + opts.windowMs;
    const inFlight = threads?.inFlight ?? new Set<string>();
    const following = threads ? undefined : followHere(session, opts, pool, startMs, cellAbort.signal, inFlight);
    threads?.go(startMs, opts.schedule, opts.promptFor, session.maxOutputTokens);
    const sampling = sampleMetrics(session, { fromMs: windowStartMs, untilMs: windowDue, intervalMs: opts.metricsIntervalMs, inFlight: () => inFlight.size, signal: cellAbort.signal });
    await waitUntil(windowDue, cellAbort.signal);
    const windowCompleted = !cellAbort.signal.aborted;
    const windowEndMs = monoMs();
    const here = self?.stop();
    const aborting = [...inFlight];
    threads?.stop(windowEndMs);
    cellAbort.abort();
    // with client threads each thread calls it for its own requests (it knows the newest at once),
    // unless one failed: every thread is then terminated, and this thread calls it for what it knows
    if (!threads || threads.failure !== undefined) await abortOnServer(session, aborting);
    const fromThreads = threads ? await threads.result(windowEndMs, startMs) : undefined;
    const followed: FollowOutcome = fromThreads ?? (await following!);
    const samples = await sampling;
    if (threads?.failure) throw threads.failure;
    if (!windowCompleted) throw opts.signal?.reason ?? new Error('rate cell aborted before its window closed');
    // with threads, the worst thread's self-check decides (as for a closed-loop cell's threads)
    const measured = fromThreads
      ? worstOfThreads(fromThreads.perThread)
      : { ...(here?.loopDelayMs ? { loopDelayMs: here.loopDelayMs } : {}), ...(here?.arrivalLagMs ? { arrivalLagMs: here.arrivalLagMs } : {}), clientCpu: here!.cpu };
    return {
      drain,
      scouts,
      requests: followed.requests,
      unsent: followed.unsent,
      windowStartMs,
      windowEndMs,
      samples,
      ceiling: { maxInFlight: opts.maxInFlight, peakInFlight: followed.peak, waited: followed.waited },
      ...measured,
      ...(threads ? { clientThreads: threads.threadCount } : {}),
    };
  } finally {
    cellAbort.abort();
    dispose();
    await threads?.terminateAll();
    await pool.destroyAll();
  }
}
