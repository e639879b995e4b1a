/**
 * Open-loop rate cells end to end, as a user runs them: `LLM_BENCH_RATES=5,16,40 npx vitest bench
 * --run` against the embedded simulator (tiny profile: 8 running requests, 10 ms steps, 64 output
 * tokens: a service limit of 12.5 requests/s, src/sim/service-limit.ts). Constant arrivals, so a
 * 6 s window decides: a request takes about 0.65 s, and the Saturated test needs 6 of them after
 * the fill-up, so requests up to 0.9 s still leave it room (a loaded 2-core machine once slowed
 * 1K@16's first requests to 0.8 s, and its 5 s window then could not judge saturation). Per context: 5/s Valid, 16/s Saturated completing at the limit, 40/s not run
 * after the knee and skipped with the reason; the JSON validates (schema v2) and the page has the
 * Open-loop section with the knee. The schedule goes out over 2 client threads
 * (LLM_BENCH_CLIENT_THREADS=2, issue 24: request i from thread i mod 2), which must change none of
 * that; rate-sweep.test.ts and the accuracy tests send from the cell's own thread.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { threadsOverCoresNote } from '../../src/load/thread-count.js';
import { validateResult } from '../../src/results/validate.js';
import { runVitest } from '../compare/run-vitest.js';
import { clientLimitedByTiming, statusBesideClientTiming } from '../helpers/client-limited.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';


describe('rate cells end to end (embedded simulator, tiny profile)', () => {
  test('5/s Valid, 16/s Saturated at the limit, 40/s not run after the knee; JSON, page and progress agree', { timeout: 300_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-rates-'));
    const out = join(dir, 'reports');
    const r = runVitest(
      ['bench', '--run'],
      {
        // the progress lines are read below
        LLM_BENCH_QUIET: '0',
        LLM_BENCH_SIM_PROFILE: 'tiny',
        LLM_BENCH_CONTEXTS: '0,1K',
        LLM_BENCH_CONCURRENCY: '1',
        LLM_BENCH_PREFILL: 'none',
        LLM_BENCH_DURATION_S: '6',
        LLM_BENCH_MAX_TOKENS: '64',
        LLM_BENCH_RATES: '40,5,16',
        LLM_BENCH_ARRIVAL: 'constant',
        LLM_BENCH_RAMP_S: '1',
        LLM_BENCH_OUT: out,
        LLM_BENCH_THRESHOLDS: join(dir, 'thresholds.json'),
        LLM_BENCH_CLIENT_THREADS: '2',
      },
      240_000,
    );
    const log = r.out;
    expect(r.code, log).toBe(0);
    // two threads asked where the cores leave fewer (a 2-core machine keeps one for the cell, one for the simulator): said at the start
    const overCores = threadsOverCoresNote(2, availableParallelism(), 'embedded');
    if (overCores !== undefined) expect(log).toContain(overCores);
    else expect(log).not.toContain('client threads asked');
    const json = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    expect(validateResult(json).ok).toBe(true);
    expect(json.schemaVersion).toBe(2);
    expect(json.info.run.rates).toEqual({ rates: [5, 16, 40], arrival: 'constant', seed: 1, rampS: 1, maxInFlight: 512 });
    const cells = json.rateCells ?? [];
    // a cell the loaded machine made Client-limited (the client's timing) is read by its other
    // statuses, and says so in the log (test/helpers/client-limited.ts)
    const statusOf = new Map(cells.map((c) => [c, statusBesideClientTiming(c, 'rate-cells')] as const));
    expect(cells.map((c) => `${c.contextLabel}@${c.rate}:${statusOf.get(c)}`)).toEqual(['0@5:valid', '0@16:saturated', '0@40:not-run', '1K@5:valid', '1K@16:saturated', '1K@40:not-run']);
    for (const c of cells.filter((x) => statusOf.get(x) === 'saturated')) {
      // the server completes at its limit (12.5/s), not at the offered 16/s
      expect(c.figures!.completedRate).toBeGreaterThan(11);
      expect(c.figures!.completedRate).toBeLessThan(13.5);
      expect(c.evidence.saturation!.p).toBeLessThan(0.01);
    }
    for (const c of cells.filter((x) => x.status !== 'not-run')) {
      // after the 1 s ramp, L·L/R of the fill-up is left out (about 0.42 s where a request takes
      // L = 0.65 s; less than the ramp while L is), and the blocks are at least L wide; the rule
      // itself is tested on recorded requests in test/judge/saturation.test.ts, so here the bound
      // is the ramp, not the model's L, which a loaded machine moves
      expect(c.evidence.saturation!.fromMs).toBeGreaterThan(0);
      expect(c.evidence.saturation!.fromMs).toBeLessThan(1000);
      expect(c.evidence.saturation!.notJudged).toBeUndefined();
      expect(c.evidence.saturation!.blockMeans.length).toBeGreaterThanOrEqual(6);
    }
    // every measured cell was sent from the 2 threads
    for (const c of cells.filter((x) => x.status !== 'not-run')) {
      const at = `${c.contextLabel}@${c.rate}`;
      expect(c.clientThreads, at).toBe(2);
      // the client's own figures, as a decode cell's: its busiest thread's CPU, the worst thread's read lag
      expect(['thread', 'process'], at).toContain(c.clientCpu?.source);
      expect(c.clientCpu!.cores, at).toBeGreaterThan(0);
      expect(c.clientCpu!.cores, at).toBeLessThan(1.5);
      expect(c.clientArrivalLagMs!.reads, at).toBeGreaterThan(0);
      expect(c.clientArrivalLagMs!.p99, at).toBeLessThanOrEqual(c.clientArrivalLagMs!.max);
    }
    // a not-run cell has none
    for (const c of cells.filter((x) => x.status === 'not-run')) expect(c.clientCpu).toBeUndefined();
    for (const c of cells.filter((x) => statusOf.get(x) === 'valid')) {
      expect(c.figures!.completedRate).toBeGreaterThan(4);
      // the client's own send delay, unless the cell says the machine held the client up
      if (!clientLimitedByTiming(c)) expect(c.figures!.dispatchDelayMs!.p99).toBeLessThan(10);
    }
    expect(cells.find((c) => c.rate === 40)!.notRunReason).toBe("16/s was already Saturated at this context; a context's rates stop at the first Saturated one (above it the server only queues more)");
    // each cell's schedule has its own seed, recorded
    expect(new Set(cells.map((c) => c.seed)).size).toBe(6);
    const page = readFileSync(join(out, 'speed-matrix.md'), 'utf8');
    expect(page).toContain('### Open-loop load');
    expect(page).toMatch(/Knee \(the first Saturated rate of each context\): 0 at 16 req\/s, 1K at 16 req\/s/);
    expect(log).toMatch(/0@16\/s: Saturated/);
    // the skipped cells say why as they finish
    expect(log).toMatch(/0@40\/s: Not run: 16\/s was already Saturated/);
  });
});
