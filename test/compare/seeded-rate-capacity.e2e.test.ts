/**
 * The highest rate at the SLO, gated end to end against the embedded simulator (issue 22, item 5).
 *
 * The tiny profile with fixed 10 ms steps, 8 running requests and 32 output tokens (service limit
 * 25 requests/s); rates 6, 12 and 30 requests/s, Poisson (30 is over the limit: Saturated); SLO TTFT p90 from the schedule ≤ 150 ms.
 * The sim's step model puts the answer near 21 requests/s (test/accuracy/rate-capacity.test.ts);
 * the seeded slowdown (16 ms steps: limit 15.6 requests/s) far below it, near 12.
 *
 * 1. The baseline run with -u writes the rateCapacity budget and shows the line on the page.
 * 2. The slowed run, gated by that file and by the baseline (LLM_BENCH_BASELINE), fails both
 *    gates, with messages that name the context and both rates, in the Vitest output and the page.
 *    Its planned rate cells fail against the baseline's too, figure by figure: the time between
 *    tokens is the step (10 → 16 ms, +60 % against a 5 % tolerance) at 6 and 12/s, save one that
 *    was Client-limited (not compared, said on the diff); at least one of the two is compared.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { validateResult } from '../../src/results/validate.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { runVitest } from './run-vitest.js';
import { clientLimitedByTiming } from '../helpers/client-limited.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-rate-capacity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const thresholds = join(dir, 'thresholds.json');
// decode cell figures get wide tolerances: this test is about the rate capacity
const FRESH_THRESHOLDS = JSON.stringify({
  headroom: 0.2,
  tolerances: { regression: { cells: { totalTokensPerSecond: 0.9, perRequestTokensPerSecond: 0.9, timeBetweenTokensMs: 0.9, ttftMs: { relative: 0.9, absolute: 500 } } } },
  cells: {},
  prefill: {},
});
writeFileSync(thresholds, FRESH_THRESHOLDS);

const SLO = 'ttftP90<=150';
const matrix = {
  LLM_BENCH_SIM_PROFILE: 'tiny',
  LLM_BENCH_CONTEXTS: '0',
  LLM_BENCH_CONCURRENCY: '1',
  LLM_BENCH_PREFILL: 'none',
  LLM_BENCH_DURATION_S: '3',
  LLM_BENCH_MAX_TOKENS: '32',
  LLM_BENCH_RATES: '6,12,30',
  LLM_BENCH_RAMP_S: '0.5',
  LLM_BENCH_SLO: SLO,
  LLM_BENCH_THRESHOLDS: thresholds,
};
const BASE = { stepBaseMs: 10, eosProbability: 0, maxRunningRequests: 8, prefillPerTokenMs: 0 };

function read(out: string): SpeedMatrixResult {
  const json = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
  const valid = validateResult(json);
  expect(valid.ok, JSON.stringify(valid)).toBe(true);
  return json as SpeedMatrixResult;
}
const adaptiveOf = (r: SpeedMatrixResult) => (r.rateCells ?? []).filter((c) => c.adaptive);
const rps = (x: number) => String(Number(x.toPrecision(3))).replace('.', '\\.');

describe('rate capacity gate against the simulator', () => {
  test('a seeded slowdown lowers the highest rate at the SLO and fails the rateCapacity and baseline gates', { timeout: 400_000 }, async () => {
    const baseOut = join(dir, 'base');
    const baseline = (): SpeedMatrixResult => {
      // each take writes its budget afresh: -u keeps an earlier take's budget that this one still
      // meets (a hunt's third take found 21 req/s and kept the first take's 17.2 = 0.8 × 21.5)
      writeFileSync(thresholds, FRESH_THRESHOLDS);
      const base = runVitest(['bench', '--run', '-u'], { ...matrix, LLM_BENCH_OUT: baseOut, LLM_BENCH_SIM_OVERRIDES: JSON.stringify(BASE) }, 200_000);
      expect(base.code, base.out).toBe(0);
      return read(baseOut);
    };
    // A Client-limited cell is the tool saying it could not measure then (CI once had the first
    // rate cell, 6/s, Client-limited on its loaded 2-core machine, which voids the search from its
    // start; a run beside three other test files and a busy core had three of the search's cells
    // so, and -u then rightly wrote no budget from them). This test is about the gate, not the
    // client: said here with the evidence, and the baseline measured again, three runs at most.
    let baseJson = baseline();
    for (let run = 2; run <= 3; run++) {
      const limited = (baseJson.rateCells ?? []).filter((c) => clientLimitedByTiming(c));
      if (limited.length === 0) break;
      for (const c of limited) console.log(`[rate capacity] baseline ${c.rate}/s was Client-limited (${JSON.stringify(c.evidence.clientLimited)}, loop ${JSON.stringify(c.clientEventLoopDelayMs)}): measuring the baseline again (run ${run} of 3)`);
      baseJson = baseline();
    }
    const row = baseJson.rateCapacity!.rows[0]!;
    console.log(`[rate capacity] baseline: ${row.capacity} req/s, searched ${row.searched.map((s) => `${s.rate}${s.meets ? '✓' : '✗'}`).join(' ')}`);
    for (const c of baseJson.rateCells ?? []) console.log(`  ${c.rate}/s ${c.status}: ${c.slo?.binding?.detail ?? 'meets'}`);
    expect(row.atLeast).toBe(false);
    expect(row.capacity).toBeGreaterThan(18);
    expect(row.capacity).toBeLessThan(25);
    expect(row.confirmation?.rate).toBe(row.capacity);
    expect(row.adaptiveCells).toBeLessThanOrEqual(7);
    // the search's cells are rate cells in the JSON, marked adaptive, between the configured rates
    const adaptive = (baseJson.rateCells ?? []).filter((c) => c.adaptive);
    expect(adaptive.length).toBe(row.adaptiveCells - 1);
    for (const c of adaptive) expect(c.rate > 12 && c.rate < 30 && c.slo !== undefined).toBe(true);
    for (const c of baseJson.rateCells ?? []) expect(c.slo).toBeDefined();
    // the page: the line, and a grid of the configured rates only
    const page = readFileSync(join(baseOut, 'speed-matrix.md'), 'utf8');
    expect(page).toMatch(new RegExp(`- Highest rate at the SLO: 0: ${rps(row.capacity)} req/s \\(binds: `));
    expect(page).toContain('| Context | 6/s | 12/s | 30/s |');
    // -u wrote the budget in requests/s
    const file = JSON.parse(readFileSync(thresholds, 'utf8'));
    const min = file.rateCapacity['0'].min as number;
    expect(min).toBeGreaterThan(row.capacity * 0.75);
    expect(min).toBeLessThanOrEqual(row.capacity * 0.8);
    expect(file.slo).toBe(SLO);

    // the seeded slowdown: every step 16 ms
    const slowOut = join(dir, 'slow');
    const slowed = () =>
      runVitest(
        ['bench', '--run'],
        { ...matrix, LLM_BENCH_OUT: slowOut, LLM_BENCH_BASELINE: join(baseOut, 'speed-matrix.json'), LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ ...BASE, stepBaseMs: 16 }) },
        200_000,
      );
    let slow = slowed();
    // as for the baseline: a Client-limited first rate leaves the slowed capacity not found (the
    // search cannot start), which is the tool saying it could not measure then; said with the
    // evidence, and the slowed run measured again, three runs at most
    for (let run = 2; run <= 3; run++) {
      const firstLimited = (read(slowOut).rateCells ?? []).filter((c) => c.rate === 6 && clientLimitedByTiming(c));
      if (firstLimited.length === 0) break;
      for (const c of firstLimited) console.log(`[rate capacity] slowed ${c.rate}/s was Client-limited (${JSON.stringify(c.evidence.clientLimited)}, loop ${JSON.stringify(c.clientEventLoopDelayMs)}): measuring the slowed run again (run ${run} of 3)`);
      slow = slowed();
    }
    expect(slow.code, slow.out).toBe(1);
    const slowRow = read(slowOut).rateCapacity!.rows[0]!;
    console.log(`[rate capacity] slowed: ${slowRow.capacity} req/s, searched ${slowRow.searched.map((s) => `${s.rate}${s.meets ? '✓' : '✗'}`).join(' ')}`);
    expect(slowRow.capacity).toBeLessThan(16);
    const budget = new RegExp(`rate capacity 0: the highest rate at the SLO is ${rps(slowRow.capacity)} req/s, below its budget ${rps(min)} req/s; binds: `);
    const regression = new RegExp(`rate capacity 0: the highest rate at the SLO is ${rps(slowRow.capacity)} req/s vs baseline ${rps(row.capacity)} req/s \\(−[\\d.]+ req/s, allowed −[\\d.]+ req/s\\)`);
    expect(slow.out).toMatch(budget);
    expect(slow.out).toMatch(regression);
    expect(slowRow.thresholdFailures?.join('\n')).toMatch(budget);
    expect(slowRow.baselineFailures?.join('\n')).toMatch(regression);
    const slowPage = readFileSync(join(slowOut, 'speed-matrix.md'), 'utf8');
    expect(slowPage).toMatch(budget);
    expect(slowPage).toMatch(regression);
    const diff = readFileSync(join(slowOut, 'speed-matrix-diff.md'), 'utf8');
    expect(diff).toContain('## Highest rate at the SLO');
    expect(diff).toContain('**Regressed**');
    // the planned rate cells against the baseline's, figure by figure (the search's own cells are not)
    const slowCells = (read(slowOut).rateCells ?? []).filter((c) => !c.adaptive);
    expect(slowCells.map((c) => c.rate)).toEqual([6, 12, 30]);
    // each of 6/s and 12/s (under both limits) fails on its time between tokens, which is the step;
    // a cell Client-limited on either side is not compared, and the diff says so instead
    const baseCells = (baseJson.rateCells ?? []).filter((c) => !c.adaptive);
    let compared = 0;
    for (const rate of [6, 12]) {
      const slowCell = slowCells.find((c) => c.rate === rate)!;
      const limited = [slowCell, baseCells.find((c) => c.rate === rate)!].some((c) => c.statuses.includes('client-limited'));
      console.log(`[rate capacity] 0@${rate}/s against the baseline${limited ? ' (Client-limited: not compared)' : ''}: ${JSON.stringify(slowCell.baselineFailures)}`);
      if (limited) {
        expect(slowCell.baselineFailures ?? []).toEqual([]);
        expect(diff).toMatch(new RegExp(`\\| 0 \\| ${rate} req/s \\| [^|]+ \\| — \\| — \\| — \\| — \\| — \\| not compared: [^|]*Client-limited`));
        continue;
      }
      const tbt = new RegExp(`^0@${rate}/s tbtMs (\\d+\\.\\d) vs baseline (\\d+\\.\\d): \\+[\\d.]+% \\(tolerance 5%( \\+ spread [\\d.]+%)?, at least 0\\.5 ms\\)$`);
      const line = (slowCell.baselineFailures ?? []).find((f) => tbt.test(f));
      expect(line, JSON.stringify(slowCell.baselineFailures)).toBeDefined();
      const [, slowTbt, baseTbt] = tbt.exec(line!)!;
      expect(Number(slowTbt) / Number(baseTbt)).toBeGreaterThan(1.3);
      expect(slow.out).toContain(line);
      expect(diff).toMatch(new RegExp(`\\| 0 \\| ${rate} req/s \\| [^|]+ \\| tbtMs \\| [\\d.]+ \\| [\\d.]+ \\| \\+[\\d.]+% \\| tolerance 5%( \\+ spread [\\d.]+%)?, at least 0\\.5 ms \\| \\*\\*Regressed\\*\\* \\|`));
      compared++;
    }
    expect(compared, 'at least one of 6/s and 12/s compared with the baseline').toBeGreaterThan(0);
    expect(diff).toContain('## Open-loop rate cells');
    for (const c of adaptiveOf(read(slowOut))) expect(diff).not.toMatch(new RegExp(`\\| 0 \\| ${String(c.rate).replace('.', '\\.')} req/s \\| [a-z→ -]+ \\| (completedRate|—) \\|`));
  });
});
