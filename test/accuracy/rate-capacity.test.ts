/**
 * The highest rate at the SLO meets the simulator's truth (issue 22, item 5): on the tiny sim with
 * fixed 10 ms steps, 8 running requests and 32 output tokens (service limit μ = 25 requests/s),
 * the rate capacity search (slo/rate-capacity.ts over rate cells judged by rateSloVerdict) finds,
 * for two TTFT-from-the-schedule SLOs, a rate within 10 % of the analytic truth.
 *
 * The truth is computed from a model of the sim, never from the measured run: an event-by-event
 * queue of its step model (engine-model.ts: steps of exactly stepBaseMs back to back while there is
 * work; at each step's start, waiting requests are admitted FIFO while fewer than 8 run; a request
 * admitted at a step's start gets its first token at that step's end, and holds its slot for 32
 * steps; an arrival at an idle engine starts a step at once), fed the very schedule the cell
 * sends (the same process, seed, window and ramp), its TTFT p90 taken from the scheduled time over
 * the requests scheduled in the window. Each rate is measured once (again, at most twice, where the
 * client was the limit: Client-limited) and judged against both SLOs;
 * the confirmation is a fresh measurement. The truth is the highest rate, on a 0.25 % grid, whose
 * modelled TTFT p90 meets the bound. One schedule seed at every rate: a Poisson schedule is then
 * the same draws scaled by 1/rate, so TTFT grows with the rate and the bracket is sharp.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { openRun, type OpenedRun } from '../../src/matrix/open.js';
import { arrivalSchedule } from '../../src/load/arrivals.js';
import { runRateCell } from '../../src/load/rate-cell.js';
import { computeRateFigures, inSystemIntervals } from '../../src/metrics/rate-figures.js';
import { distribution } from '../../src/metrics/stats.js';
import { judgeRateStatus } from '../../src/judge/judge-rate.js';
import { rateSloVerdict } from '../../src/judge/slo-verdict.js';
import { rateCapacityRow, rateJudgedOf } from '../../src/judge/rate-capacity-row.js';
import { searchRateCapacity, type RateJudged } from '../../src/slo/rate-capacity.js';
import { parseSloText } from '../../src/slo/slo.js';
import { describeRateCapacity } from '../../src/text/capacity-line.js';
import type { RateCellResult, Slo } from '../../src/shapes/result.js';

const STEP_MS = 10;
const RUNNING = 8;
const OUTPUT = 32;
const WINDOW_MS = 3000;
const RAMP_MS = 500;
const SEED = 7;
const ARRIVAL = { kind: 'poisson' } as const;
const schedule = (rate: number) => arrivalSchedule({ rate, process: ARRIVAL, seed: SEED, windowMs: WINDOW_MS, rampMs: RAMP_MS });

/** TTFT p90 from the schedule of the sim's step model fed this rate's schedule (the header's model). */
function modelTtftP90(rate: number): number {
  const at = Array.from(schedule(rate).atMs);
  const ttft: number[] = [];
  const waiting: number[] = [];
  let running: number[] = [];
  let next = 0;
  let t = 0;
  while (next < at.length || waiting.length > 0 || running.length > 0) {
    if (running.length === 0 && waiting.length === 0) t = Math.max(t, at[next]!); // idle: a step starts at the arrival
    while (next < at.length && at[next]! <= t) waiting.push(at[next++]!);
    while (waiting.length > 0 && running.length < RUNNING) {
      const a = waiting.shift()!;
      if (a >= RAMP_MS && a < RAMP_MS + WINDOW_MS) ttft.push(t + STEP_MS - a);
      running.push(OUTPUT);
    }
    t += STEP_MS;
    running = running.map((left) => left - 1).filter((left) => left > 0);
  }
  return distribution(ttft)!.p90;
}

/** the highest rate (0.25 % grid, from 5 requests/s) whose modelled TTFT p90 meets the bound */
function truth(boundMs: number): number {
  let best = 0;
  for (let rate = 5; rate < 25; rate *= 1.0025) {
    if (modelTtftP90(rate) > boundMs) break;
    best = rate;
  }
  return best;
}

