/**
 * Faults as a user meets them (issue 14): `npx vitest bench --run` against the embedded simulator
 * (tiny profile, a small matrix), with what goes wrong in a user's hands, and the outcome checked
 * as the user sees it: the exit code, the one line that says what happened, the page. Every run has
 * a time limit and must end by itself well within it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cleanEnv, root, runBench, TINY, vitestArgv } from './helpers.js';

/** the error line and what follows it: no code frame (`❯ file:line`) and no stack (`at …`) */
function expectOneCleanLine(out: string, error: RegExp): void {
  const lines = out.split('\n');
  const at = lines.findIndex((l) => error.test(l));
  expect(at, out).toBeGreaterThanOrEqual(0);
  const after = lines.slice(at + 1, at + 6).join('\n');
  expect(after).not.toMatch(/❯ \S+:\d+|^\s+at \S/m);
}

describe('the results folder', () => {
  for (const dir of ['/proc/forbidden', '/sys/forbidden']) {
    test(`LLM_BENCH_OUT=${dir}: a ConfigError naming LLM_BENCH_OUT before anything is measured, not a hang or a lost run`, { timeout: 120_000 }, () => {
      const r = runBench({ ...TINY, LLM_BENCH_OUT: dir }, 60);
      expect(r.timedOut, r.out).toBe(false);
      expect(r.code).not.toBe(0);
      expectOneCleanLine(r.out, /ConfigError: results cannot be written to .*forbidden.*set LLM_BENCH_OUT to a folder you can write/);
      // nothing was measured, nor the server reached: the folder is checked before any of it
      expect(r.out).not.toMatch(/window open|warm-up request|\[speed-matrix\] 0\/2/);
    });
  }
});

describe('expected errors', () => {
  test('a bad variable: one clean line; LLM_BENCH_DEBUG=1 keeps the stack', { timeout: 120_000 }, () => {
    const bad = runBench({ ...TINY, LLM_BENCH_CONCURRENCY: 'two', LLM_BENCH_OUT: mkdtempSync(join(tmpdir(), 'lsm-f-')) }, 60);
    expect(bad.code).not.toBe(0);
    expectOneCleanLine(bad.out, /ConfigError: LLM_BENCH_CONCURRENCY/);
    const debug = runBench({ ...TINY, LLM_BENCH_CONCURRENCY: 'two', LLM_BENCH_DEBUG: '1', LLM_BENCH_OUT: mkdtempSync(join(tmpdir(), 'lsm-f-')) }, 60);
    expect(debug.code).not.toBe(0);
    expect(debug.out).toMatch(/ConfigError: LLM_BENCH_CONCURRENCY[^\n]*\n[\s\S]*(❯ \S+:\d+|at \S+)/);
  });

  test('a misspelt variable stops the run naming the nearest one, before anything is measured; an earlier page in the folder is set aside, not left to pass for this run\'s', { timeout: 120_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-f-'));
    // an earlier run's page (issue 60: it used to stay, unmarked)
    writeFileSync(join(out, 'speed-matrix.json'), JSON.stringify({ info: { startedAt: '2026-12-01T10:00:00.000Z' } }));
    writeFileSync(join(out, 'speed-matrix.md'), '# an earlier run');
    writeFileSync(join(out, 'speed-matrix.html'), '<html>an earlier run</html>');
    const typo = runBench({ ...TINY, LLM_BENCH_CONCURENCY: '4', LLM_BENCH_OUT: out }, 60);
    expect(typo.code, typo.out).not.toBe(0);
    expect(typo.out).toMatch(/unknown LLM_BENCH_\* variable[^\n]*\n\s+- LLM_BENCH_CONCURENCY: did you mean LLM_BENCH_CONCURRENCY\?/);
    expect(typo.out).not.toMatch(/window open/);
    expect(typo.out).toContain(`this run measured nothing (its error above says why), so the page in ${out}, an earlier run's (started 2026-12-01T10:00:00.000Z), is now speed-matrix.previous.json, speed-matrix.previous.md, speed-matrix.previous.html`);
    expect(readdirSync(out).filter((f) => f.startsWith('speed-matrix')).sort()).toEqual(['speed-matrix.previous.html', 'speed-matrix.previous.json', 'speed-matrix.previous.md']);
    expect(readFileSync(join(out, 'speed-matrix.previous.md'), 'utf8')).toBe('# an earlier run');
    // the partial run LLM_BENCH_RESUME continues is left where it is: the user runs it again
    writeFileSync(join(out, 'speed-matrix.json'), JSON.stringify({ info: { startedAt: '2026-12-02T10:00:00.000Z' } }));
    const resumed = runBench({ ...TINY, LLM_BENCH_CONCURENCY: '4', LLM_BENCH_OUT: out, LLM_BENCH_RESUME: join(out, 'speed-matrix.json') }, 60);
    expect(resumed.code, resumed.out).not.toBe(0);
    expect(resumed.out).not.toContain('this run measured nothing');
    expect(existsSync(join(out, 'speed-matrix.json'))).toBe(true);
    // and so is the baseline the run compares with
    const gated = runBench({ ...TINY, LLM_BENCH_CONCURENCY: '4', LLM_BENCH_OUT: out, LLM_BENCH_BASELINE: join(out, 'speed-matrix.json') }, 60);
    expect(gated.code, gated.out).not.toBe(0);
    expect(gated.out).not.toContain('this run measured nothing');
    expect(existsSync(join(out, 'speed-matrix.json'))).toBe(true);
  });

  test('capacity budgets without an SLO: refused before any cell, naming the SLO the file was written at', { timeout: 120_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-f-'));
    const file = join(out, 'thresholds.json');
    writeFileSync(file, JSON.stringify({ cells: {}, prefill: {}, slo: 'perRequest>=50', capacity: { '0': { min: 1 } } }));
    const r = runBench({ ...TINY, LLM_BENCH_THRESHOLDS: file, LLM_BENCH_OUT: out }, 60);
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toMatch(/capacity budgets \(0\) need an SLO to measure capacity against; set the one they were measured at, LLM_BENCH_SLO="perRequest>=50" or the suite's slo/);
    expect(r.out).not.toMatch(/window open/);
  });

  test('a password in LLM_BENCH_URL never reaches the console or the files', { timeout: 120_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-f-'));
    // LLM_BENCH_RETRY_S=1: it gives up on the unreachable server after a second, not 30
    const r = runBench({ ...TINY, LLM_BENCH_URL: 'http://user:sk-secret-123@127.0.0.1:1', LLM_BENCH_OUT: out, LLM_BENCH_RETRY_S: '1' }, 60);
    expect(r.out).toMatch(/the server is not answering \(.*\); trying again in/);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/ProbeError: probe of http:\/\/<redacted>@127\.0\.0\.1:1/);
    expect(r.out).not.toContain('sk-secret-123');
    expectOneCleanLine(r.out, /ProbeError/);
    let files = '';
    for (const f of ['speed-matrix.json', 'speed-matrix.md']) {
      try {
        files += readFileSync(join(out, f), 'utf8');
      } catch {
        // not written: nothing to leak
      }
    }
    expect(files).not.toContain('sk-secret-123');
  });
});

