/**
 * A client thread of a cell (issue 24): runs some of the cell's closed-loop workers with its own
 * event loop, undici clients and meters, and reports each request to the cell's coordinator
 * (stream-threads.ts) as it is sent, gets its first token and ends. Its requests are the cell's
 * own, handed to it one ahead per worker; it times with the one clock of the process (clock.ts).
 * Started by stream-thread.mjs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { WorkloadRequest } from '../shapes/workload.js';
import { monoMs } from '../clock.js';
import { ConnectionPolicy } from '../client/connections.js';
import { createWorkerDispatchers, type WorkerDispatchers } from '../client/pool.js';
import { getAdapter } from '../engines/detect.js';
import { loadLocalTokenizer } from '../tokenizer/local.js';
import { runClosedLoopWorker } from './closed-loop.js';
import { dueRequestId, followSchedule, sendDue, type DueRequest, type FollowOutcome } from './schedule-follower.js';
import { startSelfCheck, type SelfCheckMeter } from './self-check.js';
import { warmClientCode } from '../client/warm-code.js';
import { abortOnServer, cellAbortOf, requestBody, requestHeaders, sendRequest, waitUntil, type LoadSession } from './session.js';
import { THREAD_ALIVE_EVERY_MS, type FromThread, type RequestNews, type ThreadSetup, type ToThread } from './thread-messages.js';
import type { CellSend } from './worker-state.js';

if (!parentPort) throw new Error('stream-thread-main.ts must run in a worker thread');
const port = parentPort;
const setup = workerData as ThreadSetup;
/**
 * Request news goes in batches, every NEWS_EVERY_MS: each message wakes the cell's thread, and a
 * thread woken in the middle of a decode step's burst of tokens takes a core from the client
 * threads reading it (on 2 cores, a 64-stream cell's first tokens were stamped ~1 ms later with a
 * message per first token). A worker that has taken its last queued request cannot wait that
 * long: that news goes at the end of the turn (setImmediate), never from inside a read's handling.
 */
const NEWS_EVERY_MS = 25;
let news: RequestNews[] = [];
let timer: NodeJS.Timeout | undefined;
let soon = false;
const flush = (): void => {
  clearTimeout(timer);
  timer = undefined;
  soon = false;
  if (news.length === 0) return;
  port.postMessage({ kind: 'batch', news } satisfies FromThread);
  news = [];
};
const tell = (m: RequestNews, urgent = false): void => {
  news.push(m);
  if (urgent && !soon) {
    soon = true;
    setImmediate(flush);
  } else if (timer === undefined && !soon) timer = setTimeout(flush, NEWS_EVERY_MS);
};
/** this thread's requests sent and not yet ended: the ones the engine's abort call must stop at the window's end */
const inFlight = new Set<string>();

/** any other message goes at once, after the news before it */
const post = (m: FromThread): void => {
  flush();
  port.postMessage(m);
};

/** 'alive' every THREAD_ALIVE_EVERY_MS from the clock check to the thread's end */
let alive: NodeJS.Timeout | undefined;
const stopAlive = (): void => clearInterval(alive);

// the clock check (stream-threads.ts): answered at once, whatever the thread is doing; then the
// thread says it is alive until it ends, so the cell's thread can tell a stuck one
port.on('message', (m: ToThread) => {
  if (m.kind !== 'clock') return;
  post({ kind: 'clock', monoMs: monoMs() });
  alive ??= setInterval(() => port.postMessage({ kind: 'alive' } satisfies FromThread), THREAD_ALIVE_EVERY_MS);
});

