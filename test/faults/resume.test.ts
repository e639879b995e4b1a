/**
 * LLM_BENCH_RESUME (issue 15): a run stopped part-way continues from its partial JSON: the finished
 * cells and rows are kept as they were, the rest are measured, and the page has every planned cell,
 * as one uninterrupted run would. A partial run of another matrix is refused, naming the difference.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { cleanEnv, root, runBench, TINY, vitestArgv } from './helpers.js';

const ENV = { ...TINY, LLM_BENCH_CONTEXTS: '0,1K', LLM_BENCH_CONCURRENCY: '1,2', LLM_BENCH_PREFILL: '1K', LLM_BENCH_DURATION_S: '1', LLM_BENCH_MAX_TOKENS: '24' };
const PLANNED = ['0/1', '0/2', '1K/1', '1K/2'];
const keys = (r: SpeedMatrixResult) => r.cells.map((c) => `${c.contextLabel}/${c.concurrency}`);
const read = (dir: string) => JSON.parse(readFileSync(join(dir, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;

/** the bench, stopped with SIGTERM once two cells are done */
async function stoppedAfterTwoCells(out: string): Promise<void> {
  const child = spawn(...vitestArgv(['bench', '--run']), { cwd: root, env: { ...cleanEnv(), NO_COLOR: '1', ...ENV, LLM_BENCH_OUT: out }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  let sent = false;
  const onData = (d: Buffer): void => {
    log += d.toString();
    if (!sent && /2\/4 done/.test(log)) {
      sent = true;
      process.kill(-child.pid!, 'SIGTERM');
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
    child.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  expect(sent, log).toBe(true);
}

describe('LLM_BENCH_RESUME', () => {
  test('a run stopped after two cells continues: those are kept, the rest measured, every planned cell on the page', { timeout: 240_000 }, async () => {
    const first = mkdtempSync(join(tmpdir(), 'lsm-res-'));
    await stoppedAfterTwoCells(first);
    const partial = read(first);
    expect(partial.partial).toBe(true);
    const done = keys(partial);
    expect(done.length).toBeGreaterThanOrEqual(2);
    expect(done.length).toBeLessThan(4);

    const second = mkdtempSync(join(tmpdir(), 'lsm-res-'));
    const r = runBench({ ...ENV, LLM_BENCH_OUT: second, LLM_BENCH_RESUME: join(first, 'speed-matrix.json') }, 120);
    expect(r.code, r.out).toBe(0);
    const resumed = read(second);
    expect(resumed.partial).toBe(false);
    expect(keys(resumed)).toEqual(PLANNED);
    expect(resumed.incomplete).toBeUndefined();
    expect(resumed.info.resumedFrom).toEqual({ path: join(first, 'speed-matrix.json'), startedAt: partial.info.startedAt });
    for (const cell of resumed.cells) {
      const before = partial.cells.find((c) => c.contextLabel === cell.contextLabel && c.concurrency === cell.concurrency);
      if (before) {
        // kept as it was, not measured again
        expect(cell.resumed).toBe(true);
        expect(cell.figures).toEqual(before.figures);
        expect(cell.finishedAt).toBe(before.finishedAt);
      } else {
        expect(cell.resumed).toBeUndefined();
        expect(cell.status).toBe('valid');
      }
    }
    expect(resumed.prefill.map((p) => p.contextLabel)).toEqual(['1K']);
    expect(readFileSync(join(second, 'speed-matrix.md'), 'utf8')).toMatch(/- \*\*Resumed from\*\*: .*cells and rows kept/);
  });

  test('a partial run of another matrix is refused, naming the difference', { timeout: 120_000 }, async () => {
    const { writeFileSync } = await import('node:fs');
    const first = mkdtempSync(join(tmpdir(), 'lsm-res-'));
    const one = runBench({ ...ENV, LLM_BENCH_CONTEXTS: '0', LLM_BENCH_CONCURRENCY: '1', LLM_BENCH_PREFILL: 'none', LLM_BENCH_OUT: first }, 90);
    expect(one.code, one.out).toBe(0);
    const path = join(first, 'speed-matrix.json');
    writeFileSync(path, JSON.stringify({ ...read(first), partial: true }));
    const r = runBench({ ...ENV, LLM_BENCH_CONTEXTS: '0', LLM_BENCH_CONCURRENCY: '1', LLM_BENCH_PREFILL: 'none', LLM_BENCH_MAX_TOKENS: '32', LLM_BENCH_OUT: mkdtempSync(join(tmpdir(), 'lsm-res-')), LLM_BENCH_RESUME: path }, 90);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/ConfigError: LLM_BENCH_RESUME: .* measured something else, so this run cannot continue it:/);
    expect(r.out).toMatch(/maxOutputTokens: the partial run 24, this run 32/);
  });
});
