/**
 * The open-loop rate runner (issue 22) against a raw server that records when each request came:
 * sends follow the fixed schedule (not the server's pace), every request carries its scheduled
 * time, and the in-flight ceiling is counted when it holds requests back. Each runs on the cell's
 * own thread and over 2 client threads (issue 24: request i from thread i mod 2, half the ceiling
 * each), which must keep the same schedule; a client thread killed mid-cell fails that cell.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runRateCell } from '../../src/load/rate-cell.js';
import { arrivalSchedule } from '../../src/load/arrivals.js';
import { openaiSession } from '../helpers/load-session.js';
import { monoMs } from '../../src/clock.js';
import { requestThreads } from '../../src/load/rate-threads.js';
import { threadShares } from '../../src/load/thread-count.js';

const session = (baseUrl: string) => openaiSession(baseUrl, { runId: 'rate', maxOutputTokens: 4 });

/** a server that streams 4 tokens, each `tokenMs` apart, and logs each POST's arrival */
function streamingServer(tokenMs: () => number) {
  const arrivals: number[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET') return res.end('{"data":[{"id":"m"}]}');
    arrivals.push(monoMs());
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let n = 0;
    const gap = tokenMs();
    const tick = () => {
      if (res.destroyed) return;
      if (n++ < 4) {
        res.write(`data: {"choices":[{"index":0,"delta":{"content":"t${n} "}}]}\n\n`);
        setTimeout(tick, gap);
      } else {
        res.end('data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}\n\ndata: [DONE]\n\n');
      }
    };
    tick();
  });
  return { server, arrivals };
}

/** the describe block's streaming server, listening on loopback while its tests run; `url()` is its base URL */
function serverForTheBlock(tokenMs: () => number): { fake: ReturnType<typeof streamingServer>; url: () => string } {
  const fake = streamingServer(tokenMs);
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((r) => fake.server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => fake.server.close(() => r())));
  return { fake, url: () => url };
}

describe.each([1, 2])('runRateCell, %i client thread(s)', (threads) => {
  let slowTokenMs = 5;
  const { fake, url: urlOf } = serverForTheBlock(() => slowTokenMs);

  test('sends follow the schedule: one request per due time, in order, each with its scheduled time', async () => {
    slowTokenMs = 5;
    const schedule = arrivalSchedule({ rate: 40, process: { kind: 'poisson' }, seed: 3, windowMs: 1500, rampMs: 300 });
    fake.arrivals.length = 0;
    const run = await runRateCell(session(urlOf()), {
      context: 0,
      rate: 40,
      schedule,
      promptFor: (i) => `Hi ${i}`,
      scoutPrompts: ['Hi'],
      windowMs: 1500,
      maxInFlight: 64,
      drainTimeoutMs: 1000,
      metricsIntervalMs: 1000,
      threads,
    });
    // the scout, then every scheduled request
    expect(fake.arrivals.length).toBe(1 + schedule.atMs.length);
    expect(run.requests.length).toBe(schedule.atMs.length);
    expect(run.unsent).toBe(0);
    expect(run.ceiling.waited).toBe(0);
    const start = run.windowStartMs - schedule.windowStartMs;
    run.requests.forEach((r, i) => {
      expect(r.scheduledMs).toBeCloseTo(start + schedule.atMs[i]!, 6);
      // never sent before its time; late by a timer's slack at most (wide: a loaded 2-core machine)
      expect(r.timeline.sendMs).toBeGreaterThanOrEqual(r.scheduledMs - 0.001);
      expect(r.timeline.sendMs - r.scheduledMs).toBeLessThan(250);
      // each request is answered in about 20 ms, so every one ends done, but one still streaming
      // when the window closed: the cell aborts that by design (a loaded machine once sent the
      // last one late enough for that), and only at the window's end
      const end = r.timeline.end;
      if (end?.kind === 'aborted') expect(end.atMs, `${r.timeline.id} aborted before the window's end`).toBeGreaterThanOrEqual(run.windowEndMs);
      else expect(end?.kind, r.timeline.id).toBe('done');
    });
    expect(run.requests.filter((r) => r.timeline.end?.kind === 'aborted').length, 'requests aborted at the window end').toBeLessThanOrEqual(2 * threads);
    expect(run.windowEndMs - run.windowStartMs).toBeGreaterThanOrEqual(1500);
    // request i is the schedule's i-th, whichever thread sent it
    expect(run.requests.map((r) => r.timeline.id)).toEqual(run.requests.map((_, i) => `rate-r0x40-q${i}`));
    expect(run.clientThreads).toBe(threads > 1 ? threads : undefined);
    expect(run.clientCpu?.source).toBe('thread');
    expect(run.loopDelayMs).toBeDefined();
  });

  test('a server slower than the rate does not slow the sends: they keep the schedule, and in flight grows', async () => {
    slowTokenMs = 150; // 600 ms a request at 20 requests/s: about 12 in flight, whatever the server does
    const schedule = arrivalSchedule({ rate: 20, process: { kind: 'constant' }, seed: 1, windowMs: 1500 });
    const run = await runRateCell(session(urlOf()), {
      context: 0, rate: 20, schedule, promptFor: (i) => `Hi ${i}`, scoutPrompts: [], windowMs: 1500, maxInFlight: 64, drainTimeoutMs: 1000, metricsIntervalMs: 1000, threads,
    });
    expect(run.requests.length).toBe(30);
    const gaps = run.requests.slice(1).map((r, i) => r.timeline.sendMs - run.requests[i]!.timeline.sendMs);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(40);
    expect(mean).toBeLessThan(60);
    expect(run.ceiling.peakInFlight).toBeGreaterThanOrEqual(8);
  });

  test('the ceiling holds requests back, and says so: waited and unsent are counted', async () => {
    slowTokenMs = 200; // 800 ms a request, 2 at a time, 20 due per second
    const schedule = arrivalSchedule({ rate: 20, process: { kind: 'constant' }, seed: 1, windowMs: 1000 });
    const run = await runRateCell(session(urlOf()), {
      context: 0, rate: 20, schedule, promptFor: (i) => `Hi ${i}`, scoutPrompts: [], windowMs: 1000, maxInFlight: 2, drainTimeoutMs: 1000, metricsIntervalMs: 1000, threads,
    });
    expect(run.ceiling.peakInFlight).toBe(2);
    expect(run.ceiling.waited).toBeGreaterThan(0);
    expect(run.unsent).toBeGreaterThan(0);
    expect(run.requests.length + run.unsent).toBe(schedule.atMs.length);
    expect(run.requests.some((r) => r.waitedForCeiling)).toBe(true);
  });
});

