/**
 * Where a cell's C workers run (issue 24): on the cell's own thread (`cellThreadStreams`, as
 * always), or over N client threads (`threadStreams`, stream-threads.ts). Either way the gate and
 * the window read the same WorkerState, and each stream keeper measures itself (event-loop delay
 * and CPU, from the workers' start to the window's end) for the cell's Client-limited verdict:
 * with threads, the worst thread's delay and the busiest thread's CPU, each thread's kept too.
 */
import { getAdapter } from '../engines/detect.js';
import type { CpuReading } from './client-cpu.js';
import type { ArrivalLagStats } from '../client/arrival-clock.js';
import { startSelfCheck, worstOfThreads, type SelfCheckMeter, type ThreadSelfCheck } from './self-check.js';
import { runClosedLoopWorker, waitAfterFailureMs } from './closed-loop.js';
import { runConversationWorker, type RequestTurn } from './conversations.js';
import type { EventLoopDelayStats } from './loop-monitor.js';
import { requestOf, type LoadSession } from './session.js';
import { startClientThreads, type ClientThreadError, type ClientThreadsOptions } from './stream-threads.js';
import type { CellConversations } from './conversations.js';
import type { CellRequestInput } from './session.js';
import type { CellSend, WorkerState } from './worker-state.js';
import type { ConnectionCounts } from '../client/pool.js';

/** What of a cell's options decides where and how its workers run (cell.ts CellRunOptions has them). */
export interface CellWorkersSpec {
  concurrency: number;
  promptFor: (worker: number, requestIndex: number) => CellRequestInput;
  conversations?: CellConversations;
  threads?: number;
}

/** What a caller (a test) may do with a cell's streams once they have started. */
export interface StreamsControl {
  /** client threads in use (1: the cell's own thread) */
  readonly threads: number;
  /** the first client-thread failure, if any */
  readonly failure: ClientThreadError | undefined;
  /** end client thread k now, as a crash would; no-op without threads */
  kill(thread: number): Promise<void>;
  terminateAll(): Promise<void>;
}

export interface StreamsOutcome {
  loopDelayMs?: EventLoopDelayStats;
  /** read lag of response reads (client/arrival-clock.ts): the worst thread's */
  arrivalLagMs?: ArrivalLagStats;
  clientCpu: CpuReading;
  threads?: ThreadSelfCheck[];
  /** connections of the threads' own clients (none without threads) */
  connections: ConnectionCounts;
}

export interface CellStreams {
  /** start the workers (threads: once every thread is ready) */
  start(): Promise<void>;
  /** the window is open and closes at endMs (client threads stop sending there on their own timers) */
  windowOpen(endMs: number): void;
  /** the window has closed: the meters stop here */
  stop(): void;
  /** every worker has ended */
  finished: Promise<StreamsOutcome>;
  control: StreamsControl;
}

/**
 * The client threads of a cell: the asked count, capped at one per worker, and 1 (the cell's own
 * thread) for a multi-turn cell or an adapter that is not one of the built-in engines' (a thread
 * builds its own adapter from the engine's kind).
 */
export function cellThreads(session: LoadSession, opts: CellWorkersSpec, say: (m: string) => void): number {
  const asked = Math.min(opts.threads ?? 1, opts.concurrency);
  if (asked <= 1) return 1;
  if (opts.conversations) {
    say(`client threads: a multi-turn cell runs its conversations on one thread (asked for ${asked})`);
    return 1;
  }
  if (!adapterRunsOnThreads(session)) {
    say(`client threads: the adapter is not a built-in engine's, so the streams run on one thread (asked for ${asked})`);
    return 1;
  }
  return asked;
}

/** A thread builds its own adapter from the engine's kind: only a built-in engine's adapter runs there. */
export function adapterRunsOnThreads(session: LoadSession): boolean {
  try {
    return Object.getPrototypeOf(session.adapter) === Object.getPrototypeOf(getAdapter(session.adapter.kind));
  } catch {
    return false;
  }
}

const noThreads = (): StreamsControl => ({ threads: 1, failure: undefined, kill: async () => {}, terminateAll: async () => {} });

/** The C workers on the cell's own thread: independent requests, or a multi-turn cell's conversations. */
export function cellThreadStreams(
  session: LoadSession,
  opts: CellWorkersSpec,
  c: { cellTag: string; send: CellSend; state: WorkerState; signal: AbortSignal; turns: Map<string, RequestTurn> | undefined },
): CellStreams {
  const { state } = c;
  let workers: Promise<void>[] = [];
  let meter: SelfCheckMeter | undefined;
  let resolveEnded!: () => void;
  const ended = new Promise<void>((r) => (resolveEnded = r));
  const stop = (): void => void meter?.stop();
  return {
    start: async () => {
      meter = startSelfCheck();
      const counter = { next: 0 };
      const conversations = opts.conversations;
      workers = Array.from({ length: opts.concurrency }, (_, w) =>
        conversations && c.turns
          ? runConversationWorker(w, { cellTag: c.cellTag, send: c.send, state, signal: c.signal, conversations, counter, turnOf: c.turns, waitAfterFailureMs })
          : runClosedLoopWorker(w, {
              cellTag: c.cellTag,
              send: c.send,
              signal: c.signal,
              stopping: () => state.stopping,
              next: (worker) => requestOf(opts.promptFor(worker, state.requestCounter++), session.maxOutputTokens),
              onSent: (_w, id) => void state.inFlight.add(id),
              onFirstToken: (worker) => {
                state.gotToken[worker] = true;
                state.decoding[worker] = true;
                state.failingInARow[worker] = 0;
              },
              onEnded: (worker, t, failingInARow) => {
                state.decoding[worker] = false;
                state.inFlight.delete(t.id);
                state.timelines.push(t);
                state.failingInARow[worker] = failingInARow;
              },
            }),
      );
      resolveEnded();
    },
    // this thread stops its workers itself when the window closes (cell.ts)
    windowOpen: () => {},
    stop,
    finished: ended.then(async () => {
      await Promise.all(workers);
      const { cpu: clientCpu, ...self } = meter!.stop();
      return { ...self, clientCpu, connections: { opened: 0, preparedUnused: 0 } };
    }),
    control: noThreads(),
  };
}

/** The C workers over N client threads (stream-threads.ts). */
export function threadStreams(session: LoadSession, o: ClientThreadsOptions): CellStreams {
  const threads = startClientThreads(session, o);
  const control: StreamsControl = {
    threads: o.threads,
    get failure() {
      return threads.failure;
    },
    kill: (k) => threads.kill(k),
    terminateAll: () => threads.terminateAll(),
  };
  return {
    start: async () => {
      await threads.ready;
      threads.go();
    },
    windowOpen: (endMs) => threads.windowOpen(endMs),
    stop: () => threads.stop(),
    finished: threads.finished.then((t): StreamsOutcome => ({ ...worstOfThreads(t.perThread), threads: t.perThread, connections: t.connections })),
    control,
  };
}
