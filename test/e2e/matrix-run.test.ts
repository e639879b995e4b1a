/**
 * End to end, as a user runs it: `npx vitest bench --run` on a one-cell matrix against the
 * embedded simulator. A threshold breach exits 1 with a message naming the cell, the figure, the
 * measured value, the budget and the margin; `-u` rewrites the file and exits 0; a rerun then
 * passes. Both result files are written and the JSON validates against the schema.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { validateResult } from '../../src/results/validate.js';
import { runVitest } from '../compare/run-vitest.js';

/** `vitest bench --run` in a child, with the clean environment every spawned run of the suite gets (a caller's LLM_BENCH_* stays out) */
function runBench(env: Record<string, string>, extraArgs: string[] = []) {
  return runVitest(['bench', '--run', ...extraArgs], env);
}

describe('matrix run end to end (embedded simulator, tiny profile)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-e2e-'));
  const thresholds = join(dir, 'thresholds.json');
  const out = join(dir, 'reports');
  const env = {
    LLM_BENCH_SIM_PROFILE: 'tiny',
    LLM_BENCH_CONTEXTS: '1K',
    LLM_BENCH_CONCURRENCY: '2',
    LLM_BENCH_PREFILL: 'none',
    LLM_BENCH_DURATION_S: '1',
    LLM_BENCH_MAX_TOKENS: '32',
    LLM_BENCH_OUT: out,
    LLM_BENCH_THRESHOLDS: thresholds,
  };

  test('a breach fails, -u rewrites the budgets, a rerun passes', { timeout: 300_000 }, () => {
    writeFileSync(
      thresholds,
      JSON.stringify({ cells: { '1K/2': { min: { totalTokensPerSecond: 1_000_000 } } }, prefill: {} }, null, 2),
    );
    const breach = runBench(env);
    expect(breach.code, breach.out).toBe(1);
    expect(breach.out).toMatch(/1K\/2 totalTokensPerSecond [\d.,]+ < min 1,?000,?000(\.0)? \([\d.]+% below\)/);

    const json = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
    expect(validateResult(json).ok).toBe(true);
    expect(json.cells).toHaveLength(1);
    expect(json.cells[0].figures.totalTokensPerSecond).toBeGreaterThan(0);
    expect(readFileSync(join(out, 'speed-matrix.md'), 'utf8')).toContain('## ');
    expect(readFileSync(join(out, 'speed-matrix.html'), 'utf8')).toContain('<html');

    // a wide headroom (LLM_BENCH_HEADROOM) so the rerun is not failed by a 2-core machine's TTFT jitter
    const update = runBench({ ...env, LLM_BENCH_HEADROOM: '0.9' }, ['-u']);
    expect(update.code, update.out).toBe(0);
    const updated = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
    const rewritten = JSON.parse(readFileSync(thresholds, 'utf8'));
    const measured = updated.cells[0].figures.totalTokensPerSecond;
    const budget = rewritten.cells['1K/2'].min.totalTokensPerSecond;
    // min = measured × (1 − 0.9), rounded down to 3 significant digits
    expect(budget).toBeLessThanOrEqual(measured * 0.1);
    expect(budget).toBeGreaterThan(measured * 0.099);
    expect(rewritten.cells['1K/2'].max.ttftMs).toBeGreaterThanOrEqual(updated.cells[0].figures.ttftMs.median * 1.9);

    const rerun = runBench(env);
    expect(rerun.code, rerun.out).toBe(0);
  });

  test('-u does not write a cell that failed (failed requests): the run fails, the budget it had stays, the log says why', { timeout: 300_000 }, () => {
    // errors 16 tokens into a stream: most of the cell's 32-token requests fail, while the
    // warm-up (8 tokens) and the scout (1) never do (an HTTP 500 rate failed all 3 warm-ups in 1 run of 8)
    const failedThresholds = join(dir, 'failed-thresholds.json');
    const before = { cells: { '1K/2': { status: 'valid', min: { totalTokensPerSecond: 1 } } }, prefill: {} };
    writeFileSync(failedThresholds, JSON.stringify(before));
    const r = runBench(
      { ...env, LLM_BENCH_THRESHOLDS: failedThresholds, LLM_BENCH_OUT: join(dir, 'failed'), LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ faults: { errorRate: 0.8, faultAfterTokens: 16 } }) },
      ['-u'],
    );
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/1K\/2 had \d+ failed requests?/);
    expect(r.out).toContain("-u did not write 1K/2's budget: a failed cell is no measurement to gate later runs on");
    expect(r.out).toMatch(/-u did not write 1 cell or row that failed or was Client-limited [^\n]*\n\s+1K\/2 \(its budget stays as it was\): 1K\/2 had \d+ failed request/);
    expect(JSON.parse(readFileSync(failedThresholds, 'utf8')).cells).toEqual(before.cells);
  });

  test('LLM_BENCH_REPEAT repeats the prefill row too, each request with its own cold prompt; LLM_BENCH_REQUESTS_FILE and LLM_BENCH_PERCENTILES', { timeout: 300_000 }, () => {
    const repOut = join(dir, 'repeat');
    const repThresholds = join(dir, 'repeat-thresholds.json');
    writeFileSync(repThresholds, JSON.stringify({ cells: {}, prefill: {} }));
    // a file another run left: replaced
    const requestsFile = join(dir, 'repeat-requests', 'requests.jsonl');
    mkdirSync(join(dir, 'repeat-requests'));
    writeFileSync(requestsFile, '{"run":"an earlier run","kind":"decode","cell":"1K/2","id":"old-w0-r0"}\n');
    const r = runBench({ ...env, LLM_BENCH_PREFILL: '1K', LLM_BENCH_REPEAT: '3', LLM_BENCH_OUT: repOut, LLM_BENCH_THRESHOLDS: repThresholds, LLM_BENCH_REQUESTS_FILE: requestsFile, LLM_BENCH_PERCENTILES: '50,99.9' });
    expect(r.code, r.out).toBe(0);
    const json = JSON.parse(readFileSync(join(repOut, 'speed-matrix.json'), 'utf8'));
    expect(validateResult(json).ok).toBe(true);
    const row = json.prefill[0];
    expect(row).toMatchObject({ contextLabel: '1K', status: 'valid', repeats: { count: 3, failed: 0 } });
    const rates: number[] = row.repeats.spread.promptTokensPerSecond.values;
    expect(rates).toHaveLength(3);
    // the row's figure is the median of the three
    expect(row.figures.promptTokensPerSecond).toBe([...rates].sort((a, b) => a - b)[1]);
    // (that each repeat is a cold prefill is checked against the simulator's truth in test/matrix/prefill-cold.e2e.test.ts)
    expect(rates.every((r) => r > 0)).toBe(true);
    const md = readFileSync(join(repOut, 'speed-matrix.md'), 'utf8');
    expect(md).toContain('Prompt tok/s by context length (median of 3 requests, each with a cold prompt).');
    expect(md).toMatch(/\| Prefill \| 1K \| 1 \| Valid \| [\d,.K]+ \| — \| [\d,.]+ ms \| — \| — \| 3 \| — \| — \| 0 \| — \| — \| — \| — \| — \| prompt tok\/s ±[\d.]+% · TTFT ±[\d.]+% \(3 runs\) \|/);

    // every request of the cell's three repeats, one line each: per repeat, its completed requests
    // and window tokens are what the cell counted, so their medians are the cell's figures
    const lines = readFileSync(requestsFile, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    const cell = json.cells[0];
    expect(new Set(lines.map((l) => l.run)).size).toBe(1);
    expect(lines.every((l) => l.kind === 'decode' && l.cell === '1K/2' && l.concurrency === 2 && typeof l.sentS === 'number')).toBe(true);
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[1];
    const perRepeat = [1, 2, 3].map((n) => lines.filter((l) => l.repeat === n));
    expect(perRepeat.every((x) => x.length >= 2)).toBe(true);
    expect(med(perRepeat.map((x) => x.filter((l) => l.completedInWindow).length))).toBe(cell.figures.completedRequests);
    expect(med(perRepeat.map((x) => x.reduce((a, l) => a + l.windowTokens, 0)))).toBe(cell.figures.outputTokens);
    // the chosen percentiles beside METHOD's quantiles, and as the page's latency columns
    expect(json.info.run.percentiles).toEqual([50, 99.9]);
    expect(Object.keys(cell.figures.ttftMs.percentiles)).toEqual(['p50', 'p99.9']);
    expect(cell.figures.interTokenLatencyMs.percentiles['p99.9']).toBeGreaterThanOrEqual(cell.figures.interTokenLatencyMs.median);
    expect(md).toContain('| TTFT p50 / p99.9 | TPOT p50 / p99.9 | ITL p50 / p99.9 | E2E latency p50 / p99.9 |');
  });

  test('a bad variable is an error naming it and an example', { timeout: 120_000 }, () => {
    const bad = runBench({ ...env, LLM_BENCH_CONCURRENCY: '1,four' });
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain('LLM_BENCH_CONCURRENCY: "four" is not a positive whole number; e.g. LLM_BENCH_CONCURRENCY=1,4,16');
    // a profile that is not there stops the run before it starts, naming the variable, not with the simulator's stack
    const profile = runBench({ ...env, LLM_BENCH_SIM_PROFILE: 'tinyy' });
    expect(profile.code).not.toBe(0);
    expect(profile.out).toContain('LLM_BENCH_SIM_PROFILE: "tinyy" is not a simulator profile (did you mean tiny?); use one of tiny, sglang-h200, vllm-arc-b65x4, bare');
    expect(profile.out).not.toMatch(/getSimProfile|profiles\.js:\d+/);
  });

  test('LLM_BENCH_CLIENT_THREADS=2 runs the cell\'s streams on two client threads, with the same result file', { timeout: 120_000 }, () => {
    const thOut = join(dir, 'threads');
    // no file at the threshold path: no budgets yet, which the run passes and says (a mistyped path shows there)
    const thThresholds = join(dir, 'threads-thresholds.json');
    const r = runBench({ ...env, LLM_BENCH_CONCURRENCY: '4', LLM_BENCH_CLIENT_THREADS: '2', LLM_BENCH_OUT: thOut, LLM_BENCH_THRESHOLDS: thThresholds });
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`[speed-matrix] ${thThresholds} does not exist: no budgets gate this run`);
    expect(existsSync(thThresholds)).toBe(false);
    const json = JSON.parse(readFileSync(join(thOut, 'speed-matrix.json'), 'utf8'));
    expect(validateResult(json).ok).toBe(true);
    const cell = json.cells[0];
    expect(cell.clientCpu.threads).toBe(2);
    expect(cell.figures.failedRequests).toBe(0);
    expect(cell.figures.outputTokens).toBeGreaterThan(0);
    // 4 workers' connections (2 per thread) and the scout's
    expect(cell.connections.opened).toBe(5);
    const bad = runBench({ ...env, LLM_BENCH_CLIENT_THREADS: 'many' });
    expect(bad.code).not.toBe(0);
    expect(bad.out).toContain('LLM_BENCH_CLIENT_THREADS: "many" must be an integer from 1 to 64, or auto');
  });
});
