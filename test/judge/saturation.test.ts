/**
 * The Saturated decision on queues whose truth is known: Poisson arrivals to c servers, each
 * serving one request in 1/μ₁ s (M/D/c: a forced output length makes an engine's service time
 * nearly fixed), simulated event by event, offered 0.8 and 1.2 times the service limit c·μ₁, at
 * three limits. Stable queues are called Valid, overloaded ones Saturated, in ≥ 19 of 20 seeds.
 * With exponential service (M/M/c) and a small limit, a 60 s window does not hold the evidence:
 * the queue's noise over the window is as large as its drift; the last case shows the detector
 * then stays silent rather than guessing.
 * A window that opens on an empty system (no ramp) first fills to λW in one latency W: that climb
 * is left out (judgeWindowSaturation); blocks are at least W wide, and with fewer than 6 after the
 * fill-up Saturated is not judged.
 */
import { describe, expect, test } from 'vitest';
import { blockMeans, FILL_UP, judgeSaturation, judgeWindowSaturation, requestLatency } from '../../src/judge/saturation.js';
import { mulberry32 } from '../../src/random.js';
import { mannKendall, normalCdf, senSlope } from '../../src/metrics/trend.js';

/** [arrival, departure] of every request of an M/D/c (or M/M/c) queue over `totalMs`, first-come first-served. */
function queue(rate: number, servers: number, perServer: number, totalMs: number, seed: number, service: 'fixed' | 'exponential' = 'fixed'): Array<[number, number]> {
  const u = mulberry32(seed);
  const exp = (r: number) => (-Math.log(1 - u()) / r) * 1000;
  const free = new Array<number>(servers).fill(0); // when each server is next free
  const out: Array<[number, number]> = [];
  for (let t = exp(rate); t < totalMs; t += exp(rate)) {
    let k = 0;
    for (let i = 1; i < servers; i++) if (free[i]! < free[k]!) k = i;
    const start = Math.max(t, free[k]!);
    free[k] = start + (service === 'fixed' ? 1000 / perServer : exp(perServer));
    out.push([t, free[k]!]);
  }
  return out;
}

describe('trend statistics', () => {
  test('Φ, Mann–Kendall and Sen agree with hand values', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 7);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 6);
    expect(normalCdf(-2.326348)).toBeCloseTo(0.01, 6);
    const up = mannKendall([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(up.s).toBe(45);
    expect(up.pIncreasing).toBeLessThan(1e-4);
    expect(mannKendall([5, 5, 5, 5]).pIncreasing).toBeCloseTo(0.5, 6);
    expect(mannKendall([10, 9, 8, 7, 6]).pIncreasing).toBeGreaterThan(0.95);
    expect(senSlope([0, 1, 2, 3, 4], [0, 2, 4, 6, 100])).toBe(2);
  });

  test('block means are time-weighted', () => {
    // one request over the whole first half, two over the last quarter
    const means = blockMeans([[0, 500], [750, 1000], [750, 2000]], 0, 1000, 4);
    expect(means).toEqual([1, 1, 0, 2]);
  });
});

describe('Saturated against a queue of known service limit', () => {
  const windowMs = 60_000;
  const warmMs = 30_000; // the queue settles before the window (the ramp's role in a rate cell)
  // The evidence grows with the arrivals in the window, λW: at 1.2 × the limit the queue climbs
  // 0.2 λW while Poisson arrivals alone wander √(λW). Below about 400 arrivals a window cannot
  // tell 1.2 × from a lucky stable stretch, so the 2/s limit gets a 4-minute window.
  const limits: Array<[number, number, number]> = [
    [4, 0.5, 240_000], // 4 servers × 0.5/s: limit 2 requests/s
    [16, 0.5, 60_000], // 8/s
    [32, 1, 60_000], // 32/s
  ];
  test.each(limits)('c = %i, μ₁ = %s, window %i ms: 0.8 × the limit is Valid and 1.2 × is Saturated in ≥ 19 of 20 seeds', (c, mu1, windowMs) => {
    const limit = c * mu1;
    const calls = { stable: 0, overloaded: 0 };
    for (let seed = 1; seed <= 20; seed++) {
      for (const [load, key] of [[0.8, 'stable'], [1.2, 'overloaded']] as const) {
        const reqs = queue(load * limit, c, mu1, warmMs + windowMs, seed * 7 + (key === 'stable' ? 0 : 1));
        const verdict = judgeSaturation(blockMeans(reqs, warmMs, warmMs + windowMs), windowMs);
        if (verdict.saturated === (key === 'overloaded')) calls[key]++;
      }
    }
    expect(calls.stable, 'stable queues called Valid').toBeGreaterThanOrEqual(19);
    expect(calls.overloaded, 'overloaded queues called Saturated').toBeGreaterThanOrEqual(19);
  });

  test('M/M/c at a limit of 2/s: no stable queue is called Saturated (the overloaded ones mostly are)', () => {
    let falseCalls = 0;
    let found = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const stable = queue(1.6, 4, 0.5, warmMs + windowMs, seed, 'exponential');
      if (judgeSaturation(blockMeans(stable, warmMs, warmMs + windowMs), windowMs).saturated) falseCalls++;
      const over = queue(2.4, 4, 0.5, warmMs + windowMs, seed + 100, 'exponential');
      if (judgeSaturation(blockMeans(over, warmMs, warmMs + windowMs), windowMs).saturated) found++;
    }
    expect(falseCalls).toBeLessThanOrEqual(1);
    expect(found).toBeGreaterThanOrEqual(14);
  });
});