async function main(): Promise<void> {
  const connections = new ConnectionPolicy();
  connections.closesAfterResponse = setup.closesAfterResponse;
  const session: LoadSession = {
    target: setup.target,
    adapter: getAdapter(setup.engine),
    facts: setup.facts,
    model: setup.model,
    endpoint: setup.endpoint,
    // unused here: every request the thread gets carries its own output cap
    maxOutputTokens: 1,
    timeouts: setup.timeouts,
    runId: setup.runId,
    connections,
    hasMetrics: false,
    ...(setup.localTokenizerPath !== undefined ? { localTokenizer: await loadLocalTokenizer(setup.localTokenizerPath) } : {}),
  };
  // the thread's per-event code compiled before its first tokens arrive (client/warm-code.ts)
  const adapter = session.adapter;
  const scan = adapter.scanChunk;
  warmClientCode({
    decode: (p) => adapter.decodeChunk(p),
    ...(scan ? { scan: (b, s, e, wantText) => scan.call(adapter, b, s, e, wantText) } : {}),
    endsWithDone: adapter.endsWithDone,
  });
  if (setup.rate) {
    await followRateShare(session, setup.rate.lanes);
    return;
  }
  const n = setup.workerCount;
  const pool = createWorkerDispatchers(session.target.baseUrl, n, { connectTimeoutMs: session.timeouts.headersMs });
  const report = await pool.preconnect({ headers: requestHeaders(session) });
  post({ kind: 'ready', monoMs: monoMs(), opened: report.opened, failed: report.failed, ...(report.firstError !== undefined ? { firstError: report.firstError } : {}) });

  const { controller, dispose } = cellAbortOf();
  let stopping = false;
  const requests = new WorkerRequests();
  const send: CellSend = (id, request, w, signal, onFirstToken) =>
    sendRequest(session, {
      id,
      ...requestBody(request),
      dispatcher: pool.clients[w - setup.firstWorker]!,
      signal,
      ...(onFirstToken ? { onFirstToken } : {}),
      onConnectionClosing: () => pool.prepareNext(w - setup.firstWorker),
    });

  let meter: SelfCheckMeter | undefined;
  let workers: Promise<void>[] = [];
  let aborting: Promise<unknown> = Promise.resolve();
  const cellWindow = new ThreadWindow(() => {
    // the meters cover the workers' start to here, as on the cell's thread
    meter?.stop();
    stopping = true;
  });
  const started = new Promise<void>((resolve) => {
    port.on('message', (m: ToThread) => {
      if (m.kind === 'window') {
        cellWindow.open(m.endMs);
      } else if (m.kind === 'go') {
        meter = startSelfCheck();
        for (const f of m.first) requests.give(f.w, f.request);
        workers = Array.from({ length: n }, (_, i) => runClosedLoopWorker(setup.firstWorker + i, loop));
        resolve();
      } else if (m.kind === 'request') {
        requests.give(m.w, m.request);
      } else if (m.kind === 'stop') {
        cellWindow.close();
        const running = [...inFlight];
        pool.stopConnecting();
        controller.abort();
        // the engine's abort call for them: this thread knows its requests at once, where the cell's
        // thread hears of them in batches (up to NEWS_EVERY_MS late) and would miss the newest
        aborting = abortOnServer(session, running);
        requests.endWaits();
        resolve();
      }
    });
  });
  const loop = {
    cellTag: setup.cellTag,
    send,
    signal: controller.signal,
    stopping: () => stopping || cellWindow.over(),
    next: (w: number) => requests.next(w),
    // the worker's queue is empty: its next request is wanted before this one ends
    onSent: (w: number, id: string) => {
      inFlight.add(id);
      tell({ kind: 'sent', w, id }, requests.queuedFor(w) === 0);
    },
    onFirstToken: (w: number) => tell({ kind: 'first', w }),
    onEnded: (w: number, timeline: RequestTimeline, failingInARow: number) => {
      inFlight.delete(timeline.id);
      tell({ kind: 'ended', w, timeline, failingInARow });
    },
  };
  await started;
  await Promise.all(workers);
  await aborting;
  await reportEnd(meter, dispose, pool, connections.learnedFrom ? { learnedClose: connections.learnedFrom } : {});
}

/**
 * A closed-loop cell's window as one client thread keeps it: closed at its end on this thread's own
 * clock ('window' gives it; the 'stop' that follows comes a few ms later where the cell's thread
 * is busy, and closes it too if it came first). `onClose` runs once.
 */
class ThreadWindow {
  private endMs = Infinity;
  /** aborted at the close: the wait for the end ends with it */
  private readonly wait = new AbortController();
  private closed = false;

  constructor(private readonly onClose: () => void) {}

  open(endMs: number): void {
    if (this.closed) return;
    this.endMs = endMs;
    void waitUntil(endMs, this.wait.signal).then(() => this.close());
  }

  /** past the end: its timer can run late behind a turn of reads, and a request that ends in that turn sends no next one */
  over(): boolean {
    return monoMs() >= this.endMs;
  }

  close(): void {
    this.wait.abort();
    if (this.closed) return;
    this.closed = true;
    this.onClose();
  }
}

/** Each worker's requests handed ahead by the cell's thread, and a worker waiting for its next one. */
class WorkerRequests {
  private readonly queued = new Map<number, WorkloadRequest[]>();
  private readonly waiting = new Map<number, (r: WorkloadRequest | undefined) => void>();

  give(w: number, request: WorkloadRequest): void {
    const wake = this.waiting.get(w);
    if (wake) {
      this.waiting.delete(w);
      wake(request);
    } else {
      const q = this.queued.get(w);
      if (q) q.push(request);
      else this.queued.set(w, [request]);
    }
  }

