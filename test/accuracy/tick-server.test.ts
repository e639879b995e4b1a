/**
 * The tick harness of issue 24 as several processes behind one port (perf/tick-server.ts
 * `processes`), as the 16-core scaling run used it (docs/accuracy.md, Scaling on 16 cores): the
 * streams of a cell spread over the processes, and the harness still finds every request's truth
 * (each process answers for its own at its own control URL) and merges their state. A truth lost
 * here would read as a client that dropped tokens; a request counted twice, as one that gained them.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { compareWithTruth, edgeTransitTokens, getJson, openAccuracyRun, resetSim, runAccuracyCell, simState, startProcessSim, type SimAt, type TruthJson } from './harness.js';

const TICK = fileURLToPath(new URL('../../perf/tick-server.ts', import.meta.url));
const PROCESSES = 2;
const STREAMS = 8;

let sim: SimAt;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ sim, stop } = await startProcessSim({ stepMs: 20, ttftMs: 100, processes: PROCESSES }, TICK));
}, 60_000);
afterAll(async () => {
  await stop?.();
});

test('a cell against two tick processes: every request has one truth, from the process that served it', async () => {
  expect(sim.controlUrls).toHaveLength(PROCESSES);
  const run = await openAccuracyRun(sim, { matrix: { contexts: [0], concurrency: [1], maxOutputTokens: 4000 } });
  try {
    await resetSim(sim);
    // the reset reached every process: none holds a truth record any more
    for (const u of sim.controlUrls!) expect(await getJson<TruthJson[]>(`${u}/_sim/truth`)).toEqual([]);
    const cell = await runAccuracyCell(run, sim, { context: 0, concurrency: STREAMS, windowMs: 1000, gateTimeoutMs: 20_000 });
    const cmp = compareWithTruth(cell);
    expect(cmp.missingTruth).toEqual([]);
    expect(cmp.requests).toBe(cell.raw.timelines.length);
    expect(cmp.requests).toBeGreaterThanOrEqual(STREAMS);
    // the tokens the client read inside the window are the ones the servers wrote there, but for
    // those written before an edge and read after it (a stalled client on a loaded machine: more)
    const transit = edgeTransitTokens(cell);
    expect(Math.abs(cmp.measured.outputTokens - cmp.truth.outputTokens)).toBeLessThanOrEqual(Math.max(1, 0.01 * cmp.truth.outputTokens) + transit.tokens);
    expect(cmp.truth.outputTokens).toBeGreaterThan(0);

    // the connections went to both processes, and no request is in two
    const since = cell.startedMs;
    const each = await Promise.all(sim.controlUrls!.map((u) => getJson<TruthJson[]>(`${u}/_sim/truth?since=${since}`)));
    const ids = each.map((list) => list.map((r) => r.id).filter((id) => id.startsWith(`${cell.cellTag}-`)));
    for (const mine of ids) expect(mine.length).toBeGreaterThan(0);
    const all = ids.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(cell.truth.size);

    // the state counts both processes' ticks (each ticks every 20 ms, since the reset): their sum,
    // not the larger one's, which would read about half
    const perProcess = await Promise.all(sim.controlUrls!.map((u) => getJson<{ stepLatenessMs: { count: number } }>(`${u}/_sim/state`)));
    const state = await simState(sim);
    const most = Math.max(...perProcess.map((e) => e.stepLatenessMs.count));
    expect(state.stepLatenessMs.count).toBeGreaterThanOrEqual(1.5 * most);
  } finally {
    await run.opened.close();
  }
}, 60_000);
