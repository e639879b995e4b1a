/**
 * Issue 15, point 8: at a window's end the cell aborts every request still running, by id, where the
 * engine has a call for it (SGLang POST /abort_request {rid}), so no leftover load runs into the next
 * cell. Against the simulator's SGLang personality: each aborted request's rid reached the endpoint,
 * and the engine stopped every request of the cell within 1 s of the window's end.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { SimHandle } from '../../src/sim/index.js';
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
