/**
 * The baseline gate on open-loop rate cells, end to end against the embedded simulator: a cell the
 * baseline measured and the new run did not measure fails in the run, with the same line
 * `compare` gives afterwards, and another schedule is said once and not compared.
 *
 * The tiny profile with fixed 10 ms steps, 8 running requests, 32 output tokens (its limit about 25
 * requests/s); rates 6 and 12, Poisson, 3 s windows. The second run's server has a KV cache of 100
 * tokens: by Little's law 12/s keeps about 4 requests of 32 tokens in flight (128 tokens), so it is
 * Over capacity and not run; 6/s (64 tokens) runs. The third run draws another rate seed on a server
 * with 60 ms steps: its rate cells would fail on every latency, and are not compared.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runCompareCli } from '../../src/compare/cli.js';
import { validateResult } from '../../src/results/validate.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { runVitest } from './run-vitest.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-rate-baseline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const matrix = {
  LLM_BENCH_SIM_PROFILE: 'tiny',
  LLM_BENCH_CONTEXTS: '0',
  LLM_BENCH_CONCURRENCY: '1',
  LLM_BENCH_PREFILL: 'none',
  LLM_BENCH_DURATION_S: '3',
  LLM_BENCH_MAX_TOKENS: '32',
  LLM_BENCH_RATES: '6,12',
  LLM_BENCH_THRESHOLDS: join(dir, 'none.json'),
};
const STEP = { eosProbability: 0, maxRunningRequests: 8, prefillPerTokenMs: 0 };

function read(out: string): SpeedMatrixResult {
  const json = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
  const valid = validateResult(json);
  expect(valid.ok, JSON.stringify(valid)).toBe(true);
  return json as SpeedMatrixResult;
}

async function compare(base: string, next: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCompareCli([base, next, '--out', join(dir, 'diff.md')], { out: (t) => out.push(t), err: (t) => err.push(t), env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('the baseline gate on rate cells against the simulator', () => {
  test('a rate cell the baseline measured and this run did not fails in the run and in compare, with one line naming its status; another seed is said once', { timeout: 300_000 }, async () => {
    const baseOut = join(dir, 'base');
    const base = runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_OUT: baseOut, LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ ...STEP, stepBaseMs: 10 }) }, 120_000);
    expect(base.code, base.out).toBe(0);
    const baseJson = read(baseOut);
    expect(baseJson.rateCells!.find((c) => c.rate === 12)!.figures, 'the baseline measured 12/s').toBeDefined();

    const slowOut = join(dir, 'slow');
    const baselinePath = join(baseOut, 'speed-matrix.json');
    const slow = runVitest(
      ['bench', '--run'],
      { ...matrix, LLM_BENCH_OUT: slowOut, LLM_BENCH_BASELINE: baselinePath, LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ ...STEP, stepBaseMs: 10, kvCapacityTokens: 100 }) },
      120_000,
    );
    expect(slow.code, slow.out).toBe(1);
    const slowJson = read(slowOut);
    const twelve = slowJson.rateCells!.find((c) => c.rate === 12)!;
    expect(twelve.status, JSON.stringify(twelve.evidence)).toBe('over-capacity');
    const line = '0@12/s is over-capacity now where the baseline measured it: its figures are missing';
    expect(twelve.baselineFailures).toEqual([line]);
    expect(slow.out).toContain(line);
    // the page lists it among the regressions; compare afterwards fails on the same line
    expect(readFileSync(join(slowOut, 'speed-matrix.md'), 'utf8')).toContain(line);
    const c = await compare(baselinePath, join(slowOut, 'speed-matrix.json'));
    expect(c.code).toBe(1);
    expect(c.out).toContain(`  ${line}`);

    // another rate seed: said once at the start, and no rate cell is gated (the decode cell is)
    const seedOut = join(dir, 'seed');
    const seeded = runVitest(
      ['bench', '--run'],
      { ...matrix, LLM_BENCH_OUT: seedOut, LLM_BENCH_BASELINE: baselinePath, LLM_BENCH_RATE_SEED: '9', LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ ...STEP, stepBaseMs: 60 }) },
      120_000,
    );
    const note = "LLM_BENCH_BASELINE: the baseline's open-loop rates were scheduled otherwise (seed 1 → 9): other requests fall in each window, so its rate cells are not compared with this run's (the decode cells are)";
    expect(seeded.out).toContain(note);
    expect(seeded.out.split(note).length - 1, 'said once').toBe(1);
    for (const cell of read(seedOut).rateCells!) expect(cell.baselineFailures ?? [], `${cell.rate}/s`).toEqual([]);
    // the decode cell at 60 ms steps is slower than the baseline's: the run still fails, on it
    expect(seeded.code, seeded.out).toBe(1);
    expect(seeded.out).toMatch(/0\/1 timeBetweenTokensMs [\d.]+ vs baseline [\d.]+: \+/);
  });
});
