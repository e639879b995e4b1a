/**
 * The baseline gate end to end against the embedded simulator: a baseline run (each cell measured
 * twice, LLM_BENCH_REPEAT=2), then a run whose simulated step time is 20 % longer
 * (LLM_BENCH_SIM_OVERRIDES) fails the gate with a readable message per regressed figure — in the
 * Vitest output, the JUnit XML, the job summary and the diff page — while an unchanged rerun passes.
 * The compare CLI gives the same verdicts on the written files.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runCompareCli } from '../../src/compare/cli.js';
import { validateResult } from '../../src/results/validate.js';
import { runVitest } from './run-vitest.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-gate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const thresholds = join(dir, 'thresholds.json');
// wider than the defaults, so a busy 2-core test machine does not read as a regression; the
// seeded one is −16.7 % tok/s and +20 % time between tokens. TTFT of a 2-stream cell on the tiny
// profile is ~10 ms, where one scheduling hiccup of the loaded machine doubles it (seen in CI:
// 11.8 → 19.4 ms): it gets a 50 ms floor here, since the seeded slowdown is about decode speed.
writeFileSync(
  thresholds,
  JSON.stringify({
    tolerances: {
      regression: {
        cells: {
          totalTokensPerSecond: 0.1,
          perRequestTokensPerSecond: 0.1,
          timeBetweenTokensMs: 0.1,
          ttftMs: { relative: 0.1, absolute: 50 },
        },
      },
    },
    cells: {},
    prefill: {},
  }),
);
const matrix = {
  LLM_BENCH_SIM_PROFILE: 'tiny',
  LLM_BENCH_CONTEXTS: '0',
  LLM_BENCH_CONCURRENCY: '2',
  LLM_BENCH_PREFILL: 'none',
  LLM_BENCH_DURATION_S: '1.5',
  LLM_BENCH_MAX_TOKENS: '32',
  LLM_BENCH_THRESHOLDS: thresholds,
};

/**
 * A run of the matrix whose simulator kept its own step: the tiny profile's time between tokens is
 * its step (`stepMs`: no cost per request or per KV token), and the client reads it to the
 * microsecond, so a cell whose time between tokens is more than 3 % over the step had a simulator
 * the loaded machine slowed (a run beside a spinning process and two other test files read 13.5 ms
 * at a 12 ms step): run again, three runs at most, each retake logged. The same for a cell that
 * is not Valid: its 1.5 s window has two metric samples, and a loaded machine's scrape timer fires
 * in a hand-over (both 32-token streams end together, their next requests not yet admitted) often
 * enough to read Requests queued on a simulator that holds 8 (docs/method.md, Requests queued,
 * "Limit"; a clean-clone CI run, 2026-12-07); this test is about the baseline gate. The last run is
 * returned whatever it read.
 */
function runKeepingStep(label: string, out: string, stepMs: number, run: () => { code: number | null; out: string }) {
  for (let attempt = 1; ; attempt++) {
    const r = run();
    const page = join(out, 'speed-matrix.json');
    if (!existsSync(page)) return r; // no page: the caller's assertions say why
    const cell = (JSON.parse(readFileSync(page, 'utf8')) as { cells: Array<{ statuses?: string[]; evidence?: unknown; figures?: { timeBetweenTokensMs?: { median: number } } }> }).cells[0];
    const tbt = cell?.figures?.timeBetweenTokensMs?.median;
    const statuses = cell?.statuses ?? [];
    const slowed = tbt !== undefined && tbt > stepMs * 1.03;
    const notValid = statuses.length > 0 && statuses.join() !== 'valid';
    if (attempt >= 3 || tbt === undefined || (!slowed && !notValid)) return r;
    if (slowed) console.log(`[seeded regression] the ${label} run's simulator wrote a token every ${tbt.toFixed(2)} ms at a ${stepMs} ms step (slowed by the machine): run again (${attempt + 1} of 3)`);
    else console.log(`[seeded regression] the ${label} run's cell read ${statuses.join(', ')} (${JSON.stringify(cell?.evidence)}): run again (${attempt + 1} of 3)`);
  }
}

async function compare(base: string, next: string) {
  const lines: string[] = [];
  const code = await runCompareCli([base, next, '--thresholds', thresholds, '--out', join(dir, 'cli-diff.md')], {
    out: (t) => lines.push(t),
    err: (t) => lines.push(t),
    env: {},
  });
  return { code, text: lines.join('\n') };
}

