/**
 * Open-loop rate cells against the simulator's truth (issue 22):
 * - Saturation is called correctly: on profiles whose analytic service limit μ is known
 *   (src/sim/service-limit.ts: 8 running requests, 32 output tokens, steps of 5, 10 and 20 ms:
 *   μ = 50, 25 and 12.5 requests/s), 0.8 μ is Valid and 1.2 μ is Saturated.
 * - Latency from the schedule is right: at 1.2 μ with the client's ceiling at the server's 8 slots
 *   the queue forms in the client: TTFT from the scheduled time grows through the window while
 *   TTFT from the send does not, and the cell says Client-limited. With the queue on the server
 *   (a high ceiling) both grow, and the one from the schedule is never the smaller.
 *
 * Constant arrivals in the saturation cases: with fixed service times (a forced output length) the
 * queue then holds still below μ and climbs linearly above it, so a short window decides; Poisson
 * arrivals need about 400 arrivals a window (test/judge/saturation.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RateRun } from '../../src/load/rate-cell.js';
import { median } from '../../src/metrics/stats.js';
import { serviceLimitPerS } from '../../src/sim/service-limit.js';
import { resolveSimProfile } from '../../src/sim/profiles.js';
import type { OpenedRun } from '../../src/matrix/open.js';
import { clientLimitedByTiming, measure, measureRetaken, open, OUTPUT, RUNNING } from './rate-run.js';

/** medians of a per-request latency over the first and the last third of the window, by scheduled time */
function thirds(run: RateRun, of: (r: RateRun['requests'][number]) => number | undefined): { first: number; last: number } {
  const span = run.windowEndMs - run.windowStartMs;
  const pick = (from: number, to: number) =>
    median(run.requests.filter((r) => r.scheduledMs >= run.windowStartMs + from * span && r.scheduledMs < run.windowStartMs + to * span).map(of).filter((x): x is number => x !== undefined))!;
  return { first: pick(0, 1 / 3), last: pick(2 / 3, 1) };
}

describe.each([5, 10, 20])('a sim with %i ms steps (8 running, 32 output tokens)', (stepBaseMs) => {
  let opened: OpenedRun;
  const mu = serviceLimitPerS({ ...resolveSimProfile('tiny'), stepBaseMs, maxRunningRequests: RUNNING }, { contextTokens: 0, outputTokens: OUTPUT });
  beforeAll(async () => {
    opened = await open(stepBaseMs);
  }, 60_000);
  afterAll(() => opened?.close());

  test(`0.8 μ is Valid and 1.2 μ Saturated (μ = ${(250 / stepBaseMs).toFixed(1)} requests/s)`, async () => {
    expect(mu).toBeCloseTo(250 / stepBaseMs, 6);
    const below = await measureRetaken(`${stepBaseMs} ms steps`, opened, 0.8 * mu, { kind: 'constant' }, { windowMs: 6000, rampMs: 1000, maxInFlight: 256 });
    // Valid, or Client-limited by the client's timing alone if three takes could not shed it: never Saturated or Errors
    expect(below.verdict.statuses.filter((s) => s !== 'client-limited' && s !== 'valid'), JSON.stringify(below.verdict.evidence.saturation)).toEqual([]);
    if (below.verdict.statuses.includes('client-limited')) expect(clientLimitedByTiming(below.verdict)).toBe(true);
    // a stable queue: every offered request completes
    expect(below.figures.completedRate / below.figures.offeredRate).toBeGreaterThan(0.85);
    const above = await measureRetaken(`${stepBaseMs} ms steps`, opened, 1.2 * mu, { kind: 'constant' }, { windowMs: 6000, rampMs: 1000, maxInFlight: 256 });
    expect(above.verdict.statuses, JSON.stringify(above.verdict.evidence.saturation)).toContain('saturated');
    // the server completes at its limit, not at the offered rate
    expect(above.figures.completedRate).toBeLessThan(1.08 * mu);
    expect(above.figures.completedRate).toBeGreaterThan(0.8 * mu);
    expect(above.figures.inSystem.max).toBeGreaterThan(above.figures.inSystem.mean);
  }, 120_000);
});

describe('latency from the schedule', () => {
  let opened: OpenedRun;
  const mu = 25; // 10 ms steps
  beforeAll(async () => {
    opened = await open(10);
  }, 60_000);
  afterAll(() => opened?.close());

  test('the queue in the client (ceiling = the server\'s 8 slots): from the schedule it grows, from the send it does not', async () => {
    const { run, figures, verdict } = await measure(opened, 1.2 * mu, { kind: 'constant' }, { windowMs: 6000, rampMs: 0, maxInFlight: RUNNING });
    const fromSchedule = thirds(run, (r) => (r.timeline.firstTokenMs !== undefined ? r.timeline.firstTokenMs - r.scheduledMs : undefined));
    const fromSend = thirds(run, (r) => (r.timeline.firstTokenMs !== undefined ? r.timeline.firstTokenMs - (r.timeline.sentHeadersMs ?? r.timeline.sendMs) : undefined));
    console.log(`ceiling 8 at 30/s: TTFT from schedule ${fromSchedule.first.toFixed(0)} → ${fromSchedule.last.toFixed(0)} ms; from send ${fromSend.first.toFixed(0)} → ${fromSend.last.toFixed(0)} ms`);
    // 6 s at 5 requests/s over the limit: about 20 more waiting by the last third, 0.32 s of service per 8
    expect(fromSchedule.last - fromSchedule.first).toBeGreaterThan(400);
    expect(Math.abs(fromSend.last - fromSend.first)).toBeLessThan(60);
    expect(verdict.statuses).toContain('client-limited');
    expect(figures.ceilingWaited).toBeGreaterThan(0);
  }, 60_000);

  test('the queue on the server (a high ceiling): both grow, and from the schedule is never less than from the send', async () => {
    const { run, verdict, figures } = await measureRetaken('the queue on the server', opened, 1.2 * mu, { kind: 'constant' }, { windowMs: 6000, rampMs: 0, maxInFlight: 256 });
    const fromSchedule = thirds(run, (r) => (r.timeline.firstTokenMs !== undefined ? r.timeline.firstTokenMs - r.scheduledMs : undefined));
    const fromSend = thirds(run, (r) => (r.timeline.firstTokenMs !== undefined ? r.timeline.firstTokenMs - (r.timeline.sentHeadersMs ?? r.timeline.sendMs) : undefined));
    expect(fromSend.last - fromSend.first).toBeGreaterThan(400);
    expect(fromSchedule.last).toBeGreaterThanOrEqual(fromSend.last);
    expect(verdict.statuses).toContain('saturated');
    // the queue is not in the client: its ceiling never held a request back (a Client-limited of
    // the client's timing alone, on a loaded machine, is measured again above and is no ceiling)
    expect(figures.ceilingWaited).toBe(0);
    expect(figures.unsent).toBe(0);
    if (verdict.statuses.includes('client-limited')) expect(clientLimitedByTiming(verdict), JSON.stringify(verdict.evidence.clientLimited)).toBe(true);
  }, 120_000);
});
