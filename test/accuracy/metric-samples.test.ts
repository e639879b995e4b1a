/**
 * Issue 60, row 9: a metric sample is evidence only when it could be taken. Against the simulator
 * with a metrics fault, through the product's own path for a measured cell (matrix/cell-outcome.ts
 * repeatFigures, then the status rules): scrapes whose running gauge reads 0 while the four streams
 * decode are set aside, so the cell is not read Requests queued and Average active is the server's
 * true 4; scrapes answered 300 ms late are set aside, with the cause on the cell.
 */
import { afterAll, describe, expect, test } from 'vitest';
import type { SimHandle } from '../../src/sim/index.js';
import { repeatFigures } from '../../src/matrix/cell-outcome.js';
import { cellStatuses } from '../../src/judge/status.js';
import { queueLoad } from '../../src/metrics/server-load.js';
import { openAccuracyRun, runAccuracyCell, startThreadSim, type OpenedAccuracyRun } from './harness.js';

const opened: Array<{ sim: SimHandle; run: OpenedAccuracyRun }> = [];
afterAll(async () => {
  for (const o of opened) {
    await o.run.opened.close();
    await o.sim.close();
  }
});

async function measured(faults: Record<string, number>) {
  const sim = await startThreadSim({ profile: 'tiny', overrides: { eosProbability: 0, faults } });
  const run = await openAccuracyRun(sim, { target: { engine: 'vllm' }, matrix: { contexts: [0], concurrency: [4], maxOutputTokens: 64 } });
  opened.push({ sim, run });
  const cell = await runAccuracyCell(run, sim, { context: 0, concurrency: 4, windowMs: 3_000, metricsIntervalMs: 200 });
  const repeat = repeatFigures({ clientLimitedLoopDelayMs: 50, engine: 'vllm' }, { concurrency: 4 }, cell.raw, () => {});
  return { raw: cell.raw, repeat, verdict: cellStatuses(repeat.status) };
}

describe('metric samples that could not be taken', () => {
  test('a running gauge that reads 0 in half the scrapes while four streams decode: set aside, Valid, Average active 4', { timeout: 120_000 }, async () => {
    const { raw, repeat, verdict } = await measured({ metricsZeroRate: 0.5 });
    const zeros = raw.samples.filter((s) => s.running === 0).length;
    console.log(`[metric samples] zero-reading fault: ${zeros} of ${raw.samples.length} samples read 0; raw mean running ${queueLoad(raw.samples).meanRunning}; set aside ${JSON.stringify(verdict.evidence.metricSamplesSetAside)}; ${verdict.statuses.join(', ')}`);
    expect(zeros).toBeGreaterThan(0);
    // read as they came, the zeros would make it a queue
    expect(queueLoad(raw.samples).meanRunning!).toBeLessThan(0.95 * 4);
    expect(verdict.evidence.metricSamplesSetAside?.zeroWhileStreaming).toBe(zeros);
    expect(verdict.statuses).not.toContain('requests-queued');
    expect(repeat.figures.serverActiveRequests).toBeCloseTo(4, 1);
  });

  test('scrapes answered 300 ms late are set aside, and the cell says so', { timeout: 120_000 }, async () => {
    const { raw, verdict } = await measured({ metricsDelayRate: 0.2, metricsDelayMs: 300 });
    const late = raw.samples.filter((s) => (s.scrapeMs ?? 0) >= 290).length;
    console.log(`[metric samples] late scrapes: ${late} of ${raw.samples.length} took ≥ 290 ms; set aside ${JSON.stringify(verdict.evidence.metricSamplesSetAside)}`);
    expect(late).toBeGreaterThan(0);
    expect(verdict.evidence.metricSamplesSetAside?.late).toBe(late);
    expect(verdict.statuses).toEqual(['valid']);
  });
});
