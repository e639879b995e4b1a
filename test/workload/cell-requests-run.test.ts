/**
 * Workload requests in real runners against the embedded simulator: a short closed-loop cell
 * (runCell, C = 4) and a short open-loop rate cell (runRateCell) send them with no failure, and
 * the sim's usage says each request carried its drawn lengths / the shared-prefix total. Also the
 * estimated mode (no tokenize endpoint): sizes within the calibration tolerance, counts the sim's.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { getAdapter } from '../../src/engines/detect.js';
import { asNumber, asRecord, closeControlAgent, postJson } from '../../src/engines/http.js';
import type { ServerFacts } from '../../src/shapes/engine.js';
import { PromptCalibrator, toleranceTokens } from '../../src/prompts/calibrate.js';
import { runCell } from '../../src/load/cell.js';
import { runRateCell } from '../../src/load/rate-cell.js';
import { arrivalSchedule } from '../../src/load/arrivals.js';
import type { LoadSession } from '../../src/load/session.js';
import { ConnectionPolicy } from '../../src/client/connections.js';
import { workloadRequests } from '../../src/workload/cell-requests.js';

let sim: SimHandle;
let session: LoadSession;
let facts: ServerFacts;

beforeAll(async () => {
  // no simulated EOS: every request streams its max_tokens
  sim = await startSim({ profile: 'tiny', personality: 'vllm', overrides: { eosProbability: 0, maxRunningRequests: 64 } });
  const adapter = getAdapter('vllm');
  facts = await adapter.probe({ baseUrl: sim.url });
  session = {
    target: { baseUrl: sim.url },
    adapter,
    facts,
    model: facts.model.value,
    endpoint: 'chat',
    maxOutputTokens: 16,
    timeouts: { headersMs: 5000, stallMs: 5000, unreachableRetryMs: 0 },
    runId: 'lsmwlrun',
    connections: new ConnectionPolicy(),
    hasMetrics: true,
  };
});
afterAll(async () => {
  await sim.close();
  await closeControlAgent();
});

const calibrator = () => PromptCalibrator.forAdapter({ adapter: session.adapter, target: session.target, facts, endpoint: 'chat' });
/** input lengths 40 … 839; the output is a function of the input, so a timeline's usage says whether it got its own pair */
const input = (i: number) => 40 + ((i * 7919) % 800);
const outputFor = (promptTokens: number) => 2 + (promptTokens % 20);
const draws = { input, output: (i: number) => outputFor(input(i)) };
const lengths = {
  kind: 'lengths' as const,
  input: { kind: 'uniform' as const, min: 40, max: 839 },
  output: { kind: 'uniform' as const, min: 2, max: 21 },
  seed: 1,
};

