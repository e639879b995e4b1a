/**
 * Issue 24, "a thread fails alone", at the threads' start: a client thread the OS will not give
 * (`new Worker` throws ERR_WORKER_INIT_FAILED when it is out of threads or memory) fails its cell
 * with a reason naming the thread, the threads already started are terminated, none after it is
 * started, and the next cell measures. `node:worker_threads` is wrapped so that the chosen
 * construction throws while the test arms it; the simulator's own thread is started before.
 * The same wrapper stands fake threads in for real ones, so that a test says what each thread
 * reports when it is ready (the connections it opened) and reads the cell's decision.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, test, vi } from 'vitest';
import type { Worker as NodeWorker } from 'node:worker_threads';
import { monoMs } from '../../src/clock.js';
import { ClientThreadError, startClientThreads, threadReadyTimeoutMs, THREAD_READY_TIMEOUT_MS } from '../../src/load/stream-threads.js';
import type { FromThread } from '../../src/load/thread-messages.js';
import { watchForSilence, type Heard } from '../../src/load/thread-watch.js';
import { openaiSession } from '../helpers/load-session.js';
import { runAccuracyCell } from '../accuracy/harness.js';
import { simRunForTheBlock } from '../helpers/fast-tiny-run.js';

/** a stand-in thread: what the cell posts to it, and `say` for what it reports */
class FakeThread extends EventEmitter {
  threadId = 1;
  readonly posted: unknown[] = [];
  /** how far this thread's clock is off the process's, in its answer to the clock check */
  clockOffMs = 0;
  postMessage(m: unknown): void {
    this.posted.push(m);
    if ((m as { kind?: string }).kind === 'clock') setImmediate(() => this.say({ kind: 'clock', monoMs: monoMs() + this.clockOffMs }));
  }
  say(m: FromThread): void {
    this.emit('message', m);
  }
  terminate(): Promise<number> {
    this.threadId = -1;
    setImmediate(() => this.emit('exit', 1));
    return Promise.resolve(1);
  }
}

const spawn = vi.hoisted(() => ({ failAt: 0, made: 0, started: [] as NodeWorker[], fakes: undefined as FakeThread[] | undefined }));

vi.mock('node:worker_threads', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:worker_threads')>();
  class Worker extends real.Worker {
    constructor(...args: ConstructorParameters<typeof real.Worker>) {
      if (spawn.fakes !== undefined) {
        const fake = new FakeThread();
        spawn.fakes.push(fake);
        // a constructor may return another object: the fake stands in for the thread
        return fake as unknown as Worker;
      }
      if (spawn.failAt > 0 && ++spawn.made === spawn.failAt) {
        throw Object.assign(new Error('Worker initialization failure: EAGAIN'), { code: 'ERR_WORKER_INIT_FAILED' });
      }
      super(...args);
      if (spawn.failAt > 0) spawn.started.push(this);
    }
  }
  return { ...real, default: { ...real, Worker }, Worker };
});

const fast = simRunForTheBlock();

const exited = (w: NodeWorker): Promise<void> => (w.threadId === -1 ? Promise.resolve() : new Promise((r) => w.once('exit', () => r())));