describe('a window that opens on an empty system, or is short against a request latency', () => {
  // the second user trial's cell: tiny sim, 1K at 5 requests/s, 3 s window, no ramp; 8 running
  // slots, a request's latency about 1.1 s, so about 5.5 in the system once filled: stable
  const c = 8;
  const mu1 = 1 / 1.1;
  test('the trial\'s 3 s window: the whole window read the fill-up as a climb; now Saturated is not judged there', () => {
    let wholeWindow = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const reqs = queue(5, c, mu1, 3000, seed);
      if (judgeSaturation(blockMeans(reqs, 0, 3000), 3000).saturated) wholeWindow++;
      const v = judgeWindowSaturation(reqs, 0, 3000);
      expect(v.saturated).toBe(false);
      expect(v.notJudged).toBeDefined();
    }
    expect(wholeWindow, 'the whole window (the fill-up read as a climb)').toBeGreaterThanOrEqual(3);
  });

  test('a 15 s window: the fill-up (about one latency) is left out, and the stable queue is not Saturated', () => {
    let called = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const v = judgeWindowSaturation(queue(5, c, mu1, 15_000, seed), 0, 15_000);
      expect(v.notJudged).toBeUndefined();
      expect(v.fromMs).toBeGreaterThanOrEqual(1100);
      expect(v.fromMs).toBeLessThan(1100 + 1500);
      expect(v.blockMeans.length).toBeGreaterThanOrEqual(FILL_UP.minBlocks);
      if (v.saturated) called++;
    }
    expect(called).toBeLessThanOrEqual(1);
  });

  test('blocks are at least one latency wide: a queue of fixed 1.1 s requests, uncongested, 10 s window: ⌊(10 s − fill-up) / 1.1 s⌋ blocks', () => {
    const v = judgeWindowSaturation(queue(2, 16, mu1, 10_000, 2), 0, 10_000);
    expect(v.notJudged).toBeUndefined();
    expect(v.blockMeans.length).toBe(Math.floor((10_000 - v.fromMs) / 1100));
  });

  test('after a ramp R much longer than L, only L·L/R is left out (the window opens short by L/(2R) of the level)', () => {
    const reqs = queue(5, c, mu1, 23_000, 3);
    const v = judgeWindowSaturation(reqs, 10_000, 23_000, { rampMs: 10_000 });
    expect(v.fromMs).toBeGreaterThan(0);
    expect(v.fromMs).toBeLessThan(300);
    // a ramp no longer than L leaves out L, as no ramp does
    expect(judgeWindowSaturation(reqs, 10_000, 23_000, { rampMs: 1000 }).fromMs).toBeGreaterThanOrEqual(1100);
  });

  test('an overloaded queue filling from empty is still Saturated in ≥ 19 of 20 seeds (16 × 0.5/s, 1.2 ×, 60 s window)', () => {
    let found = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const v = judgeWindowSaturation(queue(9.6, 16, 0.5, 60_000, seed * 7 + 1), 0, 60_000);
      expect(v.fromMs).toBeLessThan(4000);
      if (v.saturated) found++;
    }
    expect(found).toBeGreaterThanOrEqual(19);
  });

  test(`under ${FILL_UP.minBlocks} latencies after the fill-up, Saturated is not judged, and the evidence says what to change`, () => {
    // the trial's 3 s window
    const v = judgeWindowSaturation(queue(5, c, mu1, 3000, 5), 0, 3000);
    expect(v.saturated).toBe(false);
    expect(v.notJudged).toMatch(/a request took about 1\.1 s, .* needs 6 such spans after the system has filled; this 3\.0 s window had 1\.\d s after 1\.\d s of fill-up/);
    expect(v.notJudged).toMatch(/Lengthen the window to (\d+) s or more \(LLM_BENCH_DURATION_S=\1, which lengthens every cell's window\)$/);
  });

  /** the queue's requests with their timings: first token one 20 ms step after service starts */
  function timedQueue(rate: number, servers: number, perServer: number, totalMs: number, seed: number) {
    return queue(rate, servers, perServer, totalMs, seed).map(([t, end]) => ({ scheduledMs: t, firstTokenMs: end - 1000 / perServer + 20, endMs: end }));
  }

  test('few slots, twice overloaded from empty: L comes from the requests without their queueing, and the cell is Saturated', () => {
    // 4 slots × 3 s requests (limit 1.33/s), offered 2.67/s, 30 s window, no ramp: by the 10th
    // request the queue already holds several, so the end-to-end p90 of the first 10 is about 8 s
    let fromEndToEnd = 0;
    let fromTimings = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const reqs = timedQueue(8 / 3, 4, 1 / 3, 30_000, seed);
      const intervals = reqs.map((r): [number, number] => [r.scheduledMs, Math.min(r.endMs, 30_000)]);
      const timed = requests(reqs, 30_000);
      const v = judgeWindowSaturation(intervals, 0, 30_000, { requests: timed });
      expect(requestLatency(timed, 30_000)!.latencyMs).toBeLessThan(3200);
      if (v.saturated) fromTimings++;
      if (judgeWindowSaturation(intervals, 0, 30_000).saturated) fromEndToEnd++;
    }
    expect(fromTimings).toBeGreaterThanOrEqual(19);
    expect(fromEndToEnd, 'L from the end-to-end latencies (queue included) judges far fewer').toBeLessThan(fromTimings);
  });

  test('a request that started just before the window closed is no lower bound: L from the finished ones, no advice to cap the output', () => {
    // 0.65 s requests; the last one got its first token 0.1 s before the window's end
    const reqs = [0, 200, 400, 600, 2900].map((t) => ({ scheduledMs: t, firstTokenMs: t + 10, ...(t + 650 <= 3000 ? { endMs: t + 650 } : {}) }));
    const l = requestLatency(reqs, 3000)!;
    expect(l.unfinished).toBe(false);
    expect(l.latencyMs).toBeCloseTo(650, 6);
    // one still running past every finished one: a lower bound
    const long = requestLatency([...reqs.slice(0, 4), { scheduledMs: 800, firstTokenMs: 810 }], 3000)!;
    expect(long.unfinished).toBe(true);
    expect(long.latencyMs).toBeGreaterThan(1000); // its 2.19 s so far raise the p90
  });

  test('requests still running when the window closes: L is a lower bound, and the advice is to cap the output', () => {
    // 20 s requests in a 10 s window
    const reqs = timedQueue(2, 64, 1 / 20, 10_000, 4);
    const v = judgeWindowSaturation(reqs.map((r): [number, number] => [r.scheduledMs, Math.min(r.endMs, 10_000)]), 0, 10_000, { requests: requests(reqs, 10_000) });
    expect(v.saturated).toBe(false);
    expect(v.notJudged).toMatch(/^a request took at least \d+\.\d s \(some were still running when the window closed\)/);
    expect(v.notJudged).toContain('Cap the output (LLM_BENCH_MAX_TOKENS) so requests end within the window');
  });
});

/** what the client saw of each request by the window's end: no end for one still running */
function requests(reqs: ReadonlyArray<{ scheduledMs: number; firstTokenMs: number; endMs: number }>, windowEndMs: number) {
  return reqs.map((r) => ({ scheduledMs: r.scheduledMs, ...(r.firstTokenMs <= windowEndMs ? { firstTokenMs: r.firstTokenMs } : {}), ...(r.endMs <= windowEndMs ? { endMs: r.endMs } : {}) }));
}
