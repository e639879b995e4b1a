/**
 * Issue 24, "a thread fails alone", at the threads' start: a client thread the OS will not give
 * (`new Worker` throws ERR_WORKER_INIT_FAILED when it is out of threads or memory) fails its cell
 * with a reason naming the thread, the threads already started are terminated, none after it is
 * started, and the next cell measures. `node:worker_threads` is wrapped so that the chosen
 * construction throws while the test arms it; the simulator's own thread is started before.
 */
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import type { Worker as NodeWorker } from 'node:worker_threads';
import { ClientThreadError } from '../../src/load/stream-threads.js';
import type { SimHandle } from '../../src/sim/index.js';
import { openFastTinyRun, runAccuracyCell, type OpenedAccuracyRun } from '../accuracy/harness.js';

const spawn = vi.hoisted(() => ({ failAt: 0, made: 0, started: [] as NodeWorker[] }));

vi.mock('node:worker_threads', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:worker_threads')>();
  class Worker extends real.Worker {
    constructor(...args: ConstructorParameters<typeof real.Worker>) {
      if (spawn.failAt > 0 && ++spawn.made === spawn.failAt) {
        throw Object.assign(new Error('Worker initialization failure: EAGAIN'), { code: 'ERR_WORKER_INIT_FAILED' });
      }
      super(...args);
      if (spawn.failAt > 0) spawn.started.push(this);
    }
  }
  return { ...real, default: { ...real, Worker }, Worker };
});

let sim: SimHandle;
let run: OpenedAccuracyRun;
beforeAll(async () => {
  ({ sim, run } = await openFastTinyRun());
}, 30_000);
afterAll(async () => {
  await run?.opened.close();
  await sim?.close();
});

const exited = (w: NodeWorker): Promise<void> => (w.threadId === -1 ? Promise.resolve() : new Promise((r) => w.once('exit', () => r())));

test.each([
  { failAt: 2, threads: 3, name: /^client thread 2 of 3 \(workers 2–3\) could not be started \(Worker initialization failure: EAGAIN\); the cell's figures are not reported$/, startedBefore: 1 },
  { failAt: 1, threads: 2, name: /^client thread 1 of 2 \(workers 0–2\) could not be started \(Worker initialization failure: EAGAIN\); the cell's figures are not reported$/, startedBefore: 0 },
])('thread $failAt of $threads cannot be started: the cell fails naming it, the started ones end, the next cell measures', async ({ failAt, threads, name, startedBefore }) => {
  Object.assign(spawn, { failAt, made: 0, started: [] });
  try {
    const cell = runAccuracyCell(run, sim, { context: 0, concurrency: 6, windowMs: 1_000, threads });
    await expect(cell).rejects.toThrow(ClientThreadError);
    await expect(cell).rejects.toThrow(name);
    // the threads started before it were terminated, and none after it was started
    expect(spawn.started).toHaveLength(startedBefore);
    await Promise.all(spawn.started.map(exited));
  } finally {
    spawn.failAt = 0;
  }
  const next = await runAccuracyCell(run, sim, { context: 0, concurrency: 6, windowMs: 1_000, threads });
  expect(next.raw.clientThreads).toHaveLength(threads);
  expect(next.figures.failedRequests).toBe(0);
}, 30_000);
