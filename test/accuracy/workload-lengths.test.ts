/**
 * Issue 23, done when: "The sent input and output lengths follow the configured distribution:
 * mean within 2 %, and a KS test at p > 0.01 over ≥ 500 requests."
 *
 * The workload `lengths:in=normal(512,128),out=uniform(8,24)` as a run resolves it (the suite's
 * workload text, resolveSuite), its requests built by the matrix's own cell load
 * (matrix/cell-load.ts openCellLoad, what every rate cell of a run sends), sent by a real
 * open-loop rate cell (load/rate-cell.ts runRateCell, 300 requests/s, constant arrivals, 4 s)
 * against the simulator in a worker thread (a clean 100 tok/s-per-stream server, 256 streams, no
 * EOS, so each request streams its max_tokens). The lengths SENT are what the result records
 * (metrics/lengths.ts sentLengths): each window request's prompt tokens as the server counted
 * them (usage), each completed request's output tokens as the stream counted them. Both are
 * checked against the configured distributions: the mean against the exact mean of the draws
 * (workload/draw.ts drawnMean, the normal's after rounding and clamping), and a discrete KS test
 * (metrics/distributions.ts) against the distribution's CDF (draw.ts distributionCdf). The same
 * samples against a neighbouring distribution are rejected, so the KS test is not vacuous here.
 * The usage counts are also checked against the simulator's own count per request, and each
 * completed request's counted output against the max_tokens it asked for.
 *
 * Why 1,200 requests and not 500: the draws are seeded, but a sample mean of uniform(8,24) over
 * 500 requests has a standard error of 1.4 % of its mean, so "within 2 %" would hang on the seed;
 * over 1,200 it is 0.9 %. (Measured here, seed 1, 150/s: the 569 completed outputs' mean was
 * 1.9 % below 16.)
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { arrivalSchedule } from '../../src/load/arrivals.js';
import { runRateCell } from '../../src/load/rate-cell.js';
import { distributionMean, type LengthDistribution } from '../../src/shapes/workload.js';
import { ksTestDiscrete } from '../../src/metrics/distributions.js';
import { sentLengths } from '../../src/metrics/lengths.js';
import { distributionCdf, drawnMean } from '../../src/workload/draw.js';
import { openCellLoad } from '../../src/matrix/cell-load.js';
import { describeRun } from '../../src/matrix/open.js';
import { planMatrix } from '../../src/matrix/plan.js';
import { openRunWorkload } from '../../src/matrix/workload-run.js';
import type { RunContext } from '../../src/matrix/context.js';
import { monoMs } from '../../src/clock.js';
import type { SimHandle } from '../../src/sim/index.js';
import { FAST_TINY, openAccuracyRun, startThreadSim, truthSince, type OpenedAccuracyRun } from './harness.js';

const WORKLOAD = 'lengths:in=normal(512,128),out=uniform(8,24)';
const RATE = 300;
const WINDOW_MS = 4000;

let sim: SimHandle;
let run: OpenedAccuracyRun;

beforeAll(async () => {
  sim = await startThreadSim({ personality: 'vllm', overrides: FAST_TINY });
  run = await openAccuracyRun(sim, {
    workload: WORKLOAD,
    matrix: { contexts: [0], concurrency: [1], prefill: [], windowS: WINDOW_MS / 1000, maxOutputTokens: 24 },
    timeouts: { gateSettleMs: 200 },
  });
}, 60_000);
afterAll(async () => {
  await run?.opened.close();
  await sim?.close();
});

function context(): RunContext {
  const { cfg, opened, prompts } = run;
  const plan = planMatrix(cfg.matrix, { kvCapacityTokens: opened.session.facts.kvCapacityTokens?.value });
  return {
    cfg,
    opened,
    info: describeRun(cfg, opened, plan),
    thresholds: { cells: {}, prefill: {} },
    updating: false,
    prompts,
    workload: openRunWorkload(cfg.workload, true),
    results: new Map(),
  };
}

const mean = (xs: readonly number[]) => xs.reduce((a, v) => a + v, 0) / xs.length;

function checkFollows(what: string, sample: number[], d: LengthDistribution, neighbour: LengthDistribution): void {
  const want = drawnMean(d);
  const got = mean(sample);
  const ks = ksTestDiscrete(sample, distributionCdf(d));
  const off = ksTestDiscrete(sample, distributionCdf(neighbour));
  console.log(`[lengths] ${what}: ${sample.length} requests, mean ${got.toFixed(2)} vs ${want.toFixed(2)} (${((got / want - 1) * 100).toFixed(2)} %), KS D ${ks.d.toFixed(4)} p ${ks.p.toFixed(3)}; against the neighbour p ${off.p.toExponential(1)}`);
  expect(sample.length, `${what}: requests`).toBeGreaterThanOrEqual(500);
  expect(Math.abs(got / want - 1), `${what}: mean ${got} vs ${want}`).toBeLessThan(0.02);
  expect(ks.p, `${what}: KS D ${ks.d}`).toBeGreaterThan(0.01);
  expect(off.p, `${what}: the neighbouring distribution is not rejected`).toBeLessThan(0.01);
}

describe('a lengths workload sends the configured distributions', () => {
  test(`${WORKLOAD}: ${RATE} requests/s for ${WINDOW_MS / 1000} s, sent input and output lengths`, { timeout: 120_000 }, async () => {
    const rc = context();
    const w = rc.workload.workload;
    if (w.kind !== 'lengths') throw new Error(`the suite resolved to a ${w.kind} workload`);
    expect(w.input).toEqual({ kind: 'normal', mean: 512, sd: 128, min: 1, max: 1024 });
    expect(w.output).toEqual({ kind: 'uniform', min: 8, max: 24 });

    const schedule = arrivalSchedule({ rate: RATE, process: { kind: 'constant' }, seed: 7, windowMs: WINDOW_MS, rampMs: 0 });
    const ctx = Math.round(distributionMean(w.input) + distributionMean(w.output));
    const load = await openCellLoad(rc, { context: ctx, concurrency: 1, key: `${ctx}@${RATE}`, repeat: 0, requestBase: 0, expectedRequests: schedule.atMs.length });
    const startedMs = monoMs();
    const raw = await runRateCell(run.opened.session, {
      context: ctx,
      rate: RATE,
      schedule,
      promptFor: (i) => load.requestFor(0, i),
      scoutPrompts: load.scouts,
      windowMs: WINDOW_MS,
      maxInFlight: 256,
      drainTimeoutMs: 10_000,
      metricsIntervalMs: 500,
    });
    const timelines = raw.requests.map((r) => r.timeline);
    expect(timelines.filter((t) => t.end?.kind === 'error').map((t) => (t.end?.kind === 'error' ? t.end.message : ''))).toEqual([]);
    expect(raw.unsent).toBe(0);

    const sent = sentLengths(timelines, raw.windowStartMs, raw.windowEndMs);
    checkFollows('input', sent.input, w.input, { kind: 'normal', mean: 560, sd: 128, min: 1, max: 1024 });
    checkFollows('output', sent.output, w.output, { kind: 'uniform', min: 10, max: 24 });

    // every completed request streamed the max_tokens it asked for (no EOS), so the recorded output
    // lengths are the requested ones of the completed requests; the requested lengths of all the
    // window's requests (cut ones too) are logged beside them: the completed ones lose the longest
    // of the last requests before the window closed
    const asked = (id: string): number => {
      const r = load.requestFor(0, Number(/-q(\d+)$/.exec(id)![1]));
      if (typeof r === 'string' || r.maxTokens === undefined) throw new Error(`${id}: a lengths request without its own max_tokens`);
      return r.maxTokens;
    };
    const done = timelines.filter((t) => t.end?.kind === 'done' && t.sendMs >= raw.windowStartMs && t.sendMs < raw.windowEndMs);
    expect(done.filter((t) => t.completionTokens !== asked(t.id)).map((t) => `${t.id}: ${t.completionTokens} of ${asked(t.id)}`)).toEqual([]);
    const requested = timelines.filter((t) => t.sendMs >= raw.windowStartMs && t.sendMs < raw.windowEndMs).map((t) => asked(t.id));
    console.log(`[lengths] output asked by all ${requested.length} window requests: mean ${mean(requested).toFixed(2)}; by the ${done.length} completed: ${mean(done.map((t) => asked(t.id))).toFixed(2)}`);

    // the input lengths are the server's own counts (usage), request by request; a request cut at
    // the window's end before its first chunk has no usage and counts as the workload sized it,
    // which is the server's count too (sized with its tokenize endpoint)
    // A request sent in the window's last instant can be cut by the window's end before its body
    // reached the server (a CI run saw one): the server holds no count for it, and it must show as
    // never answered and aborted, never as a figure; every request the server received is compared
    const truth = await truthSince(sim, startedMs);
    const inWindow = timelines.filter((t) => t.sendMs >= raw.windowStartMs && t.sendMs < raw.windowEndMs);
    const unseen = inWindow.filter((t) => !truth.has(t.id));
    expect(unseen.filter((t) => t.headersMs !== undefined || t.end?.kind !== 'aborted').map((t) => `${t.id}: ${t.end?.kind}`)).toEqual([]);
    expect(unseen.length).toBeLessThan(5);
    const mismatched = inWindow.filter((t) => truth.has(t.id) && (t.promptTokens ?? t.plannedPromptTokens) !== truth.get(t.id)?.promptTokens);
    expect(mismatched.map((t) => `${t.id}: ${t.promptTokens ?? t.plannedPromptTokens} vs ${truth.get(t.id)?.promptTokens}`)).toEqual([]);
    expect(inWindow.filter((t) => t.promptTokens === undefined).length).toBeLessThan(20);

    // and the cell's recorded figures (the JSON's `workload`) summarise the same samples
    const figures = load.figures({ timelines, samples: raw.samples, windowStartMs: raw.windowStartMs, windowEndMs: raw.windowEndMs });
    expect(figures?.inputTokens?.requests).toBe(sent.input.length);
    expect(figures?.inputTokens?.mean).toBeCloseTo(mean(sent.input), 6);
    expect(figures?.outputTokens?.requests).toBe(sent.output.length);
    expect(figures?.outputTokens?.mean).toBeCloseTo(mean(sent.output), 6);
  });
});
