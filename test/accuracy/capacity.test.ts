/**
 * Done-when 4 (capacity part): Over capacity and Requests queued appear exactly where the sim's
 * settings imply. The sim (SGLang personality, so the probe reads both max running requests and
 * the KV capacity from /get_server_info) admits at most 4 requests at once and holds 8,192 KV
 * tokens; max output is 512 tokens (5.1 s at 10 ms steps, longer than any cell here, so no request
 * ends inside a cell).
 *
 *   context \ C |  4                                 |  8
 *   0           |  runs, valid                       |  runs (context 0, but C > 4: capacity rule, 8 × 512 ≤ 8,192), requests queued
 *   1024        |  runs, valid (4 × 1,536 ≤ 8,192)   |  over capacity (8 × 1,536 = 12,288 > 8,192), not run
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { planMatrix } from '../../src/matrix/plan.js';
import type { SimHandle } from '../../src/sim/index.js';
import { accuracyStatuses, openAccuracyRun, runAccuracyCell, simState, startThreadSim, type OpenedAccuracyRun } from './harness.js';

const MAX_RUNNING = 4;
const KV_TOKENS = 8192;
const MAX_OUTPUT = 512;
const STEP_MS = 10;

let sim: SimHandle;
let run: OpenedAccuracyRun;

beforeAll(async () => {
  sim = await startThreadSim({
    personality: 'sglang',
    overrides: { maxRunningRequests: MAX_RUNNING, kvCapacityTokens: KV_TOKENS, stepBaseMs: STEP_MS, eosProbability: 0 },
  });
  run = await openAccuracyRun(sim, {
    target: { engine: 'sglang' },
    matrix: { contexts: [0, 1024], concurrency: [4, 8], maxOutputTokens: MAX_OUTPUT },
  });
}, 30_000);

afterAll(async () => {
  await run?.opened.close();
  await sim?.close();
});

describe('Over capacity and Requests queued where the sim settings imply', () => {
  test('the probe reads the sim settings and the plan marks only 1024/8 Over capacity', () => {
    const { facts } = run.opened.session;
    expect(facts.maxRunningRequests?.value).toBe(MAX_RUNNING);
    expect(facts.kvCapacityTokens?.value).toBe(KV_TOKENS);
    const plan = planMatrix(run.cfg.matrix, { kvCapacityTokens: facts.kvCapacityTokens?.value, maxRunningRequests: facts.maxRunningRequests?.value });
    const over = Object.fromEntries(plan.cells.map((c) => [c.key, c.overCapacity]));
    expect(Object.keys(over).sort()).toEqual(['0/4', '0/8', '1K/4', '1K/8']);
    expect(over['0/4']).toBeUndefined();
    expect(over['0/8']).toBeUndefined();
    expect(over['1K/4']).toBeUndefined();
    expect(over['1K/8']).toEqual({ requiredTokens: 8 * (1024 + MAX_OUTPUT), kvCapacityTokens: KV_TOKENS, requestTokens: 1024 + MAX_OUTPUT });
  });

  for (const { context, concurrency } of [
    { context: 0, concurrency: 4 },
    { context: 1024, concurrency: 4 },
  ]) {
  test(`${context}/${concurrency} (C ≤ max running, fits the KV cache) is valid and nothing waits on the sim`, async () => {
    const cell = await runAccuracyCell(run, sim, { context, concurrency, windowMs: 1200, gateTimeoutMs: 5000 });
    const verdict = accuracyStatuses(cell, concurrency);
    expect(verdict.statuses).toEqual(['valid']);
    expect(cell.raw.samples.length).toBeGreaterThanOrEqual(3);
    expect(cell.figures.serverActiveRequests).toBe(concurrency);
    expect(cell.figures.maxWaitingRequests).toBe(0);
    // truth: every worker request of the cell was admitted within a few steps of its arrival
    const workers = [...cell.truth.values()].filter((r) => /-w\d+-r\d+$/.test(r.id));
    expect(workers).toHaveLength(concurrency);
    for (const r of workers) {
      expect(r.admittedMs).toBeDefined();
      expect(r.admittedMs! - r.receivedMs).toBeLessThan(5 * STEP_MS + 50);
    }
  }, 30_000);
  }

  test('0/8 (C > max running) runs and is Requests queued; the sim held exactly C − max running requests back', async () => {
    const concurrency = 8;
    // 4 workers never get a token, so METHOD's gate could only time out; the server is at its
    // running limit (4 waiting, the 4 it runs all decoding), and the gate opens there, long
    // before its timeout
    const cell = await runAccuracyCell(run, sim, { context: 0, concurrency, windowMs: 1200, gateTimeoutMs: 20_000 });
    const state = await simState(sim);
    const verdict = accuracyStatuses(cell, concurrency);
    expect(verdict.statuses).toContain('requests-queued');
    expect(verdict.statuses).not.toContain('warmup-timed-out');
    expect(cell.raw.gate.atLimit).toEqual({ running: MAX_RUNNING, waiting: concurrency - MAX_RUNNING });
    expect(cell.raw.gate.timedOut).toBe(false);
    expect(verdict.statuses).not.toContain('errors');
    expect(verdict.evidence.queued).toMatchObject({ concurrency, maxWaiting: concurrency - MAX_RUNNING, meanRunning: MAX_RUNNING });
    // truth: exactly 4 worker requests were admitted before the window closed; the other 4 waited
    // all along (while the sim processes the client's disconnects at the window's end, a queued
    // request can be admitted into a slot freed a moment earlier: those admissions come after the
    // window's end and carry no token the client read)
    const we = cell.raw.windowEndMs;
    const workers = [...cell.truth.values()].filter((r) => /-w\d+-r\d+$/.test(r.id));
    expect(workers).toHaveLength(concurrency);
    const admittedInCell = workers.filter((r) => r.admittedMs !== undefined && r.admittedMs <= we);
    expect(admittedInCell).toHaveLength(MAX_RUNNING);
    for (const r of workers) if (!admittedInCell.includes(r)) expect(r.tokens.filter(([at]) => at <= we)).toEqual([]);
    // the client saw the same: 4 requests with a first token (the TTFT samples), 4 without
    expect(cell.figures.ttftMs?.samples).toBe(MAX_RUNNING);
    expect(cell.raw.timelines.filter((t) => t.firstTokenMs === undefined)).toHaveLength(concurrency - MAX_RUNNING);
    // and the abort at the window's end removed the queued ones too
    expect(state.waiting + state.arriving).toBe(0);
  }, 30_000);
});
