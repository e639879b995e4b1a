/**
 * Arrivals match the process (issue 22): the simulator's arrival log (GET /_sim/arrivals) passes
 * Kolmogorov–Smirnov for Poisson and gamma gaps, and constant gaps keep their period. What the
 * server saw is timed to the millisecond here, so these run in the timing project (one file at a
 * time), apart from rate-saturation.test.ts, whose bounds are wide.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { arrivalSchedule } from '../../src/load/arrivals.js';
import { exponentialCdf, gammaCdf, ksTest } from '../../src/metrics/distributions.js';
import { median } from '../../src/metrics/stats.js';
import type { OpenedRun } from '../../src/matrix/open.js';
import type { Arrival } from '../../src/shapes/arrival.js';
import { measure, open } from './rate-run.js';

/**
 * A run's send delay or sim step lateness p99 over this bent its arrivals (the arrival log's
 * tests): with another process spinning on one of the two cores both read 1–3 ms and Kolmogorov–
 * Smirnov passed (D 0.03–0.044, six runs, 2026-12-07); the run that failed it (D 0.084) had gaps
 * near zero by the tens, sends released together after stalls of tens of ms.
 */
const BENT_MS = 5;

describe("the simulator's arrival log", () => {
  let opened: OpenedRun;
  beforeAll(async () => {
    opened = await open(2);
  }, 60_000);
  afterAll(() => opened?.close());
  const arrivals = async (ids: Set<string>) => {
    const log = (await (await fetch(`${opened.sim!.url}/_sim/arrivals`)).json()) as Array<[string, number]>;
    return log.filter(([id]) => ids.has(id)).map(([, at]) => at);
  };
  /**
   * A run whose arrivals the machine did not bend: the question here is what the server saw of
   * the schedule, and a loaded machine bends it on the way (the client's sends late on their
   * times, or the sim's event loop late to take them in: a CI-like run with another process
   * spinning read Poisson gaps at KS D = 0.084, p = 0.0003). Each run is judged by its own
   * records, never by the test's verdict: the client's send delay p99 and the sim's step-timer
   * lateness p99 over the run (the sim's lateness samples are reset before it); one over
   * BENT_MS is run again, at most three times in all, and the least bent is kept, with a line each.
   */
  const undisturbed = async (name: string, rate: number, arrival: Arrival, o: { windowMs: number; seed?: number }) => {
    let best: { m: Awaited<ReturnType<typeof measure>>; worst: number } | undefined;
    for (let attempt = 1; attempt <= 3; attempt++) {
      await (await fetch(`${opened.sim!.url}/_sim/reset`, { method: 'POST' })).arrayBuffer();
      const m = await measure(opened, rate, arrival, { ...o, rampMs: 0, maxInFlight: 256 });
      const state = (await (await fetch(`${opened.sim!.url}/_sim/state`)).json()) as { stepLatenessMs: { p99?: number } };
      const sendP99 = m.figures.dispatchDelayMs?.p99 ?? 0;
      const simLateP99 = state.stepLatenessMs.p99 ?? 0;
      const worst = Math.max(sendP99, simLateP99);
      console.log(`[arrivals] ${name} ${rate}/s, attempt ${attempt}: send delay p99 ${sendP99.toFixed(2)} ms, sim step lateness p99 ${simLateP99.toFixed(2)} ms${worst > BENT_MS ? ` (over ${BENT_MS} ms: bent by the machine)` : ''}`);
      if (!best || worst < best.worst) best = { m, worst };
      if (worst <= BENT_MS) break;
    }
    return best!.m;
  };

  // A right process fails Kolmogorov–Smirnov at p < 0.01 once in 100 schedules (the schedules
  // themselves are tested over 20 seeds in test/load/arrivals.test.ts). Here the question is what
  // the server saw, so the seed is one whose schedule is typical of its process (p ≥ 0.1, checked
  // first): a failure then says the sends or the network bent the process. The gamma case is
  // gamma:2 (smoother than Poisson): a bursty b < 1 draws many gaps under 1 ms, which the loopback
  // network blurs by its own jitter of about that size, a limit of any client, not of the schedule.
  const cases: Array<[string, Arrival, (rate: number) => (x: number) => number]> = [
    ['poisson', { kind: 'poisson' }, (r) => exponentialCdf(1 / r)],
    ['gamma:2', { kind: 'gamma', burstiness: 2 }, (r) => gammaCdf(2, 1 / (r * 2))],
  ];
  test.each(cases)('%s at 40/s over 15 s (≥ 500 arrivals): the gaps the server saw pass Kolmogorov–Smirnov at p > 0.01', async (name, arrival, cdf) => {
    const schedule = arrivalSchedule({ rate: 40, process: arrival, seed: 1, windowMs: 15_000 }).atMs;
    expect(ksTest(Array.from(schedule).slice(1).map((t, i) => (t - schedule[i]!) / 1000), cdf(40)).p).toBeGreaterThanOrEqual(0.1);
    const { run } = await undisturbed(name, 40, arrival, { windowMs: 15_000, seed: 1 });
    const at = await arrivals(new Set(run.requests.map((r) => r.timeline.id)));
    // every scheduled request reached the server
    expect(at.length).toBe(schedule.length);
    expect(at.length).toBeGreaterThanOrEqual(500);
    const gaps = at.slice(1).map((t, i) => (t - at[i]!) / 1000);
    const ks = ksTest(gaps, cdf(40));
    console.log(`sim arrival log, ${name} 40/s: ${at.length} arrivals, KS D = ${ks.d.toFixed(4)}, p = ${ks.p.toFixed(3)}`);
    expect(ks.p).toBeGreaterThan(0.01);
  }, 120_000);

  test('constant at 50/s: the gaps the server saw are 20 ms, the median within 1 ms', async () => {
    const { run } = await undisturbed('constant', 50, { kind: 'constant' }, { windowMs: 6000 });
    const at = await arrivals(new Set(run.requests.map((r) => r.timeline.id)));
    const errors = at.slice(1).map((t, i) => Math.abs(t - at[i]! - 20)).sort((a, b) => a - b);
    const p90 = errors[Math.floor(0.9 * (errors.length - 1))]!;
    console.log(`sim arrival log, constant 50/s: ${at.length} arrivals, |gap − 20 ms| median ${median(errors)!.toFixed(2)} ms, p90 ${p90.toFixed(2)} ms`);
    expect(at.length).toBeGreaterThanOrEqual(295);
    expect(median(errors)!).toBeLessThan(1);
  }, 120_000);
});