describe('a test name filter (-t) that matches no cell', () => {
  test('fails naming the filter and how the names look; a matching one runs its cell with no line for the others', { timeout: 120_000 }, () => {
    const run = (filter: string, env: Record<string, string> = {}) => {
      const out = mkdtempSync(join(tmpdir(), 'lsm-filter-'));
      const r = spawnSync(...vitestArgv(['bench', '--run', '-t', filter]), {
        cwd: root,
        env: { ...cleanEnv(), NO_COLOR: '1', ...TINY, LLM_BENCH_CONTEXTS: '0,1K', LLM_BENCH_OUT: out, ...env },
        encoding: 'utf8',
        timeout: 90_000,
      });
      return { code: r.status, out: `${r.stdout}\n${r.stderr}`, dir: out };
    };
    const none = run('1k/2');
    expect(none.code, none.out).toBe(1);
    expect(none.out).toMatch(/no cell ran: the test name filter \(-t \/1k\\\/2\/\) matched none of the matrix's 2 tests, so nothing was measured or written\. Their names look like "decode 0\/2", "decode 1K\/2"/);
    expect(none.out).not.toContain('window open');
    const one = run('1K/2');
    expect(one.code, one.out).toBe(0);
    expect(one.out).toContain('1K/2: window open');
    expect(one.out).not.toContain('0/2: ');
    // quiet: the reporter's own line for the cell that runs, none for the others
    const quiet = run('1K/2', { LLM_BENCH_QUIET: '1' });
    expect(quiet.code, quiet.out).toBe(0);
    expect(quiet.out).toContain('running decode 1K/2');
    expect(quiet.out).not.toContain('running decode 0/2');
    expect(quiet.out).not.toContain('window open');
    expect(existsSync(join(one.dir, 'speed-matrix.json'))).toBe(true);
    // a filter that matches only a sweep's points: they run and skip themselves (their decode cells were left out); said so, not "matched none"
    const sweep = run('sweep', { LLM_BENCH_CONTEXTS: '1K', LLM_BENCH_CONCURRENCY: '1,2', LLM_BENCH_RATES: 'sweep:2' });
    expect(sweep.code, sweep.out).toBe(1);
    expect(sweep.out).toMatch(/no cell ran: the test name filter \(-t \/sweep\/\) matched 2 of the matrix's 4 tests \("rate 1K sweep 1\/2", "rate 1K sweep 2\/2"\), and each skipped itself, so nothing was measured or written: 1K: .*filtered with -t\?\)/);
    expect(sweep.out).not.toContain('matched none');
  });
});

describe('a served model id carrying Markdown and HTML', () => {
  test('comes out escaped on the page and in the job summary', { timeout: 120_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-f-'));
    const summary = join(out, 'summary.md');
    const evil = 'x</td><script>alert(1)</script>|**b**\n<img src=x onerror=alert(3)>';
    const r = runBench({ ...TINY, LLM_BENCH_OUT: out, GITHUB_STEP_SUMMARY: summary, LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ modelId: evil }) }, 90);
    expect(r.code, r.out).toBe(0);
    for (const file of [join(out, 'speed-matrix.md'), summary]) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/<script|<img|<\/td>/);
      expect(text).toContain('x&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;\\|\\*\\*b\\*\\* &lt;img');
      expect(text.split('\n').some((l) => l.startsWith('<img'))).toBe(false);
    }
    // this repository has no thresholds/sim-tiny.json: the job summary and the log say the gate was off
    expect(readFileSync(summary, 'utf8')).toContain('### No threshold gate\n\nNo threshold file at `thresholds/sim-tiny.json`: no budgets gated this run.');
    expect(r.out).toContain('[speed-matrix] no threshold file at thresholds/sim-tiny.json: no budgets gated this run');
  });
});

