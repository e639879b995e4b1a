/**
 * Capacity at an SLO, gated end to end against the embedded simulator (issue 13's CI test).
 *
 * The tiny profile with a per-request step cost: a step takes stepBaseMs + 1 ms per running
 * request, so each stream gets 1000 / (stepBaseMs + C) tok/s. With the SLO perRequest>=44.5:
 *   baseline (stepBaseMs 10): C ≤ 12 meets it (12 → 45.5 tok/s, 13 → 43.5 tok/s);
 *   seeded slowdown (stepBaseMs 16): C ≤ 6 (6 → 45.5 tok/s, 7 → 43.5 tok/s).
 * The columns are 1, 4 and 16, so the search bisects between 4 and 16 in both runs.
 *
 * 1. The baseline run with -u writes the capacity budget (min = capacity less the headroom) and the
 *    page's "Capacity at your SLO" section; the search stays within ⌈log2(gap)⌉ + 1 cells.
 * 2. The slowed run, gated by that file and by the baseline, fails: the message names the context,
 *    the old capacity, the new one and the binding constraint, in the Vitest output, the page, the
 *    diff page and the compare CLI.
 * The exact capacities are checked against the simulator's truth elsewhere
 * (test/accuracy/capacity-slo.test.ts); here they only need to be far apart, so the loaded test
 * machine's noise (a user either way) cannot blur them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runCompareCli } from '../../src/compare/cli.js';
import { validateResult } from '../../src/results/validate.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { maxSearchCells } from '../../src/slo/capacity.js';
import { runVitest } from './run-vitest.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-capacity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const thresholds = join(dir, 'thresholds.json');
// cell figures get wide tolerances: this test is about capacity; capacity keeps its defaults
writeFileSync(
  thresholds,
  JSON.stringify({
    headroom: 0.2,
    tolerances: {
      regression: {
        cells: {
          totalTokensPerSecond: 0.5,
          perRequestTokensPerSecond: 0.5,
          timeBetweenTokensMs: 0.5,
          ttftMs: { relative: 0.5, absolute: 200 },
        },
      },
    },
    cells: {},
    prefill: {},
  }),
);

const SLO = 'perRequest>=44.5';
const matrix = {
  LLM_BENCH_SIM_PROFILE: 'tiny',
  LLM_BENCH_CONTEXTS: '0',
  LLM_BENCH_CONCURRENCY: '1,4,16',
  LLM_BENCH_PREFILL: 'none',
  LLM_BENCH_DURATION_S: '1.5',
  LLM_BENCH_MAX_TOKENS: '48',
  LLM_BENCH_SLO: SLO,
  LLM_BENCH_THRESHOLDS: thresholds,
};
const BASE_PROFILE = { stepPerRequestMs: 1, maxRunningRequests: 64 };

/**
 * A run whose capacity row the machine left unjudged is taken again (at most twice more, said in
 * the log): on a loaded 2-core runner the cell just past the capacity is now and then Client-limited
 * (the client's own timing error over the bound, with a bench child, its simulator and other test
 * files on the two cores), so the SLO cannot judge it and binds as "not measured" one user early.
 * That is the product saying the truth about the machine (issue 64); what this test checks is the
 * capacity gate, which needs the figure to bind.
 */
function judgedRun(label: string, run: (attempt: number) => ReturnType<typeof runVitest>, out: string): { result: ReturnType<typeof runVitest>; json: SpeedMatrixResult } {
  for (let attempt = 1; ; attempt++) {
    const result = run(attempt);
    const json = read(out);
    const binding = json.capacity?.rows[0]?.binding;
    if (binding?.constraint !== 'unmeasured' || binding.label !== 'Client-limited' || attempt === 3) return { result, json };
    console.log(`[capacity] ${label}, attempt ${attempt}: the row binds on a cell the machine left unjudged (${binding.detail}); taken again`);
  }
}

function read(out: string): SpeedMatrixResult {
  const json = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
  const valid = validateResult(json);
  expect(valid.ok, JSON.stringify(valid)).toBe(true);
  return json as SpeedMatrixResult;
}

