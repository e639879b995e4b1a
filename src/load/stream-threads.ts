/**
 * A cell's streams over N client threads (issue 24): each worker thread (stream-thread-main.ts)
 * runs a contiguous share of the cell's C closed-loop workers with its own event loop, undici
 * clients and meters; the cell's own thread keeps the gate, the window, the metrics samples and
 * the abort (each thread makes the engine's abort call for its own requests running at the
 * window's end), and the worker state they read (load/worker-state.ts) is kept here from the
 * threads' messages. Requests are made on the cell's thread (the workload's `promptFor`) and
 * handed to a worker's thread one ahead, so a worker never waits for its next prompt.
 *
 * One clock: every thread times with clock.ts's monoMs (CLOCK_MONOTONIC, the same in every thread
 * of the process), checked when a thread says ready: asked for its clock, its answer must fall
 * between the question and the answer's receipt (within THREAD_CLOCK_TOLERANCE_MS).
 *
 * A thread that dies (an exception, an exit), reports an error, cannot be started, is not ready in
 * time, says nothing for THREAD_SILENT_LIMIT_MS once ready (stuck) or does not end its workers
 * after the window, and every thread opening no connection (one that opened none while others did
 * goes on: its workers connect at their first request, as on the cell's own thread), fail the cell
 * (ClientThreadError, naming the thread, its workers and what happened) and never the run: every
 * thread is then terminated, and the cell's abort stops the gate or the window at once.
 */
import { Worker } from 'node:worker_threads';
import type { WorkloadRequest } from '../shapes/workload.js';
import { monoMs } from '../clock.js';
import { DEFAULT_PRECONNECT_CONCURRENCY, DEFAULT_PRECONNECT_TIMEOUT_MS } from '../client/pool.js';
import type { ThreadSelfCheck } from './self-check.js';
import { threadShares } from './thread-count.js';
import { requestOf, type CellRequestInput, type LoadSession } from './session.js';
import { watchForSilence, type Heard } from './thread-watch.js';
import type { FromThread, RequestNews, ThreadSetup, ToThread } from './thread-messages.js';
import type { WorkerState } from './worker-state.js';
import { sumConnectionCounts, type ConnectionCounts } from '../client/pool.js';
import { maxOf } from '../extent.js';

/** A client thread failed: the cell has no figures (the cell test stores it as not run, with this message). */
export class ClientThreadError extends Error { override readonly name = 'ClientThreadError'; }

/**
 * Requests each worker holds before it needs them: its current one and the next, so a thread can
 * report its news in batches (stream-thread-main.ts) without a worker waiting for its next prompt.
 */
export const REQUESTS_AHEAD = 2;
/** how long a thread may take to load its code and say ready, besides opening its connections (threadReadyTimeoutMs) */
export const THREAD_READY_TIMEOUT_MS = 60_000;

/**
 * How long the threads may take to say ready: THREAD_READY_TIMEOUT_MS, and the longest the
 * largest share's connections may take to open (client/pool.ts preconnect, 64 at a time, each
 * within the connect timeout, then its GET's head and body within theirs), as long as the cell's
 * own thread would wait for them.
 */
export function threadReadyTimeoutMs(largestShare: number, connectTimeoutMs: number): number {
  return THREAD_READY_TIMEOUT_MS + Math.ceil(largestShare / DEFAULT_PRECONNECT_CONCURRENCY) * (connectTimeoutMs + 2 * DEFAULT_PRECONNECT_TIMEOUT_MS);
}
/** how long a thread may take to end its workers after the window's end */
export const THREAD_STOP_TIMEOUT_MS = 10_000;
/** a ready thread that says nothing this long (not even 'alive') is stuck: its loop is blocked */
export const THREAD_SILENT_LIMIT_MS = 10_000;
/** a thread's clock may lie this far outside the clock check's round trip (the trip itself is allowed for) */
export const THREAD_CLOCK_TOLERANCE_MS = 1;

export interface ThreadsOutcome {
  perThread: ThreadSelfCheck[];
  connections: ConnectionCounts;
}

