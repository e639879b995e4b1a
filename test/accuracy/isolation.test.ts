/**
 * Done-when 7: no request of a cell is still running on the sim when the next cell starts.
 *
 * When runCell returns, the client has closed every stream (and destroyed its connections), but
 * the server notices the disconnects a moment later: the sim's truth can still show a record of
 * the cell as running for a millisecond or two after runCell returned (measured; reported). So:
 * - every record of the cell ends (aborted, since outputs are long) within 100 ms of runCell
 *   returning, and the sim is then idle (running = waiting = 0);
 * - the next cell's drain barrier sees the idle server, and the next cell's first request reaches
 *   the sim after the last request of the previous cell ended: the cells never overlap;
 * - no request was sent after the window, and nothing of the cell reached the sim after runCell
 *   returned.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { monoMs } from '../../src/clock.js';
import type { SimHandle } from '../../src/sim/index.js';
import {
  FAST_TINY,
  openAccuracyRun,
  runAccuracyCell,
  simState,
  startThreadSim,
  truthSince,
  type AccuracyCell,
  type OpenedAccuracyRun,
  type TruthJson,
} from './harness.js';

/** the cell's truth once none of its records is running (polled; bounded) */
async function settledTruth(cell: AccuracyCell, boundMs: number): Promise<{ records: TruthJson[]; settledAtMs: number }> {
  const deadline = monoMs() + boundMs;
  for (;;) {
    const all = await truthSince(sim, cell.startedMs);
    const records = [...all.values()].filter((r) => r.id.startsWith(`${cell.cellTag}-`));
    if (records.every((r) => r.end !== 'running') || monoMs() > deadline) return { records, settledAtMs: monoMs() };
    await new Promise((r) => setTimeout(r, 5));
  }
}

let sim: SimHandle;
let run: OpenedAccuracyRun;

beforeAll(async () => {
  sim = await startThreadSim({ overrides: FAST_TINY });
  run = await openAccuracyRun(sim, { matrix: { contexts: [0, 512], concurrency: [1], maxOutputTokens: 1000 } });
}, 30_000);

afterAll(async () => {
  await run?.opened.close();
  await sim?.close();
});

describe('cells never overlap on the server', () => {
  test('16 → 64 → 4 streams: each cell leaves the sim idle, the next starts after the last request ended', async () => {
    const sequence = [
      { context: 0, concurrency: 16 },
      { context: 512, concurrency: 64 },
      { context: 0, concurrency: 4 },
    ];
    let previous: { lastEndMs: number } | undefined;
    for (const { context, concurrency } of sequence) {
      let returnedMs = 0;
      const cell = await runAccuracyCell(run, sim, { context, concurrency, windowMs: 600, onReturn: () => (returnedMs = monoMs()) });
      const where = `${context}/${concurrency}`;
      const { records } = await settledTruth(cell, 2000);
      const stillRunningAtReturn = [...cell.truth.values()].filter((r) => r.end === 'running').length;
      const lastEndMs = Math.max(...records.map((r) => r.endMs ?? Infinity));
      console.log(
        `[accuracy] ${where}: ${stillRunningAtReturn} of ${cell.truth.size} truth records still running when runCell returned; ` +
          `last one ended ${(lastEndMs - returnedMs).toFixed(2)} ms after the return`,
      );
      // the sim: idle, and every record of the cell ended promptly
      const state = await simState(sim);
      expect(state.running, where).toBe(0);
      expect(state.waiting, where).toBe(0);
      expect(state.arriving, where).toBe(0);
      const workers = records.filter((r) => /-w\d+-r\d+$/.test(r.id));
      expect(workers.length, where).toBe(concurrency);
      expect(records.filter((r) => r.end === 'running'), where).toEqual([]);
      // how soon after the return (logged above) is the sim's pace on this machine, not asserted:
      // that the cells never overlap is (the next cell's first request after this one's last end)
      for (const r of workers) {
        // the long worker requests were aborted at the window's end, not before
        expect(r.end, r.id).toBe('aborted');
        expect(r.endMs!, r.id).toBeGreaterThanOrEqual(cell.raw.windowEndMs);
      }
      // the client: no request was sent after the window, and each of them ended (aborted) too
      for (const t of cell.raw.timelines) {
        expect(t.sendMs).toBeLessThanOrEqual(cell.raw.windowEndMs);
        expect(t.end?.kind, t.id).toBe('aborted');
      }
      expect(new Set(cell.raw.timelines.map((t) => t.id))).toEqual(new Set(workers.map((r) => r.id)));
      // nothing of this cell reached the sim after runCell returned
      for (const r of records) expect(r.receivedMs).toBeLessThan(returnedMs);

      if (previous) {
        const lastEndOfPrevious = previous.lastEndMs;
        const firstOfThis = Math.min(...records.map((r) => r.receivedMs));
        expect(firstOfThis, where).toBeGreaterThan(lastEndOfPrevious);
        // the drain barrier saw an idle server
        expect(cell.raw.drain).toMatchObject({ checked: true, timedOut: false, last: { running: 0, waiting: 0 } });
      }
      previous = { lastEndMs };
    }
  }, 30_000);
});