describe('the highest rate at the SLO against the sim step model', () => {
  let opened: OpenedRun;
  const measured = new Map<number, RateCellResult>();
  /** a rate measured again (the search's confirmation), its latest cell */
  const remeasured = new Map<number, RateCellResult>();
  beforeAll(async () => {
    const cfg = resolveSuite({ target: { simProfile: 'tiny' }, matrix: { contexts: [0], concurrency: [1], prefill: [], windowS: WINDOW_MS / 1000, maxOutputTokens: OUTPUT } }, {});
    opened = await openRun({ ...cfg, simOverrides: { stepBaseMs: STEP_MS, eosProbability: 0, maxRunningRequests: RUNNING, prefillPerTokenMs: 0 } });
  }, 60_000);
  afterAll(() => opened?.close());

  /** one rate cell on the sim (the rate cell's pieces), measured once per rate and judged against each SLO */
  async function cellAt(rate: number, fresh = false): Promise<RateCellResult> {
    const kept = measured.get(rate);
    if (kept && !fresh) return kept;
    // a Client-limited cell says the client, not the sim, set its timings (a loaded 2-core CI machine
    // once had 12/s so, and the search rightly stopped below it): this test is of the search against
    // the sim's truth, so such a cell is measured again, at most twice more, and says so
    let cell = await measureOnce(rate);
    for (let again = 1; again <= 2 && cell.status === 'client-limited'; again++) {
      console.log(`${rate}/s was Client-limited (${JSON.stringify(cell.evidence)}): measured again (${again}/2)`);
      cell = await measureOnce(rate);
    }
    if (!kept) measured.set(rate, cell);
    else remeasured.set(rate, cell);
    return cell;
  }
  /** each measured cell's simulator step lateness p99 (ms): how far the sim fell behind its own 10 ms steps */
  const lateness = new Map<RateCellResult, number>();
  async function measureOnce(rate: number): Promise<RateCellResult> {
    const base = opened.session.target.baseUrl;
    await fetch(`${base}/_sim/reset`, { method: 'POST' }).then((r) => r.arrayBuffer());
    const cell = await measureCell(rate);
    const state = (await (await fetch(`${base}/_sim/state`)).json()) as { stepLatenessMs: { p99?: number } };
    lateness.set(cell, state.stepLatenessMs.p99 ?? 0);
    return cell;
  }
  async function measureCell(rate: number): Promise<RateCellResult> {
    const s = schedule(rate);
    const run = await runRateCell(opened.session, {
      context: 0, rate, schedule: s, promptFor: (i) => `Rate capacity request ${i}: continue.`, scoutPrompts: [], windowMs: WINDOW_MS, maxInFlight: 256, drainTimeoutMs: 10_000, metricsIntervalMs: 500,
    });
    const scheduledInWindow = Array.from(s.atMs).filter((x) => x >= RAMP_MS && x < RAMP_MS + WINDOW_MS).length;
    const figures = computeRateFigures({ requests: run.requests, scheduledInWindow, unsent: run.unsent, windowStartMs: run.windowStartMs, windowEndMs: run.windowEndMs, samples: run.samples });
    const v = judgeRateStatus({ figures, inSystem: inSystemIntervals(run.requests, run.windowEndMs), windowStartMs: run.windowStartMs, windowEndMs: run.windowEndMs, timelines: run.requests.map((r) => r.timeline), loopDelayBoundMs: 50, clientCpuBoundCores: 0.9 });
    return { context: 0, contextLabel: '0', rate, arrival: 'poisson', seed: SEED, status: v.status, statuses: v.statuses, evidence: v.evidence, figures, finishedAt: new Date().toISOString() };
  }
  const judged = async (rate: number, slo: Slo, adaptive: boolean, fresh = false): Promise<RateJudged> => {
    const cell = { ...(await cellAt(rate, fresh)) };
    cell.slo = rateSloVerdict(cell, slo);
    return rateJudgedOf(cell, adaptive)!;
  };

  test.each([60, 150])('TTFT p90 ≤ %i ms: within 10 % of the truth', async (boundMs) => {
    const slo = parseSloText(`ttftP90<=${boundMs}`);
    const expected = truth(boundMs);
    // one cell at a time: rate cells never overlap
    const columns: RateJudged[] = [];
    for (const r of [6, 12, 24]) columns.push(await judged(r, slo, false));
    const search = await searchRateCapacity({ columns, probe: (rate, why) => judged(rate, slo, true, why === 'confirmation') });
    const row = rateCapacityRow({ context: 0, contextLabel: '0', judged: search.judged, ...(search.confirmation ? { confirmation: search.confirmation } : {}) });
    const model = row.searched.map((s) => `${s.rate}: model ${modelTtftP90(s.rate).toFixed(1)} ms, measured ${measured.get(s.rate)?.figures?.ttftFromScheduleMs?.p90.toFixed(1)} ms`);
    console.log(`TTFT p90 ≤ ${boundMs} ms: found ${describeRateCapacity(row)}; truth ${expected.toFixed(2)} req/s\n  ${model.join('\n  ')}`);
    expect(expected).toBeGreaterThan(6);
    expect(row.atLeast).toBe(false);
    expect(row.adaptiveCells).toBeLessThanOrEqual(7);
    expect(Math.abs(row.capacity - expected) / expected).toBeLessThanOrEqual(0.1);
    // the answer is measured once more, a fresh cell near the model there, and the row says whether it
    // held (it sits within 5 % of the bound, so on a loaded machine it may not: the row then reads
    // "unconfirmed", as a CI run once had it at 63 ms against a model's 53.6)
    expect(row.confirmation?.rate).toBe(row.capacity);
    const confirmation = remeasured.get(row.capacity)!;
    const confirmedP90 = confirmation.figures?.ttftFromScheduleMs?.p90;
    expect(confirmedP90).toBeDefined();
    // Valid, it meets the SLO where its p90 is within the bound (Saturated or Client-limited never does)
    expect(row.confirmation!.meets).toBe(confirmation.status === 'valid' && confirmedP90! <= boundMs);
    // the model is of a sim that keeps its 10 ms steps; at the knee a late step moves TTFT p90 most
    // (a hunt beside a spinning process read 52.4 ms against the model's 40.4): a confirmation
    // whose sim fell behind its steps (p99 over 2 ms late) is measured again, twice at most, said
    const modelAt = modelTtftP90(row.capacity);
    let check = confirmation;
    const off = (c: RateCellResult) => Math.abs(c.figures!.ttftFromScheduleMs!.p90 - modelAt) / modelAt;
    for (let again = 1; again <= 2 && off(check) > 0.25 && (lateness.get(check) ?? 0) > 2; again++) {
      console.log(`confirmation at ${row.capacity}/s: TTFT p90 ${check.figures!.ttftFromScheduleMs!.p90.toFixed(1)} ms against the model's ${modelAt.toFixed(1)}, the sim's steps late by ${lateness.get(check)!.toFixed(1)} ms at p99: measured again (${again}/2)`);
      check = await measureOnce(row.capacity);
    }
    expect(off(check), `confirmation TTFT p90 ${check.figures!.ttftFromScheduleMs!.p90} ms against the model's ${modelAt.toFixed(1)} (sim steps late ${lateness.get(check)?.toFixed(1)} ms at p99)`).toBeLessThanOrEqual(0.25);
  }, 90_000);
});
