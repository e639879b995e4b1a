/**
 * A cell's streams over N client threads (issue 24): each worker thread (stream-thread-main.ts)
 * runs a contiguous share of the cell's C closed-loop workers with its own event loop, undici
 * clients and meters; the cell's own thread keeps the gate, the window, the metrics samples and
 * the abort, and the worker state they read (load/worker-state.ts) is kept here from the threads'
 * messages. Requests are made on the cell's thread (the workload's `promptFor`) and handed to a
 * worker's thread one ahead, so a worker never waits for its next prompt.
 *
 * One clock: every thread times with clock.ts's monoMs (CLOCK_MONOTONIC, the same in every thread
 * of the process); a thread's `ready` carries its clock, checked against the cell's at receipt.
 *
 * A thread that dies (an exception, an exit), one that reports an error, one that is not ready in
 * time and one that does not end its workers after the window fail the cell (ClientThreadError,
 * naming the thread, its workers and what happened) and never the run: every thread is then
 * terminated, and the cell's abort stops the gate or the window at once.
 */
import { Worker } from 'node:worker_threads';
import type { ServerRequestTimings } from '../shapes/engine.js';
import type { WorkloadRequest } from '../shapes/workload.js';
import { monoMs } from '../clock.js';
import type { EventLoopDelayStats } from './loop-monitor.js';
import type { ArrivalLagStats } from '../client/arrival-clock.js';
import { requestOf, type CellRequestInput, type LoadSession } from './session.js';
import type { FromThread, ThreadSetup, ToThread } from './thread-messages.js';
import type { WorkerState } from './worker-state.js';

/** A client thread failed: the cell has no figures (the cell test stores it as not run, with this message). */
export class ClientThreadError extends Error {
  override readonly name = 'ClientThreadError';
}

/**
 * Requests each worker holds before it needs them: its current one and the next, so a thread can
 * report its news in batches (stream-thread-main.ts) without a worker waiting for its next prompt.
 */
export const REQUESTS_AHEAD = 2;
/** how long a thread may take to open its connections and say ready */
export const THREAD_READY_TIMEOUT_MS = 60_000;
/** how long a thread may take to end its workers after the window's end */
export const THREAD_STOP_TIMEOUT_MS = 10_000;
/** a thread's clock may differ from the cell's by this much at the ready check (the message's own trip is allowed for) */
export const THREAD_CLOCK_TOLERANCE_MS = 1;

/** What each thread measured of itself from the workers' start to the window's end. */
export interface ThreadSelfCheck {
  thread: number;
  loopDelayMs?: EventLoopDelayStats;
  /** how late the thread handled response reads that were ready together (client/arrival-clock.ts) */
  arrivalLagMs?: ArrivalLagStats;
  cpuCores: number;
}

export interface ThreadsOutcome {
  perThread: ThreadSelfCheck[];
  connectionsOpened: number;
}

export interface ClientThreadsOptions {
  concurrency: number;
  threads: number;
  cellTag: string;
  promptFor: (worker: number, requestIndex: number) => CellRequestInput;
  state: WorkerState;
  serverTimings: Map<string, ServerRequestTimings>;
  /** called once at the first failure (the cell's abort) */
  onFailure: (error: ClientThreadError) => void;
}

export interface ClientThreads {
  /** every thread has its connections open (or the cell has failed: see `failure`) */
  ready: Promise<void>;
  /** start every worker with its first request */
  go(): void;
  /** the window has closed: every thread stops its meters and ends its workers */
  stop(): void;
  /** every thread has reported (or been terminated after a failure) */
  finished: Promise<ThreadsOutcome>;
  /** the first failure, if any */
  readonly failure: ClientThreadError | undefined;
  /** end thread k now, as a crash would (tests: a thread killed mid-cell) */
  kill(thread: number): Promise<void>;
  /** terminate every thread still running */
  terminateAll(): Promise<void>;
}

