/**
 * A base URL is a base URL (issue 19): a gateway that mounts the engine under a path prefix, here
 * real Debian nginx (`location /api/ { proxy_pass http://sim/; }`), gets every request of the run
 * under that prefix, streaming included; a URL ending in /v1 is understood and said once.
 */
import { spawnSync } from 'node:child_process';
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

/** a self-signed certificate for 127.0.0.1 (openssl), or why there is none */
function selfSigned(): { cert?: string; key?: string; why?: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const r = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { encoding: 'utf8' });
  if (r.status !== 0) return { why: `openssl could not make a test certificate (${(r.stderr || r.error?.message || '').trim().slice(0, 200)})` };
  return { cert, key };
}

const tls = nginxMissing ? { why: nginxMissing } : selfSigned();
if (tls.why) console.warn(`[skip] the TLS gateway test: ${tls.why}`);

describe.skipIf(tls.why !== undefined)('HTTPS through nginx with a self-signed certificate', () => {
  let sim: SimHandle;
  let nginx: NginxHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'tiny', thread: true });
    nginx = await startNginx(
      `ssl_certificate ${tls.cert}; ssl_certificate_key ${tls.key};
      location / { proxy_pass ${sim.url}; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; }`,
      '',
      'ssl',
    );
  });
  afterAll(async () => {
    await nginx?.stop();
    await sim?.close();
  });

  test('without the CA: one clear error naming the certificate and NODE_EXTRA_CA_CERTS, not retried; with it: measured', { timeout: 120_000 }, () => {
    const url = `https://127.0.0.1:${nginx.port}`;
    const refused = runBench({ ...TINY, LLM_BENCH_URL: url, LLM_BENCH_OUT: mkdtempSync(join(tmpdir(), 'lsm-tls-out-')) }, 60);
    expect(refused.code, refused.out).not.toBe(0);
    expect(refused.out).toMatch(/TLS: the server's certificate is self-signed \(DEPTH_ZERO_SELF_SIGNED_CERT\); give Node the CA that signed it: NODE_EXTRA_CA_CERTS=/);
    expect(refused.out).not.toMatch(/not answering|trying again/);
    // it used to retry for 25 s
    expect(refused.seconds).toBeLessThan(20);
    const out = mkdtempSync(join(tmpdir(), 'lsm-tls-out-'));
    const trusted = runBench({ ...TINY, LLM_BENCH_URL: url, LLM_BENCH_OUT: out, NODE_EXTRA_CA_CERTS: tls.cert! }, 90);
    expect(trusted.code, trusted.out).toBe(0);
    const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    expect(result.cells[0]?.status).toBe('valid');
  });
});
