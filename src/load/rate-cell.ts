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
import type { CpuSource } from './client-cpu.js';
import type { ArrivalLagStats } from '../client/arrival-clock.js';
import { startSelfCheck } from './self-check.js';
import { cellAbortOf, requestBody, requestOf, sampleMetrics, sendRequest, sleep, type CellRequestInput, type LoadSession } from './session.js';
import { waitForIdle, type DrainOutcome } from './drain.js';
import type { ArrivalSchedule } from './arrivals.js';

export interface RateRunOptions {
  context: number;
  /** requests per second inside the window; names the cell's requests */
  rate: number;
  /** the due times, fixed before the window opens */
  schedule: ArrivalSchedule;
  /**
   * request number `index` (unique within the cell): a prompt (sent with the run's max output
   * tokens) or a workload's request; called at its due time, so it must not wait for anything
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
}

/** A request of a rate cell: its timeline and when the schedule said to send it. */
export interface ScheduledTimeline {
  timeline: RequestTimeline;
  /** monoMs() time the schedule gave it */
  scheduledMs: number;
  /** it waited for the in-flight ceiling before it could be sent */
  waitedForCeiling: boolean;
}

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
  clientCpu?: { cores: number; source: CpuSource };
}

/** one turn of the event loop, after its pending I/O */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves at `dueMs` (monoMs), not before: a timer wakes the loop about 1 ms early (timers have
 * 1 ms steps and may round down); the last fraction is waited out turn by turn of the event loop,
 * so I/O still runs between turns.
 */
async function waitUntil(dueMs: number, signal: AbortSignal): Promise<void> {
  const early = dueMs - monoMs();
  if (early >= 2) await sleep(early - 1, signal);
  while (!signal.aborted && dueMs - monoMs() > 0) await nextTurn();
}

/** Free connections, one request each at a time; the pool is sized to the ceiling, opened lazily. */
class ConnectionLanes {
  private readonly free: number[] = [];
  private readonly waiters: Array<(lane: number) => void> = [];
  constructor(readonly total: number) {
    for (let i = total - 1; i >= 0; i--) this.free.push(i);
  }
  /** a free lane now, or undefined when every lane is busy */
  tryTake(): number | undefined {
    return this.free.pop();
  }
  /** the next lane that comes free */
  wait(): Promise<number> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  give(lane: number): void {
    const next = this.waiters.shift();
    if (next) next(lane);
    else this.free.push(lane);
  }
  /** wake every waiter with no lane (the window closed) */
  release(): void {
    for (const w of this.waiters.splice(0)) w(-1);
  }
}

/** Sends the schedule's requests at their times from `startMs`; resolves when every sent one ended. */
async function followSchedule(
  session: LoadSession,
  opts: RateRunOptions,
  pool: WorkerDispatchers,
  startMs: number,
  signal: AbortSignal,
  inFlight: Set<string>,
): Promise<{ requests: ScheduledTimeline[]; unsent: number; peak: number; waited: number }> {
  const lanes = new ConnectionLanes(opts.maxInFlight);
  const { atMs } = opts.schedule;
  const tag = `${session.runId}-r${opts.context}x${opts.rate}`;
  const requests: ScheduledTimeline[] = [];
  const pending: Array<Promise<void>> = [];
  let peak = 0;
  let waited = 0;
  let unsent = 0;
  signal.addEventListener('abort', () => lanes.release(), { once: true });
  const send = (i: number, lane: number, waitedForCeiling: boolean) => {
    const id = `${tag}-q${i}`;
    inFlight.add(id);
    peak = Math.max(peak, inFlight.size);
    return sendRequest(session, { id, ...requestBody(requestOf(opts.promptFor(i), session.maxOutputTokens)), dispatcher: pool.clients[lane]!, signal }).then((timeline) => {
      inFlight.delete(id);
      lanes.give(lane);
      requests.push({ timeline, scheduledMs: startMs + atMs[i]!, waitedForCeiling });
    });
  };
  for (let i = 0; i < atMs.length && !signal.aborted; i++) {
    const due = startMs + atMs[i]!;
    await waitUntil(due, signal);
    if (signal.aborted) break;
    let lane = lanes.tryTake();
    if (lane === undefined) {
      waited++;
      lane = await lanes.wait();
      if (lane < 0 || signal.aborted) {
        unsent = atMs.length - i;
        break;
      }
      pending.push(send(i, lane, true));
    } else {
      pending.push(send(i, lane, false));
    }
  }
  await Promise.all(pending);
  requests.sort((a, b) => a.scheduledMs - b.scheduledMs);
  return { requests, unsent, peak, waited };
}

