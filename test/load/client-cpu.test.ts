import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, test } from 'vitest';
import { coreWaitMs, cpuTimeMs, startCpuMeter } from '../../src/load/client-cpu.js';
import { cellStatuses } from '../../src/judge/status.js';
import { worstOfThreads } from '../../src/load/self-check.js';

const schedstat = existsSync('/proc/thread-self/schedstat');

describe('the load generator\'s CPU', () => {
  test('a busy loop on this thread reads about one core; an idle wait about none', async () => {
    expect(cpuTimeMs().source).toBe(process.platform === 'linux' ? 'thread' : 'process');
    const busy = startCpuMeter();
    const until = Date.now() + 300;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    // ticks are 10 ms. A loaded machine gives this thread what it can (0.298 of a core beside a
    // spinning process and two test files): where the meter reads the thread's wait for a core
    // (Linux), the loop ran or waited for one all along, so the two add up to about one
    const b = busy.stop();
    expect(b.cores).toBeGreaterThan(0);
    expect(b.cores).toBeLessThan(1.2);
    if (b.coreWaitShare !== undefined) expect(b.cores + b.coreWaitShare, JSON.stringify(b)).toBeGreaterThan(0.75);
    else expect(b.cores).toBeGreaterThan(0.3);
    const idle = startCpuMeter();
    await new Promise((r) => setTimeout(r, 300));
    expect(idle.stop().cores).toBeLessThan(0.2);
  });

  test('a thread that shares its cores with more busy threads than there are cores waits for one, and the meter says how long (Linux; elsewhere it is not read)', async () => {
    if (!schedstat || readFileSync('/proc/thread-self/schedstat', 'utf8').startsWith('0 ')) {
      expect(coreWaitMs()).toBeUndefined();
      expect(startCpuMeter().stop().coreWaitShare).toBeUndefined();
      return;
    }
    const idle = startCpuMeter();
    await new Promise((r) => setTimeout(r, 200));
    const alone = idle.stop();
    expect(alone.coreWaitShare).toBeGreaterThanOrEqual(0);
    // twice as many busy threads as the machine has cores, besides this one: the kernel must hold
    // each off its core about half the time, however many cores there are
    const spin = 'const until = Date.now() + 600; let x = 0; while (Date.now() < until) x += Math.sqrt(x + 1); require("node:worker_threads").parentPort.postMessage(x)';
    const workers = Array.from({ length: 2 * availableParallelism() }, () => new Worker(spin, { eval: true }));
    const done = Promise.all(workers.map((w) => new Promise((r) => w.once('message', r))));
    await new Promise((r) => setTimeout(r, 50));
    const crowded = startCpuMeter();
    const until = Date.now() + 400;
    let x = 0;
    while (Date.now() < until) x += Math.sqrt(x + 1);
    const r = crowded.stop();
    await done;
    await Promise.all(workers.map((w) => w.terminate()));
    expect(x).toBeGreaterThan(0);
    // with 2n + 1 busy threads on n cores each waits about half the time; wide: the scheduler
    // need not be fair over 400 ms
    expect(r.coreWaitShare!).toBeGreaterThan(0.1);
    expect(r.coreWaitShare!).toBeLessThan(1);
    expect(r.cores + r.coreWaitShare!).toBeLessThan(1.2);
  });

  test("with client threads the cell's wait is the most any thread waited, and the evidence names the worst thread's", () => {
    const threads = [
      { thread: 0, loopDelayMs: { p50: 1, p99: 9, max: 12 }, arrivalLagMs: { reads: 100, p50: 1, p99: 4, max: 5 }, cpuCores: 0.1, coreWaitShare: 0.2 },
      { thread: 1, loopDelayMs: { p50: 1, p99: 2, max: 3 }, arrivalLagMs: { reads: 100, p50: 0, p99: 0.5, max: 1 }, cpuCores: 0.3, coreWaitShare: 0.01 },
    ];
    expect(worstOfThreads(threads).clientCpu).toEqual({ cores: 0.3, source: 'thread', coreWaitShare: 0.2 });
    expect(worstOfThreads(threads.map(({ coreWaitShare: _, ...t }) => t)).clientCpu).toEqual({ cores: 0.3, source: 'thread' });
    const limited = cellStatuses({
      concurrency: 8,
      figures: { failedRequests: 0, clientActiveRequests: 8, activeRequestsDisagree: false },
      loopDelayBoundMs: 5,
      clientThreads: threads,
    });
    expect(limited.evidence.clientLimited).toMatchObject({ thread: 1, threads: 2, coreWaitShare: 0.2, cpuCores: 0.1 });
    const one = cellStatuses({
      concurrency: 4,
      figures: { failedRequests: 0, clientActiveRequests: 4, activeRequestsDisagree: false },
      loopDelayMs: { p99: 7 },
      arrivalLagMs: { p99: 2.6 },
      loopDelayBoundMs: 5,
      clientCpuCores: 0.06,
      clientCoreWaitShare: 0.03,
    });
    expect(one.evidence.clientLimited).toEqual({
      eventLoopDelayP99Ms: 7,
      arrivalLagP99Ms: 2.6,
      timingErrorP99Ms: Math.hypot(7, 2.6),
      boundMs: 5,
      cpuCores: 0.06,
      cpuBoundCores: 0.9,
      coreWaitShare: 0.03,
    });
  });

  test('over 0.9 of a core the cell is Client-limited, whatever the event-loop delay', () => {
    const base = {
      concurrency: 4,
      figures: { failedRequests: 0, clientActiveRequests: 4, activeRequestsDisagree: false },
      loopDelayMs: { p99: 5 },
      loopDelayBoundMs: 50,
    };
    expect(cellStatuses({ ...base, clientCpuCores: 0.5 }).statuses).toEqual(['valid']);
    const limited = cellStatuses({ ...base, clientCpuCores: 0.95 });
    expect(limited.status).toBe('client-limited');
    expect(limited.evidence.clientLimited).toEqual({ eventLoopDelayP99Ms: 5, boundMs: 50, cpuCores: 0.95, cpuBoundCores: 0.9 });
  });
});
