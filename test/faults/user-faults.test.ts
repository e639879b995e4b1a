/**
 * Faults as a user meets them (issue 14): `npx vitest bench --run` against the embedded simulator
 * (tiny profile, a small matrix), with what goes wrong in a user's hands, and the outcome checked
 * as the user sees it: the exit code, the one line that says what happened, the page. Every run has
 * a time limit and must end by itself well within it.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runBench, TINY } from './helpers.js';

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
      // nothing was measured: no cell started
      expect(r.out).not.toMatch(/window open|\[speed-matrix\] 0\/2/);
      // the check itself is quick (Vitest's own start-up is most of the run)
      expect(r.seconds).toBeLessThan(30);
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

  test('a misspelt variable stops the run naming the nearest one, before anything is measured', { timeout: 120_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-f-'));
    const typo = runBench({ ...TINY, LLM_BENCH_CONCURENCY: '4', LLM_BENCH_OUT: out }, 60);
    expect(typo.code, typo.out).not.toBe(0);
    expect(typo.out).toMatch(/unknown LLM_BENCH_\* variable[^\n]*\n\s+- LLM_BENCH_CONCURENCY: did you mean LLM_BENCH_CONCURRENCY\?/);
    expect(typo.out).not.toMatch(/window open/);
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
  });
});
