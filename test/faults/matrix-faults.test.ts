/**
 * The fault matrix end to end (issue 15): a small matrix (0 and 1K × 2 requests) against the
 * simulator for each server fault, as a user runs it. Each asserts the cells' status, the failure
 * code, the exit code, and that every finished cell is in the JSON. The first completion request
 * (the warm-up) never draws a fault (faultFreeRequests), as a server that fails under load.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { suite } from '../../bench/suite.js';
import { resolveSuite } from '../../src/config/resolve.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { runBench, TINY } from './helpers.js';

const ENV = { ...TINY, LLM_BENCH_CONTEXTS: '0,1K', LLM_BENCH_DURATION_S: '2', LLM_BENCH_MAX_TOKENS: '24' };

interface Case {
  name: string;
  faults: Record<string, number>;
  /** failure codes the Errors cells may show (every code seen must be one of these) */
  codes: string[];
}

const CASES: Case[] = [
  { name: 'HTTP 500 mid-cell', faults: { http500Rate: 0.4 }, codes: ['http-status'] },
  { name: 'HTTP 429 mid-cell, Retry-After 1 s', faults: { http429Rate: 0.4, retryAfterS: 1 }, codes: ['rate-limited'] },
  { name: 'HTTP 503 mid-cell', faults: { http503Rate: 0.4 }, codes: ['http-status'] },
  { name: 'EOF without [DONE]', faults: { closeRate: 0.4, faultAfterTokens: 9 }, codes: ['no-done'] },
  { name: 'a malformed chunk', faults: { malformedRate: 0.4, faultAfterTokens: 9 }, codes: ['protocol'] },
];