/** Worker w's thread: C workers in N contiguous shares, the first C mod N one larger. */
export function threadShares(concurrency: number, threads: number): Array<{ firstWorker: number; workerCount: number }> {
  const base = Math.floor(concurrency / threads);
  const extra = concurrency % threads;
  const shares: Array<{ firstWorker: number; workerCount: number }> = [];
  let first = 0;
  for (let k = 0; k < threads; k++) {
    const count = base + (k < extra ? 1 : 0);
    shares.push({ firstWorker: first, workerCount: count });
    first += count;
  }
  return shares.filter((s) => s.workerCount > 0);
}

interface Running {
  worker: Worker;
  share: { firstWorker: number; workerCount: number };
  ready: boolean;
  done?: Extract<FromThread, { kind: 'done' }>;
  exited: boolean;
}

/** The threads of one cell and the worker state kept from their messages. */
class ThreadSet implements ClientThreads {
  readonly ready: Promise<void>;
  readonly finished: Promise<ThreadsOutcome>;
  private firstFailure: ClientThreadError | undefined;
  private readonly running: Running[] = [];
  private readonly spawnedAt = monoMs();
  private readyCount = 0;
  private endedCount = 0;
  private resolveReady!: () => void;
  private resolveEnded!: () => void;
  private readonly readyTimer: NodeJS.Timeout;
  private stopTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly session: LoadSession,
    private readonly o: ClientThreadsOptions,
  ) {
    this.ready = new Promise<void>((r) => (this.resolveReady = r));
    const allEnded = new Promise<void>((r) => (this.resolveEnded = r));
    for (const [k, share] of threadShares(o.concurrency, o.threads).entries()) this.spawn(k, share);
    this.readyTimer = setTimeout(() => {
      const late = this.running.findIndex((r) => !r.ready);
      if (late >= 0) this.fail(late, `was not ready within ${THREAD_READY_TIMEOUT_MS / 1000} s`);
    }, THREAD_READY_TIMEOUT_MS);
    void this.ready.then(() => clearTimeout(this.readyTimer));
    this.finished = allEnded.then(() => this.outcome());
  }

  get failure(): ClientThreadError | undefined {
    return this.firstFailure;
  }

  private spawn(k: number, share: { firstWorker: number; workerCount: number }): void {
    const { session } = this;
    const setup: ThreadSetup = {
      thread: k,
      threads: threadShares(this.o.concurrency, this.o.threads).length,
      ...share,
      cellTag: this.o.cellTag,
      engine: session.adapter.kind,
      target: session.target,
      facts: session.facts,
      model: session.model,
      endpoint: session.endpoint,
      timeouts: session.timeouts,
      runId: session.runId,
      closesAfterResponse: session.connections.closesAfterResponse,
      ...(session.localTokenizer ? { localTokenizerPath: session.localTokenizer.path } : {}),
    };
    const worker = new Worker(new URL('./stream-thread.mjs', import.meta.url), {
      workerData: setup,
      // a larger young generation: fewer scavenges interrupting the streams (as the sim's thread)
      resourceLimits: { maxYoungGenerationSizeMb: 64 },
    });
    this.running.push({ worker, share, ready: false, exited: false });
    worker.on('message', (m: FromThread) => this.onMessage(k, m));
    worker.on('error', (e) => this.fail(k, `died: ${e.message}`));
    worker.on('exit', (code) => {
      const r = this.running[k]!;
      if (!r.done) this.fail(k, `exited (code ${code}) before it reported its requests`);
      if (r.exited) return;
      r.exited = true;
      if (++this.endedCount === this.running.length) this.resolveEnded();
    });
  }

  private name(k: number): string {
    const s = this.running[k]!.share;
    return `client thread ${k + 1} of ${this.running.length} (workers ${s.firstWorker}–${s.firstWorker + s.workerCount - 1})`;
  }

  private fail(k: number, what: string): void {
    if (this.firstFailure) return;
    this.firstFailure = new ClientThreadError(`${this.name(k)} ${what}; the cell's figures are not reported`);
    this.o.onFailure(this.firstFailure);
    this.resolveReady();
    void this.terminateAll();
  }

  private next(w: number): WorkloadRequest {
    return requestOf(this.o.promptFor(w, this.o.state.requestCounter++), this.session.maxOutputTokens);
  }

  /** hand worker w (on thread k) its next request; a request that cannot be made fails the cell as a thread would */
  private give(k: number, w: number): void {
    let request: WorkloadRequest;
    try {
      request = this.next(w);
    } catch (e) {
      this.fail(k, `could not be given worker ${w}'s next request (${e instanceof Error ? e.message : String(e)})`);
      return;
    }
    this.running[k]!.worker.postMessage({ kind: 'request', w, request } satisfies ToThread);
  }

  private onMessage(k: number, m: FromThread): void {
    const r = this.running[k]!;
    const { state } = this.o;
    switch (m.kind) {
      case 'batch':
        for (const n of m.news) this.onMessage(k, n);
        return;
      case 'ready': {
        const now = monoMs();
        if (m.monoMs > now + THREAD_CLOCK_TOLERANCE_MS || m.monoMs < this.spawnedAt - THREAD_CLOCK_TOLERANCE_MS) {
          this.fail(k, `has a clock ${(m.monoMs - now).toFixed(1)} ms off the cell's (checked at start)`);
        } else if (m.opened === 0) {
          this.fail(k, `could not open a connection to the server (${m.firstError ?? 'no answer'})`);
        } else {
          r.ready = true;
          if (++this.readyCount === this.running.length) this.resolveReady();
        }
        return;
      }
      case 'sent':
        state.inFlight.add(m.id);
        if (!state.stopping) this.give(k, m.w);
        return;
      case 'first':
        state.gotToken[m.w] = true;
        state.failingInARow[m.w] = 0;
        return;
      case 'ended':
        state.inFlight.delete(m.timeline.id);
        state.timelines.push(m.timeline);
        state.failingInARow[m.w] = m.failingInARow;
        if (m.serverTimings) this.o.serverTimings.set(m.timeline.id, m.serverTimings);
        return;
      case 'done':
        r.done = m;
        if (m.learnedClose) this.session.connections.noteCloseAfterResponse(m.learnedClose.requestId, m.learnedClose.idleMs);
        return;
      case 'error':
        this.fail(k, `failed: ${m.message}`);
        return;
    }
  }

  private outcome(): ThreadsOutcome {
    clearTimeout(this.stopTimer);
    clearTimeout(this.readyTimer);
    return {
      perThread: this.running.map((r, k) => ({
        thread: k,
        ...(r.done?.loopDelayMs ? { loopDelayMs: r.done.loopDelayMs } : {}),
        ...(r.done?.arrivalLagMs ? { arrivalLagMs: r.done.arrivalLagMs } : {}),
        cpuCores: r.done?.cpu.cores ?? 0,
      })),
      connectionsOpened: this.running.reduce((n, r) => n + (r.done?.connectionsOpened ?? 0), 0),
    };
  }

  go(): void {
    if (this.firstFailure) return;
    for (const [k, r] of this.running.entries()) {
      let first: Array<{ w: number; request: WorkloadRequest }>;
      try {
        // REQUESTS_AHEAD per worker: its first, and the next while the first streams
        first = Array.from({ length: r.share.workerCount * REQUESTS_AHEAD }, (_, i) => {
          const w = r.share.firstWorker + (i % r.share.workerCount);
          return { w, request: this.next(w) };
        });
      } catch (e) {
        this.fail(k, `could not be given its workers' first requests (${e instanceof Error ? e.message : String(e)})`);
        return;
      }
      r.worker.postMessage({ kind: 'go', first } satisfies ToThread);
    }
  }

  stop(): void {
    for (const r of this.running) if (!r.exited) r.worker.postMessage({ kind: 'stop' } satisfies ToThread);
    this.stopTimer = setTimeout(() => {
      const stuck = this.running.findIndex((r) => !r.exited);
      if (stuck >= 0) this.fail(stuck, `did not end its workers within ${THREAD_STOP_TIMEOUT_MS / 1000} s of the window's end`);
    }, THREAD_STOP_TIMEOUT_MS);
  }

  async kill(k: number): Promise<void> {
    await this.running[k]?.worker.terminate();
  }

  async terminateAll(): Promise<void> {
    await Promise.all(this.running.map((r) => (r.exited ? undefined : r.worker.terminate())));
  }
}

export function startClientThreads(session: LoadSession, o: ClientThreadsOptions): ClientThreads {
  return new ThreadSet(session, o);
}