describe('baseline gate against the simulator', () => {
  test('step time +20 % fails the gate; an unchanged rerun passes', { timeout: 240_000 }, async () => {
    const baseOut = join(dir, 'base');
    const base = runKeepingStep('baseline', baseOut, 10, () => runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_OUT: baseOut, LLM_BENCH_REPEAT: '2' }));
    expect(base.code, base.out).toBe(0);
    const baseline = join(baseOut, 'speed-matrix.json');
    const baseJson = JSON.parse(readFileSync(baseline, 'utf8'));
    expect(validateResult(baseJson).ok).toBe(true);
    expect(baseJson.info.run.repeat).toBe(2);
    expect(baseJson.cells[0].repeats.count).toBe(2);
    expect(baseJson.cells[0].repeats.spread.totalTokensPerSecond.values).toHaveLength(2);
    expect(readFileSync(join(baseOut, 'speed-matrix.md'), 'utf8')).toContain('| Spread over repeats |');

    // seeded regression
    const slowOut = join(dir, 'slow');
    const summary = join(dir, 'step-summary.md');
    const junit = join(dir, 'junit.xml');
    const slow = runKeepingStep('slowed', slowOut, 12, () => {
      rmSync(summary, { force: true });
      return runVitest(['bench', '--run'], {
        ...matrix,
        LLM_BENCH_OUT: slowOut,
        LLM_BENCH_BASELINE: baseline,
        LLM_BENCH_SIM_OVERRIDES: '{"stepBaseMs":12}',
        GITHUB_STEP_SUMMARY: summary,
        LLM_BENCH_JUNIT: junit,
      });
    });
    expect(slow.code, slow.out).toBe(1);
    const tbt = /0\/2 timeBetweenTokensMs 1[12]\.\d vs baseline (9|10)\.\d: \+\d+\.\d% \(tolerance 10%( \+ spread [\d.]+%)?, at least 0\.5 ms\)/;
    expect(slow.out).toMatch(tbt);
    expect(slow.out).toMatch(/0\/2 totalTokensPerSecond [\d.]+ vs baseline [\d.]+: −\d+\.\d% \(tolerance 10%/);
    const slowJson = JSON.parse(readFileSync(join(slowOut, 'speed-matrix.json'), 'utf8'));
    expect(slowJson.info.simOverrides).toEqual({ stepBaseMs: 12 });
    expect(slowJson.info.baselinePath).toBe(baseline);
    expect(slowJson.cells[0].baselineFailures.join('\n')).toMatch(tbt);
    expect(readFileSync(join(slowOut, 'speed-matrix.md'), 'utf8')).toContain('### Regressions against the baseline');
    // the diff page next to the result
    const diff = readFileSync(join(slowOut, 'speed-matrix-diff.md'), 'utf8');
    expect(diff).toContain('# Speed matrix comparison');
    expect(diff).toMatch(/\*\*Fail: \d regressions?\*\*/);
    // the job summary: the grid and the regressions
    const md = readFileSync(summary, 'utf8');
    expect(md).toContain('| Context | 2 |');
    expect(md).toMatch(/\| 0 \| \*\*[\d.]+\*\* tok\/s · \d+ ms TTFT \|/);
    expect(md).toContain(`### Regressions against the baseline \`${baseline}\``);
    expect(md).toMatch(tbt);
    // JUnit: one test case per cell, the failure text readable
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<testcase [^>]*name="speed matrix sim-tiny &gt; decode 0\/2"/);
    expect(xml).toMatch(/<failure message="0\/2 [a-zA-Z]+ [\d.]+ vs baseline [\d.]+: [+−][\d.]+% \(tolerance 10%/);

    // unchanged rerun
    const sameOut = join(dir, 'same');
    const same = runKeepingStep('unchanged', sameOut, 10, () => runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_OUT: sameOut, LLM_BENCH_BASELINE: baseline }));
    expect(same.code, same.out).toBe(0);
    const sameJson = JSON.parse(readFileSync(join(sameOut, 'speed-matrix.json'), 'utf8'));
    expect(sameJson.cells[0].baselineFailures).toEqual([]);

    // the compare CLI on the same files
    const cliSlow = await compare(baseline, join(slowOut, 'speed-matrix.json'));
    expect(cliSlow.code, cliSlow.text).toBe(1);
    expect(cliSlow.text).toMatch(tbt);
    const cliSame = await compare(baseline, join(sameOut, 'speed-matrix.json'));
    expect(cliSame.code, cliSame.text).toBe(0);
  });

  test('a baseline that cannot be read fails the run naming the variable', { timeout: 120_000 }, () => {
    const missing = join(dir, 'nope.json');
    const r = runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_OUT: join(dir, 'bad'), LLM_BENCH_BASELINE: missing });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain(`LLM_BENCH_BASELINE: cannot read ${missing} (no such file)`);
    expect(existsSync(join(dir, 'bad', 'speed-matrix-diff.md'))).toBe(false);
  });
});