describe('server faults in a matrix', () => {
  for (const c of CASES) {
    test(`${c.name}: Errors cells with code ${c.codes.join('/')}, exit 1, no finished cell lost`, { timeout: 120_000 }, () => {
      const out = mkdtempSync(join(tmpdir(), 'lsm-mf-'));
      const requestsFile = join(out, 'requests.jsonl');
      const r = runBench({ ...ENV, LLM_BENCH_OUT: out, LLM_BENCH_REQUESTS_FILE: requestsFile, LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ faults: { faultFreeRequests: 1, ...c.faults } }) }, 90);
      expect(r.timedOut, r.out).toBe(false);
      expect(r.code, r.out).toBe(1);
      const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
      expect(result.partial).toBe(false);
      expect(result.cells.map((x) => `${x.contextLabel}/${x.concurrency}`)).toEqual(['0/2', '1K/2']);
      for (const cell of result.cells) {
        expect(cell.statuses, JSON.stringify(cell.evidence)).toContain('errors');
        expect(cell.figures?.failedRequests).toBeGreaterThan(0);
        for (const code of Object.keys(cell.evidence.errors!.byCode)) expect(c.codes).toContain(code);
        // the figures of the requests that streamed are still there
        expect(cell.figures?.outputTokens).toBeGreaterThan(0);
      }
      expect(r.out).toMatch(/had \d+ failed requests? \(/);
      if (c.codes.includes('rate-limited')) {
        // the page names the kind; each worker waited the Retry-After before its next request
        expect(readFileSync(join(out, 'speed-matrix.md'), 'utf8')).toMatch(/rate-limited/);
        const lines = readFileSync(requestsFile, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { cell: string; id: string; sentS: number; endS?: number; error?: { code: string; httpStatus?: number; message: string } });
        const limited = lines.filter((l) => l.error?.code === 'rate-limited');
        expect(limited.length).toBeGreaterThan(0);
        expect(limited.every((l) => l.error!.httpStatus === 429 && /Retry-After 1 s/.test(l.error!.message))).toBe(true);
        let waited = 0;
        for (const l of limited) {
          const [, worker, seq] = /-w(\d+)-r(\d+)$/.exec(l.id)!;
          const next = lines.find((x) => x.cell === l.cell && x.id.endsWith(`-w${worker}-r${Number(seq) + 1}`));
          if (!next) continue; // the window closed during the wait
          expect(next.sentS - l.endS!, `${l.id} → ${next.id}`).toBeGreaterThanOrEqual(0.95);
          waited++;
        }
        expect(waited).toBeGreaterThan(0);
      }
    });
  }

  test('a server that ignores max_tokens (3 × the cap): counted as streamed, flagged on the cell and named on the page', { timeout: 120_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-mf-'));
    const r = runBench({ ...ENV, LLM_BENCH_CONTEXTS: '0', LLM_BENCH_OUT: out, LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ wire: { maxTokensFactor: 3 } }) }, 90);
    expect(r.timedOut, r.out).toBe(false);
    const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    const cell = result.cells[0]!;
    const m = cell.evidence.maxTokensIgnored;
    expect(m, JSON.stringify(cell.evidence)).toBeDefined();
    expect(m!.example).toEqual({ tokens: 72, asked: 24 });
    expect(m!.requests).toBeGreaterThan(0);
    expect(r.out).toContain('⚠ the server ignored max_tokens in');
    expect(readFileSync(join(out, 'speed-matrix.md'), 'utf8')).toMatch(/The server ignored max_tokens: .*\n\n- 0\/2: \d+ of \d+ requests \(e\.g\. 72 tokens for 24 asked\)/);
  });

  test('a window shorter than the TTFT (3 s of prefill a request, no prefix cache, a 1 s window): the cell and the page say so with the first tokens it rests on', { timeout: 120_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-mf-'));
    const r = runBench({ ...ENV, LLM_BENCH_CONTEXTS: '1K', LLM_BENCH_DURATION_S: '1', LLM_BENCH_OUT: out, LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ prefixCaching: false, prefillPerTokenMs: 3 }) }, 90);
    expect(r.timedOut, r.out).toBe(false);
    const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    const cell = result.cells[0]!;
    const w = cell.evidence.windowShorterThanTtft;
    expect(w, JSON.stringify(cell.evidence)).toBeDefined();
    expect(w!.ttftMedianMs).toBeGreaterThan(1000);
    expect(w!.windowS).toBeCloseTo(1, 1);
    expect(w!.ttftSamples).toBe(cell.figures!.ttftMs!.samples);
    expect(r.out).toMatch(/⚠ the window \(1\.0 s\) is shorter than the median TTFT \([\d.]+ s, from \d+ first tokens?\): lengthen it \(LLM_BENCH_DURATION_S\)/);
    expect(readFileSync(join(out, 'speed-matrix.md'), 'utf8')).toMatch(/Windows shorter than the wait for a first token: [^\n]*\n\n- 1K\/2: median TTFT [\d,]+ ms from \d+ first tokens?, window 1\.0 s/);
  });

  test('a 10 MB chunk: read and counted, the run goes on', { timeout: 120_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-mf-'));
    const env = { ...ENV, LLM_BENCH_CONTEXTS: '0', LLM_BENCH_OUT: out, LLM_BENCH_SIM_OVERRIDES: JSON.stringify({ faults: { faultFreeRequests: 1, hugeChunkRate: 0.3, hugeChunkBytes: 10_000_000, faultAfterTokens: 9 } }) };
    const r = runBench(env, 90);
    expect(r.timedOut, r.out).toBe(false);
    const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    expect(result.partial).toBe(false);
    const cell = result.cells[0]!;
    // read, not failed: no error, tokens counted. Valid, or Requests queued when the loaded 2-core
    // machine spent long enough on 10 MB chunks that the server's running count lagged the
    // client's in-flight one (seen once in CI): a load artefact, not a fault of the chunk. Or
    // Client-limited: parsing 10 MB stalls the client's loop 20-30 ms here (its loop delay p99 was
    // 20-28 ms in 2-stream cells on this VM, 23.5 ms on CI), so the other stream's tokens are
    // stamped that late, and on a slower machine the estimate passes the test runs' 50 ms bound.
    // That status is true, and fails the run by itself (exit 1, its own line) unless the run allows
    // it: the embedded simulator on fewer than DEFAULTS.simSharedMinCores cores does, and says so
    // at the start (then exit 0, as on this 2-core VM); nothing else may fail it. Whether it does is
    // the run's own decision, read here from the same resolution of the same suite and environment
    expect(cell.statuses).not.toContain('errors');
    expect(['valid', 'requests-queued', 'client-limited']).toContain(cell.status);
    if (cell.status === 'client-limited') {
      expect(cell.evidence.clientLimited, JSON.stringify(cell.evidence)).toBeDefined();
      const allowed = resolveSuite(suite, env).allowClientLimited;
      expect(r.out.includes('Client-limited cell is shown but does not fail the run'), r.out).toBe(allowed);
      expect(r.code, r.out).toBe(allowed ? 0 : 1);
      if (!allowed) expect(r.out).toMatch(/0\/2 is Client-limited: the load generator's timing error estimate p99 was/);
    } else {
      expect(r.code, r.out).toBe(0);
    }
    expect(cell.figures?.failedRequests).toBe(0);
    expect(cell.figures?.outputTokens).toBeGreaterThan(0);
  });
});