/** Run one rate cell. Throws only when aborted from outside before its window closed. */
export async function runRateCell(session: LoadSession, opts: RateRunOptions): Promise<RateRun> {
  const say = opts.onPhase ?? (() => {});
  const drain = await waitForIdle(session, opts.drainTimeoutMs, opts.signal, say);
  if (drain.timedOut) say(`drain barrier timed out after ${Math.round(drain.waitedMs)} ms`);
  // one more client for the scout; the others open as requests need them
  const pool = createWorkerDispatchers(session.target.baseUrl, opts.maxInFlight + 1, { connectTimeoutMs: session.timeouts.headersMs });
  const { controller: cellAbort, dispose } = cellAbortOf(opts.signal);
  try {
    const scouts: RequestTimeline[] = [];
    for (const [i, prompt] of opts.scoutPrompts.entries()) {
      if (cellAbort.signal.aborted) break;
      const id = `${session.runId}-r${opts.context}x${opts.rate}-scout${i}`;
      scouts.push(await sendRequest(session, { id, ...requestBody({ ...requestOf(prompt, 1), maxTokens: 1 }), dispatcher: pool.clients[opts.maxInFlight]!, signal: cellAbort.signal }));
    }
    await pool.retire(opts.maxInFlight);
    const rampS = opts.schedule.windowStartMs / 1000;
    say(`${opts.rate} requests/s${rampS > 0 ? ` after a ${rampS.toFixed(1)} s ramp` : ''}: window of ${(opts.windowMs / 1000).toFixed(1)} s`);
    const self = startSelfCheck();
    // a short lead so the first due time is not already late when the loop starts
    const startMs = monoMs() + 20;
    const windowStartMs = startMs + opts.schedule.windowStartMs;
    const windowDue = windowStartMs + opts.windowMs;
    const inFlight = new Set<string>();
    const following = followSchedule(session, opts, pool, startMs, cellAbort.signal, inFlight);
    const sampling = sampleMetrics(session, { fromMs: windowStartMs, untilMs: windowDue, intervalMs: opts.metricsIntervalMs, inFlight: () => inFlight.size, signal: cellAbort.signal });
    await waitUntil(windowDue, cellAbort.signal);
    const windowCompleted = !cellAbort.signal.aborted;
    const windowEndMs = monoMs();
    const { loopDelayMs, arrivalLagMs, cpu: clientCpu } = self.stop();
    const aborting = [...inFlight];
    cellAbort.abort();
    if (session.adapter.abort) await Promise.allSettled(aborting.map((id) => session.adapter.abort!(session.target, id)));
    const followed = await following;
    const samples = await sampling;
    if (!windowCompleted) throw opts.signal?.reason ?? new Error('rate cell aborted before its window closed');
    return {
      drain,
      scouts,
      requests: followed.requests,
      unsent: followed.unsent,
      windowStartMs,
      windowEndMs,
      samples,
      ceiling: { maxInFlight: opts.maxInFlight, peakInFlight: followed.peak, waited: followed.waited },
      loopDelayMs,
      ...(arrivalLagMs ? { arrivalLagMs } : {}),
      clientCpu,
    };
  } finally {
    cellAbort.abort();
    dispose();
    await pool.destroyAll();
  }
}