export interface ClientThreadsOptions extends ThreadSetOptions {
  concurrency: number;
  threads: number;
  promptFor: (worker: number, requestIndex: number) => CellRequestInput;
  state: WorkerState;
}

export interface ClientThreads {
  /** every thread has its connections open (or the cell has failed: see `failure`) */
  ready: Promise<void>;
  /** start every worker with its first request */
  go(): void;
  /** the window is open and closes at endMs: each thread stops sending there on its own timer */
  windowOpen(endMs: number): void;
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

interface Running {
  worker: Worker;
  share: { firstWorker: number; workerCount: number };
  ready: boolean;
  /** connections it opened before saying ready (undefined: it opens them as requests need them) */
  opened?: number;
  /** when the cell's thread asked for its clock (after its ready) */
  clockAskedMs?: number;
  /** when its last message came (monoMs) */
  heardMs: number;
  done?: Extract<FromThread, { kind: 'done' }>;
  exited: boolean;
}

/** What every kind of a cell's thread set shares: the cell's tag and its failure callback. */
export interface ThreadSetOptions {
  cellTag: string;
  /** called once at the first failure (the cell's abort) */
  onFailure: (error: ClientThreadError) => void;
  /** how long a ready thread may say nothing before it fails the cell as stuck (default THREAD_SILENT_LIMIT_MS; tests) */
  silentLimitMs?: number;
}

/**
 * The threads of one cell: spawned with their shares, checked ready (clock, connections), stopped,
 * and failed as one (the first failure names its thread, terminates every thread and aborts the
 * cell). What their request news means is the subclass's: closed-loop workers (ClosedLoopThreads)
 * or a rate cell's schedule (rate-threads.ts).
 */
export abstract class ThreadSetBase {
  readonly ready: Promise<void>;
  readonly finished: Promise<ThreadsOutcome>;
  private firstFailure: ClientThreadError | undefined;
  protected readonly running: Running[] = [];
  private readyCount = 0;
  private endedCount = 0;
  private resolveReady!: () => void;
  private resolveEnded!: () => void;
  private readonly readyTimer: NodeJS.Timeout;
  private stopTimer: NodeJS.Timeout | undefined;
  /** stops the watch for a silent thread, from every thread's ready to their end */
  private stopWatch: (() => void) | undefined;
  /** the first error a thread met opening its connections */
  private firstConnectError: string | undefined;
  /** each thread's workers (or lanes), as asked: a thread that could not be started has none running */
  private readonly shares: ReadonlyArray<{ firstWorker: number; workerCount: number }>;

  /** `shares[k]`: thread k's workers (a rate cell: its lanes, `unit` 'lanes') */
  constructor(
    protected readonly session: LoadSession,
    private readonly base: ThreadSetOptions,
    shares: ReadonlyArray<{ firstWorker: number; workerCount: number }>,
    private readonly unit: 'workers' | 'lanes' = 'workers',
  ) {
    this.ready = new Promise<void>((r) => (this.resolveReady = r));
    const allEnded = new Promise<void>((r) => (this.resolveEnded = r));
    this.shares = shares;
    for (const [k, share] of shares.entries()) {
      try {
        this.spawn(k, share, shares.length);
      } catch (e) {
        // the OS would not give a thread (ERR_WORKER_INIT_FAILED), or its setup could not be
        // cloned: the threads already started are terminated, and none after it is started
        this.fail(k, `could not be started (${e instanceof Error ? e.message : String(e)})`);
        if (this.running.length === 0) this.resolveEnded();
        break;
      }
    }
    const readyWithinMs = threadReadyTimeoutMs(maxOf([0, ...shares.map((x) => x.workerCount)]), session.timeouts.headersMs);
    this.readyTimer = setTimeout(() => {
      const late = this.running.findIndex((r) => !r.ready);
      if (late >= 0) this.fail(late, `was not ready within ${readyWithinMs / 1000} s`);
    }, readyWithinMs);
    void this.ready.then(() => {
      clearTimeout(this.readyTimer);
      if (!this.firstFailure) this.watchForSilence(this.base.silentLimitMs ?? THREAD_SILENT_LIMIT_MS);
    });
    this.finished = allEnded.then(() => this.outcome());
  }

