/**
 * Open-loop rate cells against an embedded tiny simulator with a fixed step, as the rate accuracy
 * tests run them (rate-saturation.test.ts, arrival-log.test.ts): `open` starts the sim with its
 * own knobs, `measure` runs one rate cell and judges it as the matrix does, and `measureRetaken`
 * measures again a cell the client's timing made Client-limited.
 */
import { resolveSuite } from '../../src/config/resolve.js';
import { openRun, type OpenedRun } from '../../src/matrix/open.js';
import { arrivalSchedule } from '../../src/load/arrivals.js';
import { runRateCell } from '../../src/load/rate-cell.js';
import { computeRateFigures, inSystemIntervals } from '../../src/metrics/rate-figures.js';
import { judgeRateStatus } from '../../src/judge/judge-rate.js';
import { rateClientLimitedCauses } from '../../src/judge/rate-client-limited.js';
import type { Arrival } from '../../src/shapes/arrival.js';

export const OUTPUT = 32;
export const RUNNING = 8;

export async function open(stepBaseMs: number): Promise<OpenedRun> {
  const cfg = resolveSuite(
    {
      target: { simProfile: 'tiny' },
      matrix: { contexts: [0], concurrency: [1], prefill: [], windowS: 6, maxOutputTokens: OUTPUT },
    },
    {},
  );
  // the sim's own knobs: a fixed step, every request to its full length, 8 running at most
  return openRun({ ...cfg, simOverrides: { stepBaseMs, eosProbability: 0, maxRunningRequests: RUNNING } });
}

export async function measure(opened: OpenedRun, rate: number, arrival: Arrival, o: { windowMs: number; rampMs: number; maxInFlight: number; seed?: number }) {
  const schedule = arrivalSchedule({ rate, process: arrival, seed: o.seed ?? 1, windowMs: o.windowMs, rampMs: o.rampMs });
  const run = await runRateCell(opened.session, {
    context: 0,
    rate,
    schedule,
    promptFor: (i) => `Rate test request ${i}: continue.`,
    scoutPrompts: [],
    windowMs: o.windowMs,
    maxInFlight: o.maxInFlight,
    drainTimeoutMs: 10_000,
    metricsIntervalMs: 500,
  });
  const scheduledInWindow = Array.from(schedule.atMs).filter((t) => t >= o.rampMs && t < o.rampMs + o.windowMs).length;
  const figures = computeRateFigures({ requests: run.requests, scheduledInWindow, unsent: run.unsent, windowStartMs: run.windowStartMs, windowEndMs: run.windowEndMs, samples: run.samples });
  const verdict = judgeRateStatus({
    figures,
    inSystem: inSystemIntervals(run.requests, run.windowEndMs),
    windowStartMs: run.windowStartMs,
    windowEndMs: run.windowEndMs,
    timelines: run.requests.map((r) => r.timeline),
    loopDelayBoundMs: 50,
    clientCpuBoundCores: 0.9,
  });
  return { run, figures, verdict };
}

type Measured = Awaited<ReturnType<typeof measure>>;

/** whether the cell is Client-limited by the client's timing alone (its sends late, its loop held up), not by its in-flight ceiling */
export function clientLimitedByTiming(verdict: Measured['verdict']): boolean {
  const c = verdict.evidence.clientLimited;
  return c !== undefined && rateClientLimitedCauses(c).every((cause) => cause !== 'in-flight-ceiling');
}

/**
 * `measure`, again while the cell comes out Client-limited by the client's timing (a loaded
 * machine held the sends up: the test is about the server's queue, not the client), three
 * measurements at most, each retake logged with the evidence. The last is returned whatever it
 * reads, so the test still sees a cell that stayed so; a cell its ceiling held back is never retaken.
 */
export async function measureRetaken(label: string, ...args: Parameters<typeof measure>): Promise<Measured> {
  for (let attempt = 1; ; attempt++) {
    const m = await measure(...args);
    if (attempt >= 3 || !clientLimitedByTiming(m.verdict)) return m;
    console.log(`[rate] ${label}, ${args[1]}/s: Client-limited by the client's timing (${JSON.stringify(m.verdict.evidence.clientLimited)}): measured again (attempt ${attempt + 1} of 3)`);
  }
}
