/**
 * Issue 15, point 8: at a window's end the cell aborts every request still running, by id, where the
 * engine has a call for it (SGLang POST /abort_request {rid}), so no leftover load runs into the next
 * cell. Against the simulator's SGLang personality: each aborted request's rid reached the endpoint,
 * and the engine stopped every request of the cell within 1 s of the window's end.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { SimHandle } from '../../src/sim/index.js';
import { runRateCell } from '../../src/load/rate-cell.js';
import { arrivalSchedule } from '../../src/load/arrivals.js';
import { ClientThreadError } from '../../src/load/stream-threads.js';
import { monoMs } from '../../src/clock.js';
import { getJson, openAccuracyRun, runAccuracyCell, startThreadSim, truthSince, type OpenedAccuracyRun } from './harness.js';

let sim: SimHandle;
let run: OpenedAccuracyRun;
beforeAll(async () => {
  sim = await startThreadSim({ personality: 'sglang', overrides: { stepBaseMs: 5, eosProbability: 0 } });
  // 4,096 tokens at 5 ms each: every request is still running when the 1 s window ends
  run = await openAccuracyRun(sim, { target: { engine: 'sglang' }, matrix: { contexts: [0], concurrency: [4], maxOutputTokens: 4096 } });
});
afterAll(async () => {
  await run?.opened.close();
  await sim?.close();
});

test('SGLang: requests running at the window end are aborted by rid; the engine is idle within 1 s', async () => {
  const cell = await runAccuracyCell(run, sim, { context: 0, concurrency: 4, windowMs: 1000 });
  const aborted = cell.raw.timelines.filter((t) => t.end?.kind === 'aborted').map((t) => t.id);
  expect(aborted).toHaveLength(4);
  const state = await getJson<{ abortedByRid: string[]; running: number }>(`${sim.url}/_sim/state`);
  for (const id of aborted) expect(state.abortedByRid).toContain(id);
  expect(state.running).toBe(0);
  const truth = await truthSince(sim, cell.startedMs);
  for (const id of aborted) {
    const rec = truth.get(id);
    expect(rec?.end).toBe('aborted');
    expect(rec!.endMs!).toBeLessThanOrEqual(cell.raw.windowEndMs + 1000);
  }
});

test('SGLang over client threads: each thread aborts its own running requests by rid, the newest too', async () => {
  // short requests (8 tokens of 5 ms): workers send new ones all through the window, so at its end
  // some were sent moments before, news the cell's thread hears only in the threads' next batch
  const short = await openAccuracyRun(sim, { target: { engine: 'sglang' }, matrix: { contexts: [0], concurrency: [16], maxOutputTokens: 8 } });
  try {
    const cell = await runAccuracyCell(short, sim, { context: 0, concurrency: 16, windowMs: 1000, threads: 2 });
    expect(cell.raw.clientThreads?.length).toBe(2);
    const aborted = cell.raw.timelines.filter((t) => t.end?.kind === 'aborted').map((t) => t.id);
    expect(aborted.length).toBeGreaterThan(0);
    const state = await getJson<{ abortedByRid: string[]; running: number }>(`${sim.url}/_sim/state`);
    const missed = aborted.filter((id) => !state.abortedByRid.includes(id));
    expect(missed, `cut off by the client only, never aborted by rid: ${missed.join(', ')}`).toEqual([]);
    expect(state.running).toBe(0);
  } finally {
    await short.opened.close();
  }
});

test('SGLang rate cell over client threads: every request running at the window end is aborted by rid, the last sent too', async () => {
  // 40/s for 1 s of 4,096-token requests: all still running at the end, the last sent 25 ms before it
  const schedule = arrivalSchedule({ rate: 40, process: { kind: 'constant' }, seed: 1, windowMs: 1000 });
  const r = await runRateCell(run.opened.session, {
    context: 0, rate: 40, schedule, promptFor: (i) => `Hi ${i}`, scoutPrompts: [], windowMs: 1000, maxInFlight: 64, drainTimeoutMs: 10_000, metricsIntervalMs: 500, threads: 2,
  });
  expect(r.clientThreads).toBe(2);
  const aborted = r.requests.filter((s) => s.timeline.end?.kind === 'aborted').map((s) => s.timeline.id);
  expect(aborted.length).toBeGreaterThan(30);
  const state = await getJson<{ abortedByRid: string[]; running: number }>(`${sim.url}/_sim/state`);
  const missed = aborted.filter((id) => !state.abortedByRid.includes(id));
  expect(missed, `cut off by the client only, never aborted by rid: ${missed.join(', ')}`).toEqual([]);
  expect(state.running).toBe(0);
});

test('SGLang over client threads, a thread killed mid-window: the cell fails and the cell\'s thread aborts by rid what it knew running', async () => {
  const startedMs = monoMs();
  const cell = runAccuracyCell(run, sim, {
    context: 0, concurrency: 4, windowMs: 3_000, threads: 2,
    onStreamsStarted: (control) => void setTimeout(() => void control.kill(1), 500),
  });
  await expect(cell).rejects.toThrow(ClientThreadError);
  // every request of the cell (4,096 tokens each: all still running at the kill) was aborted by rid
  const tag = `${run.opened.session.runId}-c0x4-`;
  const ids = [...(await truthSince(sim, startedMs)).keys()].filter((id) => id.startsWith(tag) && !id.includes('scout'));
  expect(ids.length).toBeGreaterThanOrEqual(4);
  const state = await getJson<{ abortedByRid: string[]; running: number }>(`${sim.url}/_sim/state`);
  expect(ids.filter((id) => !state.abortedByRid.includes(id))).toEqual([]);
});