  /** a thread that has said nothing for `limitMs` once every thread is ready fails the cell (thread-watch.ts) */
  private watchForSilence(limitMs: number): void {
    const heard = (): Heard[] => this.running.map((r) => ({ heardMs: r.heardMs, quiet: r.exited || r.done !== undefined }));
    this.stopWatch = watchForSilence(heard, limitMs, (k) => this.fail(k, `said nothing for ${(limitMs / 1000).toFixed(1)} s (its event loop is blocked or stuck)`));
  }

  get failure(): ClientThreadError | undefined {
    return this.firstFailure;
  }

  /** what a thread's news means (its requests sent, first tokens, ends) */
  protected abstract onNews(k: number, m: RequestNews): void;

  private spawn(k: number, share: { firstWorker: number; workerCount: number }, threads: number): void {
    const { session } = this;
    const setup: ThreadSetup = {
      thread: k,
      threads,
      ...share,
      cellTag: this.base.cellTag,
      engine: session.adapter.kind,
      target: session.target,
      facts: session.facts,
      model: session.model,
      endpoint: session.endpoint,
      timeouts: session.timeouts,
      runId: session.runId,
      closesAfterResponse: session.connections.closesAfterResponse,
      ...(session.localTokenizer ? { localTokenizerPath: session.localTokenizer.path } : {}),
      ...(this.unit === 'lanes' ? { rate: { lanes: share.workerCount } } : {}),
    };
    const worker = new Worker(new URL('./stream-thread.mjs', import.meta.url), {
      workerData: setup,
      // a larger young generation: fewer scavenges interrupting the streams (as the sim's thread)
      resourceLimits: { maxYoungGenerationSizeMb: 64 },
    });
    this.running.push({ worker, share, ready: false, exited: false, heardMs: monoMs() });
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
    const s = this.shares[k]!;
    return `client thread ${k + 1} of ${this.shares.length} (${this.unit} ${s.firstWorker}–${s.firstWorker + s.workerCount - 1})`;
  }

  protected fail(k: number, what: string): void {
    if (this.firstFailure) return;
    this.firstFailure = new ClientThreadError(`${this.name(k)} ${what}; the cell's figures are not reported`);
    this.stopWatch?.();
    this.base.onFailure(this.firstFailure);
    this.resolveReady();
    void this.terminateAll();
  }

  private onMessage(k: number, m: FromThread): void {
    const r = this.running[k]!;
    r.heardMs = monoMs();
    switch (m.kind) {
      case 'alive':
        return;
      case 'batch':
        for (const n of m.news) this.onNews(k, n);
        return;
      case 'ready':
        r.opened = m.lazy === true ? undefined : m.opened;
        if (m.firstError !== undefined) this.firstConnectError ??= m.firstError;
        r.clockAskedMs = monoMs();
        this.post(k, { kind: 'clock' });
        return;
      case 'clock': {
        const asked = r.clockAskedMs;
        // an answer never asked for, or a second one, decides nothing
        if (asked === undefined || r.ready) return;
        const now = monoMs();
        if (m.monoMs > now + THREAD_CLOCK_TOLERANCE_MS || m.monoMs < asked - THREAD_CLOCK_TOLERANCE_MS) {
          const off = m.monoMs > now ? m.monoMs - now : m.monoMs - asked;
          this.fail(k, `has a clock ${off.toFixed(1)} ms off the cell's (checked at start, a round trip of ${(now - asked).toFixed(1)} ms)`);
        } else {
          r.ready = true;
          if (++this.readyCount < this.running.length) return;
          // as on the cell's own thread: the cell goes ahead when any connection opened (a worker
          // without one connects at its first request). None at all is a server that stopped
          // answering since the scout's connection, which waited for it (cell.ts openPool), opened
          if (this.running.every((x) => x.opened === 0)) this.fail(k, `could not open a connection to the server, nor could any other client thread (${this.firstConnectError ?? 'no answer'})`);
          else this.resolveReady();
        }
        return;
      }
      case 'done':
        r.done = m;
        if (m.learnedClose) this.session.connections.noteCloseAfterResponse(m.learnedClose.requestId, m.learnedClose.idleMs);
        return;
      case 'error':
        this.fail(k, `failed: ${m.message}`);
        return;
      default:
        this.onNews(k, m);
    }
  }