describe('signals', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    test(`${signal} mid-run: ends at once, keeps the finished cells, marks the page partial`, { timeout: 120_000 }, async () => {
      const { spawn } = await import('node:child_process');
      const { cleanEnv, root } = await import('./helpers.js');
      const out = mkdtempSync(join(tmpdir(), 'lsm-sig-'));
      // through npx, as a user's terminal runs it: the signal goes to the whole process group, npm
      // and Vitest, and npm forwards it to Vitest once more (the other tests start Vitest directly)
      const child = spawn('npx', ['vitest', 'bench', '--run'], {
        cwd: root,
        env: { ...cleanEnv(), NO_COLOR: '1', ...ENV, LLM_BENCH_CONTEXTS: '0,1K,4K', LLM_BENCH_OUT: out },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      let log = '';
      let sentAt = 0;
      const onData = (d: Buffer): void => {
        log += d.toString();
        // the second cell's window is open: one cell is finished
        if (!sentAt && /1K\/2: window open/.test(log)) {
          sentAt = Date.now();
          process.kill(-child.pid!, signal);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      let killedByTimer = false;
      const code = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => {
          killedByTimer = true;
          process.kill(-child.pid!, 'SIGKILL');
        }, 90_000);
        child.on('close', (c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
      expect(sentAt, log).toBeGreaterThan(0);
      // it ended by itself, not by this test's kill 90 s on; and at once: no cell after the one in
      // progress opened its window (a 10 s bound here failed for the machine's load, not the code's)
      expect(killedByTimer, log).toBe(false);
      expect(log.slice(log.search(/1K\/2: window open/))).not.toMatch(/4K\/\d+: (window open|scout|starting)/);
      expect(code).not.toBe(0);
      const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
      expect(result.partial).toBe(true);
      expect(result.cells.map((x) => `${x.contextLabel}/${x.concurrency}`)).toContain('0/2');
      expect(result.cells.map((x) => `${x.contextLabel}/${x.concurrency}`)).not.toContain('4K/2');
    });
  }
});

describe('bad files', () => {
  test('a threshold file that is not JSON: one line naming the file and the fix, nothing measured', { timeout: 120_000 }, async () => {
    const { writeFileSync } = await import('node:fs');
    const dir = mkdtempSync(join(tmpdir(), 'lsm-bf-'));
    const path = join(dir, 'thresholds.json');
    writeFileSync(path, '{ cells: ');
    const r = runBench({ ...ENV, LLM_BENCH_THRESHOLDS: path, LLM_BENCH_OUT: join(dir, 'reports') }, 60);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/ThresholdsError: .*thresholds\.json: not valid JSON .*fix the syntax or delete the file and run with -u/);
    expect(r.out).not.toMatch(/window open/);
  });

  test('a baseline file that does not exist: one line naming LLM_BENCH_BASELINE', { timeout: 120_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-bf-'));
    const r = runBench({ ...ENV, LLM_BENCH_BASELINE: join(dir, 'nope.json'), LLM_BENCH_OUT: join(dir, 'reports') }, 60);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/nope\.json/);
    expect(r.out).not.toMatch(/window open/);
  });
});