describe('the results folder belongs to one run', () => {
  test('a second run into the same folder fails at once, naming the first; the first finishes and keeps its page', { timeout: 180_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-two-'));
    const env = { ...cleanEnv(), NO_COLOR: '1', ...TINY, LLM_BENCH_DURATION_S: '3', LLM_BENCH_OUT: out };
    const first = spawn(...vitestArgv(['bench', '--run']), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let firstOut = '';
    first.stdout!.on('data', (d: Buffer) => (firstOut += d.toString()));
    first.stderr!.on('data', (d: Buffer) => (firstOut += d.toString()));
    const firstDone = new Promise<number | null>((resolve) => first.on('close', resolve));
    const killer = setTimeout(() => first.kill('SIGKILL'), 150_000);
    try {
      // the first run holds the folder once its reporter has started
      for (let i = 0; i < 600 && !existsSync(join(out, '.speed-matrix.lock')); i++) await new Promise((r) => setTimeout(r, 100));
      expect(existsSync(join(out, '.speed-matrix.lock')), firstOut).toBe(true);
      const second = runBench({ ...TINY, LLM_BENCH_OUT: out }, 60);
      expect(second.code).not.toBe(0);
      expect(second.out).toMatch(/another run is writing into .*: pid \d+ on .*, started \d{4}-\d\d-\d\dT/);
      expect(second.out).not.toMatch(/window open/);
      expect(await firstDone, firstOut).toBe(0);
    } finally {
      clearTimeout(killer);
    }
    const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as { partial?: boolean; cells: unknown[] };
    expect(result.partial).toBeFalsy();
    expect(result.cells.length).toBe(1);
    // released at exit: the folder is free for the next run
    expect(existsSync(join(out, '.speed-matrix.lock'))).toBe(false);
  });
});

/** a 64 KiB tmpfs (root only; elsewhere the test says why it is skipped) */
function smallDisk(): { dir?: string; why?: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-full-'));
  if (process.getuid?.() !== 0) return { why: 'mounting a small tmpfs needs root (the write layer is unit-tested in test/results/lock.test.ts)' };
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) return { why: `mount -t tmpfs failed here (${(r.stderr || r.error?.message || '').trim()}); the write layer is unit-tested in test/results/lock.test.ts` };
  return { dir };
}

describe('a full disk', () => {
  const disk = smallDisk();
  if (disk.why) console.warn(`[skip] the full-disk test: ${disk.why}`);
  test.skipIf(disk.dir === undefined)('ENOSPC: the run ends failing, names the file and the cause once, and says what the files left miss', { timeout: 120_000 }, () => {
    const out = disk.dir!;
    try {
      mkdirSync(join(out, 'r'));
      const r = runBench({ ...TINY, LLM_BENCH_CONCURRENCY: '1,2', LLM_BENCH_OUT: join(out, 'r') }, 90);
      expect(r.code, r.out).not.toBe(0);
      expect(r.out).toMatch(new RegExp(`could not write ${join(out, 'r').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/speed-matrix\\.(json|md|html) \\(ENOSPC: the disk is full\\)`));
      expect(r.out.match(/could not write results:/g)?.length).toBe(1);
      expect(r.out).toMatch(/the run ended but its final results could not be written .*missing from them: /);
      // whatever is left is whole (written atomically), never a torn file
      for (const f of readdirSync(join(out, 'r')).filter((n) => n.endsWith('.json') && !n.startsWith('.'))) {
        expect(() => JSON.parse(readFileSync(join(out, 'r', f), 'utf8'))).not.toThrow();
      }
      expect(readdirSync(join(out, 'r')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    } finally {
      spawnSync('umount', [out]);
    }
  });
});