describe('capacity gate against the simulator', () => {
  test('a seeded slowdown lowers the capacity and fails the capacity gate', { timeout: 400_000 }, async () => {
    // 1. baseline, with -u: the threshold file gets the capacity budget
    const baseOut = join(dir, 'base');
    // a retake rewrites every budget (LLM_BENCH_UPDATE=all): -u keeps one that still holds, the unjudged attempt's lower capacity among them
    const { result: base, json: baseJson } = judgedRun(
      'baseline',
      (attempt) => runVitest(['bench', '--run', '-u'], { ...matrix, LLM_BENCH_OUT: baseOut, LLM_BENCH_SIM_OVERRIDES: JSON.stringify(BASE_PROFILE), ...(attempt > 1 ? { LLM_BENCH_UPDATE: 'all' } : {}) }, 200_000),
      baseOut,
    );
    expect(base.code, base.out).toBe(0);
    expect(baseJson.info.run.slo?.text).toBe(SLO);
    const row = baseJson.capacity!.rows[0]!;
    console.log(`[capacity] baseline: ${row.capacity} users, searched ${row.searched.map((s) => `${s.concurrency}${s.meets ? '✓' : '✗'}`).join(' ')}`);
    // the truth is 12; between the columns 4 and 16, so found by the search
    expect(row.atLeast).toBe(false);
    expect(row.capacity).toBeGreaterThanOrEqual(10);
    expect(row.capacity).toBeLessThanOrEqual(14);
    expect(row.binding?.constraint).toBe('perRequestTokensPerSecond');
    expect(row.bindingConcurrency).toBe(row.capacity + 1);
    expect(row.adaptiveCells).toBeLessThanOrEqual(maxSearchCells(4, 16));
    expect(row.confirmation?.concurrency).toBe(row.capacity);
    // the search's cells are real cells in the JSON, marked adaptive, between the columns
    const adaptive = baseJson.cells.filter((c) => c.adaptive);
    expect(adaptive.length).toBe(row.adaptiveCells - 1);
    for (const c of adaptive) {
      expect(c.concurrency).toBeGreaterThan(4);
      expect(c.concurrency).toBeLessThan(16);
      expect(c.figures?.perRequestTokensPerSecond).toBeGreaterThan(0);
      expect(c.goodput?.requests.judged).toBeGreaterThan(0);
    }
    // every matrix cell carries its goodput and verdict
    for (const c of baseJson.cells) expect(c.slo).toBeDefined();
    expect(baseJson.cells.find((c) => c.concurrency === 1)?.slo?.meets).toBe(true);
    expect(baseJson.cells.find((c) => c.concurrency === 16)?.slo?.meets).toBe(false);
    // the page
    const page = readFileSync(join(baseOut, 'speed-matrix.md'), 'utf8');
    expect(page).toContain('### Capacity at your SLO');
    expect(page).toMatch(new RegExp(`\\| 0 \\| ${row.capacity} \\| per-request tok/s [\\d.]+ < 44\\.5 at ${row.capacity + 1} \\|`));
    expect(page).toContain('| Goodput |');
    // the adaptive cells are not planned cells: the run is complete, the grid has only the columns
    expect(page).not.toContain('Incomplete');
    expect(page).toContain('| Context | 1 | 4 | 16 |');
    // -u wrote the budget: capacity less the 20 % headroom (at least 1 user), in whole users
    const file = JSON.parse(readFileSync(thresholds, 'utf8'));
    expect(file.capacity).toEqual({ '0': { min: Math.floor(Math.min(row.capacity * 0.8, row.capacity - 1)) } });
    expect(Object.keys(file.cells).sort()).toEqual(['0/1', '0/16', '0/4']);
    expect(file.slo).toBe(SLO);
    // the budget means "at this SLO": a run at another one is refused before any cell runs
    const other = runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_SLO: 'perRequest>=30', LLM_BENCH_OUT: join(dir, 'other'), LLM_BENCH_SIM_OVERRIDES: JSON.stringify(BASE_PROFILE) }, 120_000);
    expect(other.code, other.out).not.toBe(0);
    expect(other.out).toContain(`its capacity budgets were measured at the SLO ${SLO}, this run's is perRequest>=30`);

    // 2. the seeded slowdown: every step 6 ms longer
    const slowOut = join(dir, 'slow');
    const baseline = join(baseOut, 'speed-matrix.json');
    const { result: slow, json: slowJson } = judgedRun(
      'slowed',
      () => runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_OUT: slowOut, LLM_BENCH_BASELINE: baseline, LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ ...BASE_PROFILE, stepBaseMs: 16 }) }, 200_000),
      slowOut,
    );
    expect(slow.code, slow.out).toBe(1);
    const slowRow = slowJson.capacity!.rows[0]!;
    console.log(`[capacity] slowed: ${slowRow.capacity} users, searched ${slowRow.searched.map((s) => `${s.concurrency}${s.meets ? '✓' : '✗'}`).join(' ')}`);
    expect(slowRow.capacity).toBeGreaterThanOrEqual(4);
    expect(slowRow.capacity).toBeLessThanOrEqual(8);
    // the baseline gate: context, old, new, binding
    const regression = new RegExp(`capacity 0: ${slowRow.capacity} users vs baseline ${row.capacity} \\(−${row.capacity - slowRow.capacity}, allowed −1\\); binds: per-request tok/s [\\d.]+ < 44\\.5 at ${slowRow.capacity + 1}`);
    expect(slow.out).toMatch(regression);
    expect(slowRow.baselineFailures?.join('\n')).toMatch(regression);
    // the threshold gate
    expect(slow.out).toMatch(new RegExp(`capacity 0: ${slowRow.capacity} users < budget ${file.capacity['0'].min}; binds: per-request tok/s`));
    const slowPage = readFileSync(join(slowOut, 'speed-matrix.md'), 'utf8');
    expect(slowPage).toMatch(regression);
    expect(slowPage).toContain('### Threshold failures');
    const diff = readFileSync(join(slowOut, 'speed-matrix-diff.md'), 'utf8');
    expect(diff).toContain('## Capacity at the SLO');
    // the same two runs drawn, beside it
    const diffHtml = readFileSync(join(slowOut, 'speed-matrix-diff.html'), 'utf8');
    expect(diffHtml).toContain('<h1>Speed matrix comparison</h1>');
    expect(diffHtml).toMatch(/data-run="1" data-figure="totalTokensPerSecond" data-ratio="0\.\d+"/);
    expect(diff).toMatch(new RegExp(`\\| 0 \\| ${row.capacity} \\| ${slowRow.capacity} \\| 1 \\| per-request tok/s [\\d.]+ < 44\\.5 at ${slowRow.capacity + 1} \\| \\*\\*Regressed\\*\\* \\|`));

    // the compare CLI on the written files gives the same verdict
    const lines: string[] = [];
    const code = await runCompareCli([baseline, join(slowOut, 'speed-matrix.json'), '--thresholds', thresholds, '--out', join(dir, 'cli-diff.md')], {
      out: (t) => lines.push(t),
      err: (t) => lines.push(t),
      env: {},
    });
    expect(code, lines.join('\n')).toBe(1);
    expect(lines.join('\n')).toMatch(regression);
  });
});