  /** worker w's next request, or a wait for it (undefined once the waits are ended) */
  next(w: number): WorkloadRequest | undefined | Promise<WorkloadRequest | undefined> {
    const r = this.queued.get(w)?.shift();
    if (r !== undefined) return r;
    return new Promise<WorkloadRequest | undefined>((resolve) => this.waiting.set(w, resolve));
  }

  queuedFor(w: number): number {
    return this.queued.get(w)?.length ?? 0;
  }

  /** the window has closed: every waiting worker gets no request */
  endWaits(): void {
    for (const wake of this.waiting.values()) wake(undefined);
    this.waiting.clear();
  }
}

/** The thread's end: its meters over its span, its connections closed, 'done' said, the port closed. */
async function reportEnd(meter: SelfCheckMeter | undefined, dispose: () => void, pool: WorkerDispatchers, extra: Partial<Extract<FromThread, { kind: 'done' }>>): Promise<void> {
  const measured = meter?.stop();
  dispose();
  const counts = await pool.connectionCounts();
  await pool.destroyAll();
  stopAlive();
  post({ kind: 'done', ...(measured ?? { cpu: { cores: 0, source: 'thread' } }), connections: counts, ...extra });
  port.close();
}

/**
 * A rate cell's thread: its share of the schedule, sent at the due times on its own lanes
 * (schedule-follower.ts, as the cell's own thread does without threads). Its requests arrive ahead
 * of their time in 'due' messages; each is reported when sent and when ended.
 */
async function followRateShare(session: LoadSession, lanes: number): Promise<void> {
  const pool = createWorkerDispatchers(session.target.baseUrl, lanes, { connectTimeoutMs: session.timeouts.headersMs });
  post({ kind: 'ready', monoMs: monoMs(), opened: 0, failed: 0, lazy: true });
  const { controller, dispose } = cellAbortOf();
  const queue: DueRequest[] = [];
  let wake: ((d: DueRequest | undefined) => void) | undefined;
  let stopping = false;
  /** the window's end, from the stop message */
  let windowEndMs = Infinity;
  let meter: SelfCheckMeter | undefined;
  let following: Promise<FollowOutcome> | undefined;
  let aborting: Promise<unknown> = Promise.resolve();
  const started = new Promise<void>((resolve) => {
    port.on('message', (m: ToThread) => {
      if (m.kind === 'due') {
        for (const d of m.items) {
          const w = wake;
          wake = undefined;
          if (w) w(d);
          else queue.push(d);
        }
      } else if (m.kind === 'rate-go') {
        meter = startSelfCheck();
        following = followSchedule({
          next: () => queue.shift() ?? (stopping ? undefined : new Promise<DueRequest | undefined>((r) => (wake = r))),
          remaining: () => queue.length,
          lanes,
          send: (d, lane, signal) => sendDue(session, setup.cellTag, d, pool.clients[lane]!, signal),
          signal: controller.signal,
          onSent: (d) => {
            const id = dueRequestId(setup.cellTag, d);
            inFlight.add(id);
            tell({ kind: 'rate-sent', id });
          },
          onEnded: (s) => {
            inFlight.delete(s.timeline.id);
            tell({ kind: 'rate-ended', s });
          },
          // due before the window closed and still here: this thread fell behind its share
          unsentAtAbort: (d) => (d !== undefined && d.dueMs < windowEndMs ? 1 : 0) + queue.filter((q) => q.dueMs < windowEndMs).length,
        });
        resolve();
      } else if (m.kind === 'stop') {
        // the window's end: the meters cover the schedule's start to here, as on the cell's thread
        meter?.stop();
        if (m.windowEndMs !== undefined) windowEndMs = m.windowEndMs;
        stopping = true;
        const running = [...inFlight];
        controller.abort();
        aborting = abortOnServer(session, running);
        wake?.(undefined);
        wake = undefined;
        resolve();
      }
    });
  });
  await started;
  const outcome = following ? await following : undefined;
  await aborting;
  const learned = session.connections.learnedFrom;
  await reportEnd(meter, dispose, pool, {
    schedule: { peak: outcome?.peak ?? 0, waited: outcome?.waited ?? 0, unsent: outcome?.unsent ?? 0 },
    ...(learned ? { learnedClose: learned } : {}),
  });
}

main().catch((e: unknown) => {
  stopAlive();
  post({ kind: 'error', message: e instanceof Error ? e.message : String(e) });
  port.close();
});