test.each([
  { failAt: 2, threads: 3, name: /^client thread 2 of 3 \(workers 2–3\) could not be started \(Worker initialization failure: EAGAIN\); the cell's figures are not reported$/, startedBefore: 1 },
  { failAt: 1, threads: 2, name: /^client thread 1 of 2 \(workers 0–2\) could not be started \(Worker initialization failure: EAGAIN\); the cell's figures are not reported$/, startedBefore: 0 },
])('thread $failAt of $threads cannot be started: the cell fails naming it, the started ones end, the next cell measures', async ({ failAt, threads, name, startedBefore }) => {
  Object.assign(spawn, { failAt, made: 0, started: [] });
  try {
    const cell = runAccuracyCell(fast.run, fast.sim, { context: 0, concurrency: 6, windowMs: 1_000, threads });
    await expect(cell).rejects.toThrow(ClientThreadError);
    await expect(cell).rejects.toThrow(name);
    // the threads started before it were terminated, and none after it was started
    expect(spawn.started).toHaveLength(startedBefore);
    await Promise.all(spawn.started.map(exited));
  } finally {
    spawn.failAt = 0;
  }
  const next = await runAccuracyCell(fast.run, fast.sim, { context: 0, concurrency: 6, windowMs: 1_000, threads });
  expect(next.raw.clientThreads).toHaveLength(threads);
  expect(next.figures.failedRequests).toBe(0);
}, 30_000);

/** a cell of 6 workers on 2 stand-in threads */
function threadsFor(onFailure: (e: ClientThreadError) => void, silentLimitMs?: number) {
  spawn.fakes = [];
  const fakes = spawn.fakes;
  const state = { timelines: [], inFlight: new Set<string>(), gotToken: [], decoding: [], failingInARow: [], stopping: false, requestCounter: 0 };
  const set = startClientThreads(openaiSession('http://127.0.0.1:9'), {
    cellTag: 't', concurrency: 6, threads: 2, promptFor: () => ({ prompt: 'Hi', maxTokens: 4 }), state, onFailure, ...(silentLimitMs !== undefined ? { silentLimitMs } : {}),
  });
  spawn.fakes = undefined;
  expect(fakes).toHaveLength(2);
  return { set, fakes };
}
const ready = (opened: number, firstError?: string): FromThread => ({ kind: 'ready', monoMs: monoMs(), opened, failed: 3 - opened, ...(firstError ? { firstError } : {}) });

describe('a thread that opened no connection', () => {

  test('goes on when another thread opened some: its workers connect at their first request, as on one thread', async () => {
    const failures: ClientThreadError[] = [];
    const { set, fakes } = threadsFor((e) => failures.push(e));
    fakes[0]!.say(ready(0, 'connect ECONNREFUSED'));
    fakes[1]!.say(ready(3));
    await set.ready;
    expect(set.failure).toBeUndefined();
    expect(failures).toEqual([]);
    await set.terminateAll();
    await set.finished;
  });

  test('fails the cell when no thread opened any, naming the first error', async () => {
    const failures: ClientThreadError[] = [];
    const { set, fakes } = threadsFor((e) => failures.push(e));
    fakes[0]!.say(ready(0, 'connect ECONNREFUSED'));
    fakes[1]!.say(ready(0, 'other'));
    await set.ready;
    expect(set.failure?.message).toBe(
      "client thread 2 of 2 (workers 3–5) could not open a connection to the server, nor could any other client thread (connect ECONNREFUSED); the cell's figures are not reported",
    );
    expect(failures).toHaveLength(1);
    await set.finished;
  });

  test('a thread whose clock answers outside the round trip of the question fails the cell, saying by how much', async () => {
    const { set, fakes } = threadsFor(() => {});
    fakes[1]!.clockOffMs = 75;
    fakes[0]!.say(ready(3));
    fakes[1]!.say(ready(3));
    await set.ready;
    expect(set.failure?.message).toMatch(/^client thread 2 of 2 \(workers 3–5\) has a clock [67]\d\.\d ms off the cell's \(checked at start, a round trip of \d+\.\d ms\); the cell's figures are not reported$/);
    // each thread was asked once, after its ready
    expect(fakes.map((f) => f.posted.filter((m) => (m as { kind: string }).kind === 'clock').length)).toEqual([1, 1]);
    await set.finished;
  });

  test('the time to say ready grows with the connections of the largest share (64 at a time, each within its connect timeout and its GET within 10 + 10 s)', () => {
    expect(threadReadyTimeoutMs(3, 120_000)).toBe(THREAD_READY_TIMEOUT_MS + 140_000);
    expect(threadReadyTimeoutMs(512, 5_000)).toBe(THREAD_READY_TIMEOUT_MS + 8 * 25_000);
  });
});

test('a ready thread that says nothing (its loop blocked) fails the cell; one that says it is alive does not', async () => {
  const failures: ClientThreadError[] = [];
  const { set, fakes } = threadsFor((e) => failures.push(e), 1_500);
  fakes[0]!.say(ready(3));
  fakes[1]!.say(ready(3));
  await set.ready;
  expect(set.failure).toBeUndefined();
  // thread 1 says it is alive every 100 ms, thread 2 stops answering
  const alive = setInterval(() => fakes[0]!.say({ kind: 'alive' }), 100);
  try {
    await vi.waitFor(() => expect(failures).toHaveLength(1), { timeout: 10_000, interval: 50 });
  } finally {
    clearInterval(alive);
  }
  expect(failures[0]!.message).toBe("client thread 2 of 2 (workers 3–5) said nothing for 1.5 s (its event loop is blocked or stuck); the cell's figures are not reported");
  await set.finished;
});

test('a tick that comes late (the cell\'s own thread stalled, the threads\' messages queued behind it) blames no thread; the next one does', async () => {
  const threads: Heard[] = [{ heardMs: monoMs(), quiet: false }];
  const blamed: number[] = [];
  const stop = watchForSilence(() => threads, 400, () => blamed.push(monoMs()));
  try {
    // this thread busy for 800 ms: the thread looks silent for as long, but the tick comes 600 ms late
    const until = monoMs() + 800;
    while (monoMs() < until);
    const back = monoMs();
    await vi.waitFor(() => expect(blamed.length).toBeGreaterThan(0), { timeout: 5_000, interval: 20 });
    expect(blamed[0]! - back).toBeGreaterThanOrEqual(100);
  } finally {
    stop();
  }
});
