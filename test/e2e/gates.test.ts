/**
 * Gates that gate (issue 15): a budgeted cell that turns Over capacity fails instead of being
 * skipped, and the threshold file's `tolerances.slack` and `tolerances.acceptStatuses` act on a
 * real run. Each case runs `npx vitest bench --run` on the tiny simulator, as a user does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runBench, TINY, withThresholds } from '../faults/helpers.js';

describe('gates', () => {
  test('a budgeted cell that no longer fits the KV cache fails, naming the capacity; an Over capacity cell without a budget is skipped as before', { timeout: 120_000 }, () => {
    // 2 × (1024 + 32) = 2,112 tokens > 2,000, and 3 × 1,056 too: one run, 1K/2 with a budget, 1K/3 without
    const t = withThresholds({ cells: { '1K/2': { status: 'valid' } }, prefill: {} });
    const r = runBench({ ...TINY, ...t.env, LLM_BENCH_CONTEXTS: '1K', LLM_BENCH_CONCURRENCY: '2,3', LLM_BENCH_SIM_OVERRIDES: '{"kvCapacityTokens":2000}' });
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/1K\/2 is Over capacity: 2 × 1,056 tokens a request \(its prompt and max output\) = 2,112 tokens > KV capacity 2,000, but its budget expects it to run/);
    expect(r.out).toMatch(/1K\/2 status over-capacity, expected valid/);
    // the cell's finding alone: no code frame or trace from our files under it
    expect(r.out).toContain('CellFailure: 1K/2 is Over capacity');
    expect(r.out).not.toMatch(/❯ .*(cell-test|errors)\.[jt]s:\d+/);
    // the one without a budget is skipped, as before: a skipped test, no failure names it, and the
    // page has it Over capacity
    expect(r.out).toMatch(/tests: 0 passed, 1 failed, 1 skipped \(decode 1K\/2\)/);
    expect(r.out).not.toMatch(/CellFailure: 1K\/3|1K\/3 status|1K\/3 is Over capacity/);
    const page = JSON.parse(readFileSync(join(t.dir, 'reports', 'speed-matrix.json'), 'utf8')) as { cells: Array<{ concurrency: number; status: string }> };
    expect(page.cells.map((c) => [c.concurrency, c.status])).toEqual([[2, 'over-capacity'], [3, 'over-capacity']]);
  });

  test('a row longer than the model fails as Not run at every concurrency, naming the max model length, not as Over capacity', { timeout: 120_000 }, () => {
    // the tiny sim: max model length 32,768, KV capacity 65,536; 40K/1 fits the KV cache, 40K/2 does not
    const t = withThresholds({ cells: {}, prefill: {} });
    const r = runBench({ ...TINY, ...t.env, LLM_BENCH_CONTEXTS: '0,40K', LLM_BENCH_CONCURRENCY: '1,2' });
    expect(r.code, r.out).toBe(1);
    for (const c of [1, 2]) {
      expect(r.out).toContain(`40K/${c} could not start: context 40960 + 32 output tokens exceeds the server's max model length 32768`);
    }
    expect(r.out).not.toMatch(/40K\/2[^\n]*[Oo]ver capacity/);
    const page = JSON.parse(readFileSync(join(t.dir, 'reports', 'speed-matrix.json'), 'utf8')) as { cells: Array<{ context: number; concurrency: number; status: string; notRunReason?: string }> };
    const status = (context: number, concurrency: number) => page.cells.find((c) => c.context === context && c.concurrency === concurrency)?.status;
    expect([status(40960, 1), status(40960, 2)]).toEqual(['not-run', 'not-run']);
    // the rows that fit are measured as before
    expect(status(0, 1)).not.toBe('not-run');
    expect(status(0, 2)).not.toBe('not-run');
  });

  test('a rate cell of a row longer than the model fails as Not run, naming the max model length', { timeout: 120_000 }, () => {
    const t = withThresholds({ cells: {}, prefill: {} });
    // LLM_BENCH_DEBUG=1 keeps the trace a failing cell otherwise leaves out
    const r = runBench({ ...TINY, ...t.env, LLM_BENCH_CONTEXTS: '40K', LLM_BENCH_CONCURRENCY: '1', LLM_BENCH_RATES: '1', LLM_BENCH_DEBUG: '1' });
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain("40K@1/s could not start: context 40960 + 32 output tokens exceeds the server's max model length 32768");
    expect(r.out).toMatch(/❯ .*rate-test\.[jt]s:\d+/);
    const page = JSON.parse(readFileSync(join(t.dir, 'reports', 'speed-matrix.json'), 'utf8')) as { rateCells?: Array<{ context: number; status: string }> };
    expect(page.rateCells?.map((c) => [c.context, c.status])).toEqual([[40960, 'not-run']]);
  });

  test('tolerances.slack widens a budget at evaluation (150 tok/s minimum with 50 % slack passes ~100 tok/s), and tolerances.acceptStatuses accepts a queued cell where the budget says valid', { timeout: 180_000 }, () => {
    // one matrix for both tolerances, run strict, then with both (two runs, not four): 0/1 runs at
    // about 100 tok/s against a 150 tok/s minimum; 0/4 puts 4 requests on a server that runs 2 at
    // a time (SGLang reports its running limit, so the readiness gate lets the 2 waiting requests be)
    const budget = { cells: { '0/1': { min: { totalTokensPerSecond: 150 } }, '0/4': { status: 'valid' } }, prefill: {} };
    const env = { ...TINY, LLM_BENCH_CONCURRENCY: '1,4', LLM_BENCH_SIM_OVERRIDES: '{"maxRunningRequests":2,"personality":"sglang"}' };
    const strict = runBench({ ...env, ...withThresholds(budget).env });
    expect(strict.code, strict.out).toBe(1);
    expect(strict.out).toMatch(/0\/1 totalTokensPerSecond [\d.]+ < min 150\.0/);
    expect(strict.out).toMatch(/0\/4 status requests-queued, expected valid/);
    const tolerant = runBench({ ...env, ...withThresholds({ ...budget, tolerances: { slack: 0.5, acceptStatuses: ['requests-queued'] } }).env });
    // both cells pass with both tolerances (slack widens only figures' budgets, acceptStatuses only
    // statuses: tested one by one on recorded cells in test/judge/thresholds.test.ts and judge-cell.test.ts)
    expect(tolerant.code, tolerant.out).toBe(0);
  });
});

describe('the readiness gate at a running limit the server does not report', () => {
  test('vLLM without /server_info, 16 requests on 8 running slots and long outputs: the gate opens at the limit, not at its timeout', { timeout: 120_000 }, () => {
    // the tiny profile is vLLM-shaped: no max_num_seqs is reported, so the gate learns the limit
    // from the metrics (8 running, all decoding; 8 waiting). 2,000 output tokens at 10 ms a step:
    // the queued 8 would get no token for 20 s, and METHOD's gate would also wait for an empty
    // queue, which never comes: it would time out after 60 s
    const t = withThresholds({ cells: {}, prefill: {} });
    const r = runBench({ ...TINY, ...t.env, LLM_BENCH_CONTEXTS: '0', LLM_BENCH_CONCURRENCY: '16', LLM_BENCH_MAX_TOKENS: '2000', LLM_BENCH_DURATION_S: '2', LLM_BENCH_QUIET: '0' });
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('0/16: the server runs 8 of the 16 requests and queues 8: at its running limit, opening the window');
    expect(r.out).not.toContain('readiness gate timed out');
    const page = JSON.parse(readFileSync(join(t.dir, 'reports', 'speed-matrix.json'), 'utf8')) as { info: { server: { maxRunningRequests?: unknown } }; cells: Array<{ concurrency: number; statuses: string[] }> };
    expect(page.info.server.maxRunningRequests).toBeUndefined();
    expect(page.cells.find((c) => c.concurrency === 16)?.statuses).toEqual(['requests-queued']);
  });
});
