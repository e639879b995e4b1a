/**
 * Distributed runs end to end: the matrix split into row-group files (project matrix-sharded) run
 * as two Vitest shards with the blob reporter, then `vitest --merge-reports` gives one
 * speed-matrix page and JSON of the same form as a one-machine run of the same matrix: same cells,
 * same prefill rows, same statuses' form, same capacity rows (an SLO is set), same page sections,
 * not partial; the job summary renders; and the compare CLI takes the merged page and the
 * one-machine page as two runs of one matrix (these were steps of .ci/run of their own).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { validateResult } from '../../src/results/validate.js';
import type { CellResult, SpeedMatrixResult } from '../../src/shapes/result.js';
import { runVitest } from '../compare/run-vitest.js';
import { runCompareCli } from '../../src/compare/cli.js';
import { statusBesideClientTiming } from '../helpers/client-limited.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-shard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// decode rows 0 and 1K go to row groups 1 and 2, the extra prefill rows 2K and 3K to groups 3 and 4,
// so each of the 4 row-group files has work whichever shard it lands in
const matrix = {
  LLM_BENCH_SIM_PROFILE: 'tiny',
  LLM_BENCH_CONTEXTS: '0,1K',
  LLM_BENCH_CONCURRENCY: '1',
  LLM_BENCH_PREFILL: '1K,2K,3K',
  LLM_BENCH_DURATION_S: '1',
  LLM_BENCH_MAX_TOKENS: '32',
  LLM_BENCH_THRESHOLDS: join(dir, 'thresholds.json'),
  // capacity rows too: each shard finds its own rows' capacities, and the merge must hold them all
  LLM_BENCH_SLO: 'perRequest>=50',
};

const read = (out: string): SpeedMatrixResult => JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
// the simulator listens on a fresh port each run: blank it
const headings = (out: string) =>
  readFileSync(join(out, 'speed-matrix.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('#'))
    .map((l) => l.replace(/127\.0\.0\.1:\d+/, '127.0.0.1:PORT'));
const form = (c: CellResult) => ({
  key: `${c.contextLabel}/${c.concurrency}`,
  status: typeof c.status,
  statuses: Array.isArray(c.statuses),
  figures: Object.keys(c.figures ?? {}).sort(),
});

describe('sharded run merged', () => {
  test('2 shards + merge = the one-machine page', { timeout: 300_000 }, async () => {
    const blobs = join(dir, 'blobs');
    for (const shard of ['1/2', '2/2']) {
      const r = runVitest(
        ['run', '--project', 'matrix-sharded', `--shard=${shard}`, '--reporter=blob', `--outputFile=${join(blobs, `blob-${shard.replace('/', '-')}.json`)}`],
        matrix,
      );
      expect(r.code, r.out).toBe(0);
    }
    expect(readdirSync(blobs).sort()).toEqual(['blob-1-2.json', 'blob-2-2.json']);

    const merged = join(dir, 'merged');
    const summary = join(dir, 'summary.md');
    const merge = runVitest([`--merge-reports=${blobs}`], { LLM_BENCH_OUT: merged, GITHUB_STEP_SUMMARY: summary });
    expect(merge.code, merge.out).toBe(0);
    // each shard measured part of the matrix: two of the four row-group files each
    expect(merge.out).toMatch(/Test Files\s+4 passed \(4\)/);
    // the merge replays finished cells: their lines say no time left, where the one-machine run's do (below)
    expect(merge.out).toMatch(/\[speed-matrix\] 0\/1: .* done/);
    expect(merge.out).not.toMatch(/ left( for the matrix cells)?\n/);

    const single = join(dir, 'single');
    const one = runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_OUT: single });
    expect(one.code, one.out).toBe(0);
    // (with an SLO the time left is the matrix cells', the capacity searches' coming after them)
    expect(one.out).toMatch(/ done · (under a minute|about \d+ min) left( for the matrix cells)?\n/);

    const a = read(single);
    const b = read(merged);
    expect(validateResult(b).ok).toBe(true);
    expect(b.partial).toBe(false);
    expect(b.info.plannedCells).toEqual(a.info.plannedCells);
    expect(b.info.plannedPrefill).toEqual(a.info.plannedPrefill);
    expect(b.info.plannedCells).toEqual(['0/1', '1K/1']);
    expect(b.cells.map(form)).toEqual(a.cells.map(form));
    // a cell the loaded runner made Client-limited by the client's timing is read by its other statuses (helpers/client-limited.ts, logged): this test is about the merge
    expect(b.cells.map((c) => statusBesideClientTiming(c, 'merge')).every((s) => s === 'valid')).toBe(true);
    expect(b.prefill.map((p) => [p.contextLabel, p.status])).toEqual(a.prefill.map((p) => [p.contextLabel, p.status]));
    expect(b.prefill.map((p) => p.contextLabel)).toEqual(['1K', '2K', '3K']);
    expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
    expect(headings(merged)).toEqual(headings(single));
    expect(b.capacity?.rows.map((r) => r.contextLabel)).toEqual(['0', '1K']);
    expect(b.capacity?.rows.map((r) => [r.contextLabel, r.capacity, r.atLeast])).toEqual(a.capacity?.rows.map((r) => [r.contextLabel, r.capacity, r.atLeast]));
    // the compare CLI takes them as two runs of one matrix: 0 or 1 (a regression between two runs
    // is data here), never 2 (files it cannot compare)
    const io = { out: () => {}, err: (t: string) => console.log(`[compare] ${t}`), env: {} };
    expect(await runCompareCli([join(single, 'speed-matrix.json'), join(merged, 'speed-matrix.json'), '--out', join(dir, 'diff.md')], io)).not.toBe(2);
    const diff = readFileSync(join(dir, 'diff.md'), 'utf8');
    // every cell and both capacity rows were compared (none missing)
    expect(diff).toMatch(/ · 0 missing\n/);
    expect(diff).toMatch(/## Capacity at the SLO[\s\S]*\n\| 0 \| [^\n]*\n\| 1K \| /);
    // a run against itself passes
    expect(await runCompareCli([join(single, 'speed-matrix.json'), join(single, 'speed-matrix.json'), '--out', join(dir, 'self.md')], io)).toBe(0);
    expect(readFileSync(join(merged, 'speed-matrix.md'), 'utf8')).not.toMatch(/Partial|Incomplete|Not run/);

    const md = readFileSync(summary, 'utf8');
    expect(md).toContain('## Speed matrix: sim-tiny');
    expect(md).toContain('2 of 2 cells');
    expect(md).toMatch(/\| 1K \| \*\*[\d.]+\*\* tok\/s · \d+ ms TTFT \|/);

    // a shard's blob left out (its job failed or was not downloaded): the page says Not run, the merge fails naming it
    const oneBlob = join(dir, 'one-blob');
    mkdirSync(oneBlob);
    copyFileSync(join(blobs, 'blob-1-2.json'), join(oneBlob, 'blob-1-2.json'));
    const partial = runVitest([`--merge-reports=${oneBlob}`], { LLM_BENCH_OUT: join(dir, 'merged-one') });
    expect(partial.code, partial.out).toBe(1);
    expect(partial.out).toMatch(/the merge lacks \d+ planned cells? or rows? that no blob in .*one-blob holds \(.*; the page shows them Not run\): blob-2-2\.json is not there\./);
    expect(read(join(dir, 'merged-one')).incomplete?.missing.length).toBeGreaterThan(0);

    // a stale blob of an earlier run beside this run's: a cell measured twice, no page
    const stale = join(dir, 'stale');
    mkdirSync(stale);
    for (const f of ['blob-1-2.json', 'blob-2-2.json']) copyFileSync(join(blobs, f), join(stale, f));
    copyFileSync(join(blobs, 'blob-1-2.json'), join(stale, 'blob-1-2-yesterday.json'));
    const twice = runVitest([`--merge-reports=${stale}`], { LLM_BENCH_OUT: join(dir, 'merged-stale') });
    expect(twice.code, twice.out).toBe(1);
    expect(twice.out).toMatch(/part of this run is in more than one blob in .*stale \(bench\/shards\/row-group-\d\.bench\.ts in blob-1-2-yesterday\.json and blob-1-2\.json.*\), so no page is written/);
    expect(read(join(dir, 'merged-stale')).partial).toBe(true);
  });

  test('shards filtered by -t merge into one page without a missing-blob failure; a shard whose files could not start is named', { timeout: 300_000 }, () => {
    // -t leaves out prefill 3K on whichever shard holds it: its test is in the blob, skipped
    const blobs = join(dir, 'filtered');
    for (const shard of ['1/2', '2/2']) {
      const r = runVitest(
        ['run', '--project', 'matrix-sharded', `--shard=${shard}`, '-t', 'decode|prefill [12]K', '--reporter=blob', `--outputFile=${join(blobs, `blob-${shard.replace('/', '-')}.json`)}`],
        matrix,
      );
      expect(r.code, r.out).toBe(0);
    }
    const merged = join(dir, 'merged-filtered');
    const merge = runVitest([`--merge-reports=${blobs}`], { LLM_BENCH_OUT: merged });
    expect(merge.code, merge.out).toBe(0);
    expect(merge.out).not.toMatch(/the merge lacks/);
    expect(read(merged).incomplete?.missing).toEqual(['prefill 3K']);

    // shard 2's files cannot reach their server: its blob is there, its files defined no cell
    const broken = join(dir, 'broken');
    mkdirSync(broken);
    copyFileSync(join(blobs, 'blob-1-2.json'), join(broken, 'blob-1-2.json'));
    const down = runVitest(
      ['run', '--project', 'matrix-sharded', '--shard=2/2', '-t', 'decode|prefill [12]K', '--reporter=blob', `--outputFile=${join(broken, 'blob-2-2.json')}`],
      { ...matrix, LLM_BENCH_URL: 'http://127.0.0.1:9/v1', LLM_BENCH_RETRY_S: '1' },
    );
    expect(down.code, down.out).toBe(1);
    const mergeBroken = runVitest([`--merge-reports=${broken}`], { LLM_BENCH_OUT: join(dir, 'merged-broken') });
    expect(mergeBroken.code, mergeBroken.out).toBe(1);
    expect(mergeBroken.out).toMatch(/the merge lacks \d+ planned cells? or rows? that no blob in .*broken holds .*: bench\/shards\/row-group-\d\.bench\.ts(, bench\/shards\/row-group-\d\.bench\.ts)? defined no cell \((its|their) setup failed; the shard's log says why\)/);
    expect(mergeBroken.out).not.toMatch(/is not there/);
  });
});
