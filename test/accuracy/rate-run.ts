/**
 * Open-loop rate cells against an embedded tiny simulator with a fixed step, as the rate accuracy
 * tests run them (rate-saturation.test.ts, arrival-log.test.ts): `open` starts the sim with its
 * own knobs, `measure` runs one rate cell and judges it as the matrix does.
 */
import { resolveSuite } from '../../src/config/resolve.js';
import { openRun, type OpenedRun } from '../../src/matrix/open.js';
import { arrivalSchedule } from '../../src/load/arrivals.js';
import { runRateCell } from '../../src/load/rate-cell.js';
import { computeRateFigures, inSystemIntervals } from '../../src/metrics/rate-figures.js';
import { judgeRateStatus } from '../../src/judge/judge-rate.js';
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