describe('runners send workload requests', () => {
  test('a closed-loop lengths cell (C = 4, 1.5 s): no failures, every request its drawn pair', async () => {
    const requests = workloadRequests({ workload: lengths, runId: session.runId, cellKey: '440/4', maxOutputTokens: 16, maxModelLen: facts.maxModelLen?.value, sizer: calibrator(), draws });
    await requests.prepare(300);
    const run = await runCell(session, {
      context: 440,
      concurrency: 4,
      promptFor: (w, i) => requests.requestFor(w, i),
      scoutPrompts: requests.scoutRequests(),
      windowMs: 1500,
      gateTimeoutMs: 5000,
      gateSettleMs: 100,
      drainTimeoutMs: 5000,
      metricsIntervalMs: 500,
    });
    const done = run.timelines.filter((t) => t.end?.kind === 'done');
    const failed = run.timelines.filter((t) => t.end?.kind === 'error');
    expect(failed.map((t) => (t.end?.kind === 'error' ? t.end.message : ''))).toEqual([]);
    expect(done.length).toBeGreaterThan(8);
    const drawn = new Set(Array.from({ length: 300 }, (_, i) => input(i)));
    for (const t of done) {
      expect(drawn.has(t.promptTokens!), `prompt tokens ${t.promptTokens}`).toBe(true);
      expect(t.completionTokens).toBe(outputFor(t.promptTokens!));
    }
  }, 60_000);

  test('an open-loop sharedPrefix rate cell: scouts per group, no failures, every prompt P + S', async () => {
    const w = { kind: 'sharedPrefix' as const, groups: 3, prefixTokens: 512, suffixTokens: 64, seed: 5 };
    const requests = workloadRequests({ workload: w, runId: session.runId, cellKey: '576@20', maxOutputTokens: 16, maxModelLen: facts.maxModelLen?.value, sizer: calibrator() });
    const schedule = arrivalSchedule({ rate: 20, process: { kind: 'poisson' }, seed: 3, windowMs: 1000, rampMs: 0 });
    await requests.prepare(schedule.atMs.length);
    const run = await runRateCell(session, {
      context: 576,
      rate: 20,
      schedule,
      promptFor: (i) => requests.requestFor(0, i),
      scoutPrompts: requests.scoutRequests(),
      windowMs: 1000,
      maxInFlight: 64,
      drainTimeoutMs: 5000,
      metricsIntervalMs: 500,
    });
    expect(run.scouts.length).toBe(3);
    expect(run.requests.length).toBe(schedule.atMs.length);
    // those in flight when the window closed are aborted; none failed
    expect(run.requests.filter((r) => r.timeline.end?.kind === 'error')).toEqual([]);
    const done = run.requests.filter((r) => r.timeline.end?.kind === 'done');
    expect(done.length).toBeGreaterThan(run.requests.length / 2);
    for (const { timeline: t } of done) expect(t.promptTokens).toBe(576);
  }, 60_000);
});

describe('estimated sizing (a server with no tokenize endpoint)', () => {
  test('lengths and sharedPrefix land within the tolerance; promptTokens is what the sim counts', async () => {
    const adapter = getAdapter('openai');
    const generic = await adapter.probe({ baseUrl: sim.url });
    let measured = 0;
    const usage = async (text: string): Promise<number> => {
      measured++;
      const res = await postJson({ baseUrl: sim.url }, '/v1/chat/completions', { model: generic.model.value, messages: [{ role: 'user', content: text }], max_tokens: 1 }, { timeoutMs: 30_000 });
      return asNumber(asRecord(asRecord(res.json)?.usage)?.prompt_tokens)!;
    };
    const sizer = PromptCalibrator.forAdapter({ adapter, target: { baseUrl: sim.url }, facts: generic, endpoint: 'chat', measurePromptTokens: usage });
    expect(sizer.mode).toBe('estimated');
    expect(await sizer.count('Hi')).toBeUndefined();
    const count = (prompt: string) => usage(prompt);

    const few = { input: (i: number) => 200 + 300 * (i % 5), output: () => 8 };
    const l = workloadRequests({ workload: lengths, runId: 'lsmest', cellKey: '800/2', maxOutputTokens: 16, sizer, draws: few });
    await l.prepare(5);
    for (let i = 0; i < 5; i++) {
      const r = l.requestFor(0, i);
      expect(Math.abs(r.promptTokens! - few.input(i))).toBeLessThanOrEqual(toleranceTokens(few.input(i)));
      expect(await count(r.prompt)).toBe(r.promptTokens);
    }
    const sp = workloadRequests({
      workload: { kind: 'sharedPrefix', groups: 2, prefixTokens: 2048, suffixTokens: 256, seed: 2 },
      runId: 'lsmest',
      cellKey: '2304/2',
      maxOutputTokens: 16,
      sizer,
    });
    await sp.prepare(10);
    for (let i = 0; i < 4; i++) {
      const r = sp.requestFor(0, i);
      expect(Math.abs(r.promptTokens! - 2304)).toBeLessThanOrEqual(toleranceTokens(2304));
      expect(await count(r.prompt)).toBe(r.promptTokens);
    }
    console.log(`estimated sizing: ${l.sizingCalls} requests for 5 lengths, ${sp.sizingCalls} for 2 groups`);
    expect(sp.sizingCalls).toBeLessThanOrEqual(2 * 2 * 5);
  }, 60_000);
});
