/**
 * Servers that misbehave, as a user meets them (issue 14): streams that stall, requests that fail,
 * a warm-up that stalls, a server that restarts between cells and one that is gone for good. Each
 * runs `npx vitest bench --run` and checks the outcome the user sees. Every run has a time limit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { cleanEnv, root, runBench, startSimProcess, TINY, vitestArgv } from './helpers.js';
import { freePort } from '../helpers/nginx.js';

function outDir(): string {
  return mkdtempSync(join(tmpdir(), 'lsm-sf-'));
}

function result(dir: string): SpeedMatrixResult {
  return JSON.parse(readFileSync(join(dir, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
}

describe('streams that stall and requests that fail', () => {
  test('a stream that stops after 10 tokens is a failed request (stall), the cell is Errors and fails', { timeout: 120_000 }, () => {
    const out = outDir();
    // the warm-up asks for 8 tokens, so only the cells' requests reach the stall at token 10
    const r = runBench({ ...TINY, LLM_BENCH_OUT: out, LLM_BENCH_DURATION_S: '2', LLM_BENCH_SIM_OVERRIDES: '{"faults":{"stallRate":1,"stallMs":600000,"faultAfterTokens":10}}' }, 90);
    expect(r.timedOut, r.out).toBe(false);
    expect(r.code).toBe(1);
    const cell = result(out).cells[0]!;
    expect(cell.status).toBe('errors');
    expect(cell.figures?.failedRequests).toBe(2);
    expect(cell.evidence.errors?.byCode).toEqual({ stall: 2 });
    // the window (2 s) caps the limit: a silence through all of it is a stall
    expect(cell.figures?.stallLimitMs).toBeGreaterThan(1_950);
    expect(cell.figures?.stallLimitMs).toBeLessThanOrEqual(2_050);
    expect(r.out).toMatch(/0\/2 had 2 failed requests \(2 stall\); first: stalled: no token for 2\.0 s after the first/);
    expect(readFileSync(join(out, 'speed-matrix.md'), 'utf8')).not.toContain('**0.0** tok/s');
  });

  test('failed requests fail the cell by default; LLM_BENCH_ALLOW_ERRORS=1 lets it pass', { timeout: 180_000 }, () => {
    // mid-stream errors after 9 tokens: the 8-token warm-up never meets one
    const env = { ...TINY, LLM_BENCH_DURATION_S: '2', LLM_BENCH_SIM_OVERRIDES: '{"faults":{"errorRate":0.5,"faultAfterTokens":9}}' };
    const failing = runBench({ ...env, LLM_BENCH_OUT: outDir() }, 90);
    expect(failing.code, failing.out).toBe(1);
    expect(failing.out).toMatch(/0\/2 had \d+ failed requests? \(\d+ error-event\); first: .*A cell with failed requests fails unless its threshold budget sets max\.failedRequests or LLM_BENCH_ALLOW_ERRORS=1/);
    const allowed = runBench({ ...env, LLM_BENCH_OUT: outDir(), LLM_BENCH_ALLOW_ERRORS: '1' }, 90);
    expect(allowed.code, allowed.out).toBe(0);
    expect(allowed.out).toMatch(/0\/2: Errors \(\d+\)/);
  });

  test('a warm-up that stalls says so within LLM_BENCH_STALL_S per try, with a line per try', { timeout: 120_000 }, () => {
    const r = runBench({ ...TINY, LLM_BENCH_OUT: outDir(), LLM_BENCH_STALL_S: '1', LLM_BENCH_SIM_OVERRIDES: '{"faults":{"stallRate":1,"stallMs":600000,"faultAfterTokens":2}}' }, 60);
    expect(r.timedOut, r.out).toBe(false);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/warm-up request 1 of 3 to /);
    expect(r.out).toMatch(/warm-up request 1 failed \(stall: no token for 1 s after the first: the server accepted the request, then stopped streaming\); trying again/);
    expect(r.out).toMatch(/warm-up request 3 failed \(stall/);
    expect(r.out).toMatch(/ConfigError: the warm-up request to .* failed \(stall: .*the server stalled mid-stream/);
    // three tries, each ended by the 1 s stall limit (the lines above), and no fourth
    expect(r.out).not.toMatch(/warm-up request 4 /);
  });
});

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** the bench, without blocking this process (the proxy serves it meanwhile), killed after `limitS` */
function benchAsync(env: Record<string, string>, limitS: number): Promise<{ code: number | null; out: string }> {
  const child = spawn(...vitestArgv(['bench', '--run']), { cwd: root, env: { ...cleanEnv(), NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  const feed = (d: Buffer): void => {
    out += d.toString();
  };
  child.stdout!.on('data', feed);
  child.stderr!.on('data', feed);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), limitS * 1000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/**
 * A proxy in front of the simulator that goes away (connections reset, new ones refused) the moment
 * `trigger` sees a request (by default: the second cell starts sizing its prompt, the first POST
 * /tokenize after the first cell's workers were seen), and comes back after `downMs` (never when
 * undefined). The moment is deterministic.
 */
/** the default trigger: the first POST /tokenize after the first cell's workers were seen */
const SECOND_CELL_STARTS = (text: string, state: { sawFirstCell: boolean }): boolean => {
  if (/x-request-id: \S+-c0x1-w/i.test(text)) state.sawFirstCell = true;
  return state.sawFirstCell && /(^|\r\n)POST \/tokenize /.test(text);
};

async function flakyProxy(
  targetPort: number,
  downMs: number | undefined,
  trigger: (text: string, state: { sawFirstCell: boolean }) => boolean = SECOND_CELL_STARTS,
): Promise<{ port: number; wentDown: () => boolean; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const state = { sawFirstCell: false };
  let triggered = false;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.pipe(client);
    // every request on every connection is looked at: control calls share kept-alive connections
    client.on('data', (d: Buffer) => {
      const text = d.toString('latin1');
      if (!triggered && trigger(text, state)) {
        triggered = true;
        server.close();
        for (const s of sockets) s.destroy();
        if (downMs !== undefined) setTimeout(() => server.listen(port, '127.0.0.1'), downMs);
        return;
      }
      upstream.write(d);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    wentDown: () => triggered,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => (server.listening ? server.close(() => r()) : r()));
    },
  };
}

describe('a server that goes away between cells', () => {
  const env = (url: string, out: string, retryS: string) => ({
    LLM_BENCH_URL: url,
    LLM_BENCH_CONTEXTS: '0,1K',
    LLM_BENCH_CONCURRENCY: '1',
    LLM_BENCH_PREFILL: 'none',
    LLM_BENCH_DURATION_S: '1',
    LLM_BENCH_MAX_TOKENS: '32',
    LLM_BENCH_RETRY_S: retryS,
    LLM_BENCH_OUT: out,
  });

  test('down for 2 s as the second cell starts: the cell waits for it and runs', { timeout: 180_000 }, async () => {
    const simPort = await freePort();
    children.push(await startSimProcess(simPort));
    const proxy = await flakyProxy(simPort, 2_000);
    try {
      const out = outDir();
      const r = await benchAsync(env(`http://127.0.0.1:${proxy.port}`, out, '30'), 150);
      expect(proxy.wentDown(), r.out).toBe(true);
      expect(r.out).toMatch(/the server did not answer a tokenize call \(.*\); trying again in/);
      expect(r.code, r.out).toBe(0);
      const res = result(out);
      expect(res.cells.map((c) => [c.contextLabel, c.status])).toEqual([
        ['0', 'valid'],
        ['1K', 'valid'],
      ]);
      expect(res.incomplete).toBeUndefined();
    } finally {
      await proxy.close();
    }
  });

  test('gone for good: the next cell is stored as Not run with why, every later one at once, the JSON says the run is incomplete', { timeout: 180_000 }, async () => {
    const simPort = await freePort();
    children.push(await startSimProcess(simPort));
    const proxy = await flakyProxy(simPort, undefined);
    try {
      const out = outDir();
      const r = await benchAsync({ ...env(`http://127.0.0.1:${proxy.port}`, out, '2'), LLM_BENCH_CONTEXTS: '0,1K,2K' }, 150);
      expect(proxy.wentDown(), r.out).toBe(true);
      expect(r.code, r.out).toBe(1);
      const res = result(out);
      const notRun = res.cells.find((c) => c.contextLabel === '1K')!;
      expect(notRun.status).toBe('not-run');
      expect(notRun.notRunReason).toMatch(/ECONNREFUSED|ECONNRESET|failed/);
      // the cell that found the server gone says how long it waited and what to do, as the next ones do
      expect(notRun.notRunReason).toMatch(/; the server stopped answering, through every retry\. Check the server .*LLM_BENCH_RESUME=/);
      // the next row's prompt sizing does not wait out its own retries: one check, Not run at once
      const next = res.cells.find((c) => c.contextLabel === '2K')!;
      expect(next.status).toBe('not-run');
      expect(next.notRunReason).toMatch(/the server has not answered for \d+ s \(no answer: connection refused, reset or timed out; down since /);
      expect(r.out.match(/did not answer a tokenize call/g)?.length ?? 0, r.out).toBeLessThanOrEqual(6);
      expect(res.incomplete?.notRun.map((n) => n.key)).toEqual(['1K/1', '2K/1']);
      const md = readFileSync(join(out, 'speed-matrix.md'), 'utf8');
      expect(md).toMatch(/\| 1K \| Not run: /);
    } finally {
      await proxy.close();
    }
  });

  test('killed mid-cell and back 1.5 s later: that cell shows the failures, the next one runs, nothing is lost', { timeout: 180_000 }, async () => {
    const simPort = await freePort();
    children.push(await startSimProcess(simPort));
    // the first cell's third request: its window is under way
    const proxy = await flakyProxy(simPort, 1_500, (text) => /x-request-id: \S+-c0x1-w0-r2\b/i.test(text));
    try {
      const out = outDir();
      const r = await benchAsync({ ...env(`http://127.0.0.1:${proxy.port}`, out, '30'), LLM_BENCH_DURATION_S: '3' }, 150);
      expect(proxy.wentDown(), r.out).toBe(true);
      expect(r.code, r.out).toBe(1);
      const res = result(out);
      expect(res.cells.map((c) => c.contextLabel)).toEqual(['0', '1K']);
      const hit = res.cells[0]!;
      expect(hit.statuses).toContain('errors');
      expect(Object.keys(hit.evidence.errors!.byCode).every((code) => ['socket', 'connect', 'closed-before-response', 'no-done'].includes(code))).toBe(true);
      expect(res.cells[1]!.status).toBe('valid');
    } finally {
      await proxy.close();
    }
  });
});