  private outcome(): ThreadsOutcome {
    clearTimeout(this.stopTimer);
    clearTimeout(this.readyTimer);
    this.stopWatch?.();
    return {
      perThread: this.running.map((r, k) => ({
        thread: k,
        ...(r.done?.loopDelayMs ? { loopDelayMs: r.done.loopDelayMs } : {}),
        ...(r.done?.arrivalLagMs ? { arrivalLagMs: r.done.arrivalLagMs } : {}),
        cpuCores: r.done?.cpu.cores ?? 0,
        ...(r.done?.cpu.coreWaitShare !== undefined ? { coreWaitShare: r.done.cpu.coreWaitShare } : {}),
      })),
      connections: sumConnectionCounts(this.running.map((r) => r.done?.connections)),
    };
  }

  /** what thread k said at its end (a rate cell's schedule counts), once it has */
  protected doneOf(k: number): Extract<FromThread, { kind: 'done' }> | undefined {
    return this.running[k]?.done;
  }

  protected post(k: number, m: ToThread): void {
    const r = this.running[k];
    if (r && !r.exited) r.worker.postMessage(m);
  }

  stop(windowEndMs?: number): void {
    const stop: ToThread = windowEndMs === undefined ? { kind: 'stop' } : { kind: 'stop', windowEndMs };
    for (const r of this.running) if (!r.exited) r.worker.postMessage(stop);
    // every thread has already gone (a failure): nothing to wait for
    if (this.running.every((r) => r.exited)) return;
    this.stopTimer = setTimeout(() => {
      const stuck = this.running.findIndex((r) => !r.exited);
      if (stuck >= 0) this.fail(stuck, `did not end its ${this.unit === 'lanes' ? 'requests' : 'workers'} within ${THREAD_STOP_TIMEOUT_MS / 1000} s of the window's end`);
    }, THREAD_STOP_TIMEOUT_MS);
  }

  async kill(k: number): Promise<void> {
    await this.running[k]?.worker.terminate();
  }

  async terminateAll(): Promise<void> {
    await Promise.all(this.running.map((r) => (r.exited ? undefined : r.worker.terminate())));
  }
}

/** A closed-loop cell's threads and the worker state kept from their messages. */
class ClosedLoopThreads extends ThreadSetBase implements ClientThreads {
  constructor(
    session: LoadSession,
    private readonly o: ClientThreadsOptions,
  ) {
    super(session, o, threadShares(o.concurrency, o.threads));
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
    this.post(k, { kind: 'request', w, request });
  }

  protected onNews(k: number, m: RequestNews): void {
    const { state } = this.o;
    switch (m.kind) {
      case 'sent':
        state.inFlight.add(m.id);
        if (!state.stopping) this.give(k, m.w);
        return;
      case 'first':
        state.gotToken[m.w] = true;
        state.decoding[m.w] = true;
        state.failingInARow[m.w] = 0;
        return;
      case 'ended':
        state.decoding[m.w] = false;
        state.inFlight.delete(m.timeline.id);
        state.timelines.push(m.timeline);
        state.failingInARow[m.w] = m.failingInARow;
        return;
      default:
        return;
    }
  }

  go(): void {
    if (this.failure) return;
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
      this.post(k, { kind: 'go', first });
    }
  }

  windowOpen(endMs: number): void {
    for (const k of this.running.keys()) this.post(k, { kind: 'window', endMs });
  }
}

export function startClientThreads(session: LoadSession, o: ClientThreadsOptions): ClientThreads {
  return new ClosedLoopThreads(session, o);
}
