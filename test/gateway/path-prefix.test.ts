/**
 * A base URL is a base URL (issue 19): a gateway that mounts the engine under a path prefix, here
 * real Debian nginx (`location /api/ { proxy_pass http://sim/; }`), gets every request of the run
 * under that prefix, streaming included; a URL ending in /v1 is understood and said once.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import type { SpeedMatrixResult } from '../../src/results/types.js';
import { runBench, TINY } from '../faults/helpers.js';
import { nginxMissing, startNginx, type NginxHandle } from '../helpers/nginx.js';

if (nginxMissing) console.warn(`[skip] gateway path-prefix tests: ${nginxMissing}`);

describe.skipIf(nginxMissing !== undefined)('through nginx with a path prefix', () => {
  let sim: SimHandle;
  let nginx: NginxHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'tiny', thread: true });
    const upstream = new URL(sim.url);
    // no buffering: a streamed response passes token by token, as an LLM gateway is set up
    nginx = await startNginx(
      `location /api/ {
        proxy_pass http://sim/;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_buffering off;
      }
      location / { return 404 "not under the prefix\\n"; }`,
      `upstream sim { server ${upstream.host}; keepalive 16; }`,
    );
  });
  afterAll(async () => {
    await nginx?.stop();
    await sim?.close();
  });

  test('every request goes under /api, the cells are measured, and .../api/v1 is not doubled', { timeout: 120_000 }, () => {
    const out = mkdtempSync(join(tmpdir(), 'lsm-gw-'));
    const r = runBench({ ...TINY, LLM_BENCH_URL: `http://127.0.0.1:${nginx.port}/api/v1/`, LLM_BENCH_OUT: out }, 100);
    expect(r.timedOut, r.out).toBe(false);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/target URL: the URL ends in \/v1, so the base URL is http:\/\/127\.0\.0\.1:\d+\/api \(/);
    const log = nginx.accessLog();
    // the streaming path (undici dispatch) and the control calls alike
    expect(log).toMatch(/^POST \/api\/v1\/chat\/completions 200$/m);
    expect(log).toMatch(/^GET \/api\/v1\/models 200$/m);
    expect(log).not.toMatch(/\/v1\/v1\//);
    // nothing reached nginx outside the prefix
    expect(log.split('\n').filter((l) => l.length > 0 && !/^\w+ \/api\//.test(l))).toEqual([]);
    const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    const cell = result.cells[0]!;
    expect(cell.status).toBe('valid');
    expect(cell.figures?.outputTokens).toBeGreaterThan(0);
    expect(cell.figures?.failedRequests).toBe(0);
  });
});
