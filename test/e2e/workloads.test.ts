/**
 * Workloads end to end (issue 23), as a user runs them: `npx vitest bench --run` with
 * LLM_BENCH_WORKLOAD against the embedded simulator (tiny profile), then the threshold gate, the
 * compare command and a sharded run merged.
 *
 * 1. A sharedPrefix run (4 groups, P = 1024, S = 256) with -u: the JSON validates and names its
 *    workload (info.run.workload), its one row is the nominal context P + S = 1280, every measured
 *    cell has its workload figures (input P + S, output = LLM_BENCH_MAX_TOKENS, the prefix-cache
 *    hit rate from the server's counters, near P / (P + S)); the page has the Run line and the
 *    Workload section; the threshold file -u wrote names the workload and budgets each cell.
 * 2. The same workload against that file passes, run as two Vitest shards of the row-group files
 *    and merged: the same cells, workload figures and page sections as the one-machine run. A
 *    non-synthetic workload has ONE row, so one row-group file measures it and the other three are
 *    empty wherever they land: what this shows is that empty groups and the merge keep the
 *    workload (its info, its figures, its page), and each shard gates. (The gated rerun was a
 *    one-machine run of its own: the shards are that rerun now, one live run fewer.)
 * 3. A synthetic run against that file is refused before any cell, naming both workloads.
 * 4. `llm-speed-matrix compare` of a synthetic run of the same matrix and the workload run refuses,
 *    naming the workload difference; two runs of the workload compare.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { validateResult } from '../../src/results/validate.js';
import type { CellResult, SpeedMatrixResult } from '../../src/shapes/result.js';
import { root, runVitest } from '../compare/run-vitest.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-workloads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const P = 1024;
const S = 256;
const MAX_TOKENS = 16;
const WORKLOAD = `sharedPrefix:groups=4,prefix=${P},suffix=${S}`;
const TEXT = `${WORKLOAD},seed=1`;
const thresholds = join(dir, 'thresholds.json');
const matrix = {
  LLM_BENCH_SIM_PROFILE: 'tiny',
  LLM_BENCH_CONCURRENCY: '1,2',
  LLM_BENCH_DURATION_S: '2',
  LLM_BENCH_MAX_TOKENS: String(MAX_TOKENS),
};
const workloadRun = { ...matrix, LLM_BENCH_WORKLOAD: WORKLOAD, LLM_BENCH_THRESHOLDS: thresholds };

function read(out: string): SpeedMatrixResult {
  const json = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
  const valid = validateResult(json);
  expect(valid.ok, JSON.stringify(valid)).toBe(true);
  return json as SpeedMatrixResult;
}
const page = (out: string) => readFileSync(join(out, 'speed-matrix.md'), 'utf8');

/**
 * A cell's status, where 1280/2 reading Requests queued from the closed loop's turnover counts as
 * Valid. The tiny sim (8 slots) never queues 2 requests, but a 2 s window holds two metrics
 * samples, and a sample that lands between a request's end and its successor's admission (a few
 * ms of each 16-token request, longer when the client is slow to see the end) reads a stream short.
 * One such sample passes (judge/status.ts queuedRunningBound: one request short in one sample); two,
 * or one catching both streams (they turn over together: no EOS, 16 tokens each), read Requests
 * queued by METHOD.md's rule, as a clean-clone CI run had it (2026-12-07; here 1 sample of 12 read
 * one short under load). A 30 s window's 30 samples absorb it. So only there, and only with the
 * server's waiting gauge at 0 throughout (it never queued).
 */
const statusOf = (c: CellResult): string =>
  c.status === 'requests-queued' && c.concurrency === 2 && c.evidence.queued?.maxWaiting === 0 ? 'valid' : c.status;

/** what a sharded+merged run must reproduce of a cell: key, status, figures' and workload figures' form */
const form = (c: CellResult) => ({
  key: `${c.contextLabel}/${c.concurrency}`,
  status: statusOf(c),
  figures: Object.keys(c.figures ?? {}).sort(),
  workload: Object.keys(c.workload ?? {}).sort(),
  input: c.workload?.inputTokens?.mean,
  output: c.workload?.outputTokens?.mean,
  cacheSource: c.workload?.prefixCache?.source,
});
// the simulator listens on a fresh port each run: blank it
const headings = (out: string) =>
  page(out)
    .split('\n')
    .filter((l) => l.startsWith('#'))
    .map((l) => l.replace(/127\.0\.0\.1:\d+/, '127.0.0.1:PORT'));