describe('runRateCell over client threads', () => {
  const { fake, url: urlOf } = serverForTheBlock(() => 100);

  test('a thread killed mid-cell fails the cell, naming the thread and its lanes', async () => {
    // a 6 s window: the cell must end at the kill (0.4 s after its threads started), well before the
    // window's end; a 2 s window left too little room on a loaded 2-core machine, where starting
    // the threads alone took over a second (CI's unit files two at a time, 2026-12-07: 1,986 ms)
    const schedule = arrivalSchedule({ rate: 40, process: { kind: 'constant' }, seed: 1, windowMs: 6000 });
    fake.arrivals.length = 0;
    const run = runRateCell(session(urlOf()), {
      context: 0, rate: 40, schedule, promptFor: (i) => `Hi ${i}`, scoutPrompts: [], windowMs: 6000, maxInFlight: 64, drainTimeoutMs: 1000, metricsIntervalMs: 1000, threads: 2,
      onThreads: (kill) => void setTimeout(() => void kill(1), 400),
    });
    await expect(run).rejects.toThrow(/^client thread 2 of 2 \(lanes 32–63\) exited \(code 1\) before it reported its requests; the cell's figures are not reported$/);
    // the cell ended at the failure, not at its window's end: the server got a small part of the
    // schedule's 240 requests (about 16 in the 0.4 s before the kill; the surviving thread's half
    // of the schedule, had the cell gone on, would be 120), counted where a wall-clock bound on
    // the cell failed for the machine's load
    expect(fake.arrivals.length).toBeLessThan(schedule.atMs.length / 4);
  });
});

test('over client threads each thread gets the requests in proportion to its lanes', () => {
  // a ceiling of 10 on 8 threads: lanes [2, 2, 1, 1, 1, 1, 1, 1]; i mod 8 would give the one-lane
  // threads as many requests as the two-lane ones, and make them wait far under the ceiling
  expect(requestThreads(threadShares(10, 8))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 0, 1]);
  // even shares: request i on thread i mod N, as before
  expect(requestThreads(threadShares(512, 2))).toEqual(Array.from({ length: 512 }, (_, i) => i % 2));
  for (const [ceiling, threads] of [[10, 8], [7, 3], [100, 6], [3, 5]] as const) {
    const shares = threadShares(ceiling, Math.min(threads, ceiling));
    const cycle = requestThreads(shares);
    expect(cycle).toHaveLength(ceiling);
    shares.forEach((share, k) => expect(cycle.filter((t) => t === k)).toHaveLength(share.workerCount));
  }
});