const outs = { updated: join(dir, 'updated'), merged: join(dir, 'merged'), synthetic: join(dir, 'synthetic') };

describe(`a ${WORKLOAD} run end to end`, () => {
  test('-u: the JSON and the page name the workload, each cell has its figures, the threshold file its workload and budgets', { timeout: 120_000 }, () => {
    // the gate accepts the lockstep turnover's Requests queued (statusOf), as a user's file may
    writeFileSync(thresholds, JSON.stringify({ tolerances: { acceptStatuses: ['requests-queued'] }, cells: {}, prefill: {} }));
    // a wide headroom (as test/e2e/matrix-run.test.ts) so the gated rerun is not failed by a 2-core machine's TTFT jitter
    const r = runVitest(['bench', '--run', '-u'], { ...workloadRun, LLM_BENCH_HEADROOM: '0.9', LLM_BENCH_OUT: outs.updated });
    expect(r.code, r.out).toBe(0);
    const json = read(outs.updated);
    expect(json.info.run.workload).toEqual({ kind: 'sharedPrefix', text: TEXT });
    // one row, the nominal context P + S; no prefill rows unless asked for by name
    expect(json.info.run.contexts).toEqual([P + S]);
    expect(json.info.plannedCells).toEqual([`${P + S}/1`, `${P + S}/2`]);
    expect(json.prefill).toEqual([]);
    expect(json.cells.map((c) => [c.context, c.contextLabel, c.concurrency, statusOf(c)]), JSON.stringify(json.cells.map((c) => c.evidence))).toEqual([
      [P + S, '1280', 1, 'valid'],
      [P + S, '1280', 2, 'valid'],
    ]);
    for (const c of json.cells) {
      const w = c.workload!;
      expect(w, `${c.contextLabel}/${c.concurrency}`).toBeDefined();
      // sized with the server's tokenize endpoint: every prompt is P + S (the sim counts as it tokenizes)
      expect(w.inputTokens!.requests).toBeGreaterThan(5);
      expect(Math.abs(w.inputTokens!.mean - (P + S))).toBeLessThanOrEqual(4);
      expect(w.inputTokens!.max - w.inputTokens!.min).toBeLessThanOrEqual(8);
      // no EOS in the tiny profile's requests here: every completed request streamed max_tokens
      expect(w.outputTokens).toMatchObject({ mean: MAX_TOKENS, min: MAX_TOKENS, max: MAX_TOKENS });
      expect(w.outputTokens!.requests).toBeGreaterThan(5);
      // the prefixes were warmed by the scouts: the hit rate is the prefix's share, less the
      // block the prefix ends in (the sim caches whole 16-token blocks)
      expect(w.prefixCache!.source).toBe('server-counters');
      expect(w.prefixCache!.hitRate).toBeGreaterThan(P / (P + S) - 0.04);
      expect(w.prefixCache!.hitRate).toBeLessThanOrEqual(P / (P + S) + 0.005);
      expect(w.prefixCache!.hitTokens).toBeLessThanOrEqual(w.prefixCache!.queriedTokens);
      expect(w.turns).toBeUndefined();
    }
    const md = page(outs.updated);
    expect(md).toContain(`- **Workload**: ${TEXT}`);
    expect(md).toContain('### Workload');
    expect(md).toMatch(/\| 1280\/1 \| \d+ \| 1,280 \(1,280 \/ 1,280, 1,2\d\d–1,2\d\d\) \| 16 \(16 \/ 16\) \| 7\d\.\d % \([\d,]+ of [\d,]+ tokens\) \|/);
    expect(md).toContain('| Context | 1 | 2 |');
    expect(md).toMatch(/\| 1280 \| \*\*[\d.,]+\*\* tok\/s/);
    // -u wrote the workload and a budget for each cell
    const file = JSON.parse(readFileSync(thresholds, 'utf8'));
    expect(file.workload).toBe(TEXT);
    expect(Object.keys(file.cells).sort()).toEqual(['1280/1', '1280/2']);
    expect(file.cells['1280/1'].min.totalTokensPerSecond).toBeGreaterThan(0);
  });

  test('the same workload against that file passes, as two shards of the row-group files merged: the same cells, workload figures and page as one machine', { timeout: 120_000 }, () => {
    const blobs = join(dir, 'blobs');
    // gated by the file -u wrote (workloadRun's LLM_BENCH_THRESHOLDS): each shard passes its budgets
    for (const shard of ['1/2', '2/2']) {
      const r = runVitest(
        ['run', '--project', 'matrix-sharded', `--shard=${shard}`, '--reporter=blob', `--outputFile=${join(blobs, `blob-${shard.replace('/', '-')}.json`)}`],
        workloadRun,
      );
      expect(r.code, r.out).toBe(0);
    }
    const merged = outs.merged;
    const merge = runVitest([`--merge-reports=${blobs}`], { LLM_BENCH_OUT: merged });
    expect(merge.code, merge.out).toBe(0);
    // one row: one row-group file measured it, the other three had no rows
    expect(merge.out).toMatch(/Test Files\s+1 passed \| 3 skipped \(4\)/);

    const one = read(outs.updated);
    const both = read(merged);
    expect(both.cells.map(statusOf)).toEqual(['valid', 'valid']);
    expect(both.partial).toBe(false);
    expect(both.info.run.workload).toEqual(one.info.run.workload);
    expect(both.info.plannedCells).toEqual(one.info.plannedCells);
    expect(both.cells.map(form)).toEqual(one.cells.map(form));
    expect(both.cells.every((c) => c.workload?.prefixCache !== undefined)).toBe(true);
    expect(headings(merged)).toEqual(headings(outs.updated));
    expect(page(merged)).toContain(`- **Workload**: ${TEXT}`);
    expect(page(merged)).not.toMatch(/Partial|Incomplete|Not run/);
  });

  test('a synthetic run against that file is refused naming both workloads', { timeout: 120_000 }, () => {
    // with progress lines (LLM_BENCH_QUIET=0), so the log would show a cell that ran
    const synthetic = runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_QUIET: '0', LLM_BENCH_CONTEXTS: String(P + S), LLM_BENCH_THRESHOLDS: thresholds, LLM_BENCH_OUT: join(dir, 'refused') });
    expect(synthetic.code, synthetic.out).not.toBe(0);
    expect(synthetic.out).toContain(`${thresholds}: its budgets were measured with the workload ${TEXT}, this run's is synthetic`);
    // refused before any cell ran
    expect(synthetic.out).not.toMatch(/scout request|running (decode )?\d+\/\d+|\d+\/\d+ valid/);
  });

  test('compare: a synthetic run of the same matrix and the workload run are refused, naming the workload', { timeout: 120_000 }, () => {
    const empty = join(dir, 'synthetic-thresholds.json');
    writeFileSync(empty, JSON.stringify({ cells: {}, prefill: {} }));
    // the workload run's matrix: its one row, its columns, no prefill rows (a synthetic run's default has some)
    const r = runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_CONTEXTS: String(P + S), LLM_BENCH_PREFILL: 'none', LLM_BENCH_THRESHOLDS: empty, LLM_BENCH_OUT: outs.synthetic });
    expect(r.code, r.out).toBe(0);
    const synthetic = read(outs.synthetic);
    expect(synthetic.info.run.workload ?? { kind: 'synthetic' }).toMatchObject({ kind: 'synthetic' });
    expect(synthetic.cells.map((c) => `${c.contextLabel}/${c.concurrency}`)).toEqual(['1280/1', '1280/2']);
    expect(synthetic.cells.every((c) => c.workload === undefined)).toBe(true);

    const compare = (a: string, b: string) =>
      spawnSync(process.execPath, [join(root, 'bin', 'llm-speed-matrix.mjs'), 'compare', join(a, 'speed-matrix.json'), join(b, 'speed-matrix.json'), '--out', join(dir, 'diff.md')], {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
      });
    const refused = compare(outs.synthetic, outs.updated);
    expect(refused.status, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('are runs of different matrices, so their cells cannot be compared');
    // the same cells, the same settings: the workload is the one difference
    expect(refused.stderr).toMatch(new RegExp(`compared:\\n  workload: baseline synthetic, new ${TEXT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\nRun the new matrix`));
    expect(refused.stderr).toContain('LLM_BENCH_WORKLOAD');
    // two runs of the workload compare (the one-machine -u run and the sharded, merged one)
    const same = compare(outs.updated, outs.merged);
    expect(same.status === 0 || same.status === 1, same.stderr).toBe(true);
    expect(same.stdout).toMatch(/(PASS|FAIL): \d+ regressed/);
  });
});
