/**
 * A base URL is a base URL (issue 19): a gateway that mounts the engine under a path prefix, here
 * real Debian nginx (`location /api/ { proxy_pass http://sim/; }`), gets every request of the run
 * under that prefix, streaming included; a URL ending in /v1 is understood and said once.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { cleanEnv, root, runBench, startSimProcess, TINY, vitestArgv } from '../faults/helpers.js';
import { freePort, nginxMissing, startNginx, type NginxHandle } from '../helpers/nginx.js';

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
    // not retried (it used to retry for 25 s): no line of a second try
    expect(refused.out).not.toMatch(/not answering|trying again|request 2 of/);
    const out = mkdtempSync(join(tmpdir(), 'lsm-tls-out-'));
    const trusted = runBench({ ...TINY, LLM_BENCH_URL: url, LLM_BENCH_OUT: out, NODE_EXTRA_CA_CERTS: tls.cert! }, 90);
    expect(trusted.code, trusted.out).toBe(0);
    const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    expect(result.cells[0]?.status).toBe('valid');
  });
});

describe.skipIf(nginxMissing !== undefined)('the upstream dies behind nginx (502 for everything)', () => {
  test('a later cell is Not run within the documented 15 s, with progress lines and the 502 by its title', { timeout: 150_000 }, async () => {
    const port = await freePort();
    const sim = await startSimProcess(port);
    const nginx = await startNginx(`location / { proxy_pass http://127.0.0.1:${port}; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; }`);
    try {
      const out = mkdtempSync(join(tmpdir(), 'lsm-dead-'));
      const bench = spawn(...vitestArgv(['bench', '--run']), {
        cwd: root,
        env: { ...cleanEnv(), NO_COLOR: '1', ...TINY, LLM_BENCH_CONCURRENCY: '1,2,4', LLM_BENCH_URL: `http://127.0.0.1:${nginx.port}`, LLM_BENCH_OUT: out },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      let killedAt: number | undefined;
      const feed = (d: Buffer): void => {
        text += d.toString();
        // the first cell is done: the upstream dies, nginx stays and answers 502
        if (killedAt === undefined && /\[speed-matrix\] 0\/1: /.test(text)) {
          killedAt = Date.now();
          sim.kill('SIGKILL');
        }
      };
      bench.stdout!.on('data', feed);
      bench.stderr!.on('data', feed);
      const killer = setTimeout(() => bench.kill('SIGKILL'), 120_000);
      const code = await new Promise<number | null>((resolve) => bench.on('close', resolve));
      clearTimeout(killer);
      expect(killedAt, text).toBeDefined();
      expect(code, text).not.toBe(0);
      expect(text).toMatch(/drain barrier: the server does not answer \(HTTP 502: an HTML page "502 Bad Gateway"[^)]*\)\) for \d+ s; giving up at 15 s/);
      // it used to be 120 s of silence: the barrier gives up at its 15 s (the line above, and the
      // Not run reason below, from the run's own clock; no wall-clock bound on the test's side)
      const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
      // the cell in progress when the upstream died (its drain may have passed just before) fails
      // its requests; the next one's drain barrier gives up on the server
      const last = result.cells.find((c) => c.concurrency === 4)!;
      expect(last.status).toBe('not-run');
      expect(last.notRunReason).toMatch(/the server has not answered for 1\d s \(HTTP 502: an HTML page "502 Bad Gateway"/);
      expect(result.cells.find((c) => c.concurrency === 1)?.status).toBe('valid');
    } finally {
      sim.kill('SIGKILL');
      await nginx.stop();
    }
  });
});

describe.skipIf(nginxMissing !== undefined)('a proxy pair that bunches the stream (a gzip tier, then a gunzip tier)', () => {
  test.each([
    ['with server metrics', {}],
    ['without server metrics', { wire: { noMetrics: true } }],
  ])('%s: the cells read Stream buffered with the burst evidence, and the run fails naming the fix', { timeout: 150_000 }, async (_name, overrides) => {
    const sim = await startSim({ profile: 'tiny', thread: true, overrides });
    // the inner tier buffers and compresses the event stream (deflate holds its output until its
    // buffers fill or the response ends: with proxy_buffering off nginx would flush each read);
    // the outer one asks it for gzip and inflates for the client
    const inner = await startNginx(
      `location / { proxy_pass ${sim.url}; proxy_http_version 1.1;
        gzip on; gzip_types text/event-stream application/json; gzip_min_length 0; gzip_proxied any; }`,
    );
    const outer = await startNginx(
      `location / { proxy_pass http://127.0.0.1:${inner.port}; proxy_http_version 1.1; proxy_buffering off;
        proxy_set_header Accept-Encoding gzip; gunzip on; }`,
    );
    try {
      const out = mkdtempSync(join(tmpdir(), 'lsm-bunch-'));
      const r = runBench({ ...TINY, LLM_BENCH_DURATION_S: '2', LLM_BENCH_MAX_TOKENS: '64', LLM_BENCH_URL: `http://127.0.0.1:${outer.port}`, LLM_BENCH_OUT: out }, 100);
      expect(r.timedOut, r.out).toBe(false);
      expect(r.code, r.out).toBe(1);
      expect(r.out).toMatch(/the stream was buffered on the way \(\d+ % of the gaps between a request's chunks under 0\.5 ms or a quarter of its own rhythm, median burst \d+ tokens/);
      expect(r.out).toMatch(/proxy_buffering off; no gzip on text\/event-stream/);
      const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
      const cell = result.cells[0]!;
      expect(cell.status).toBe('stream-buffered');
      expect(cell.evidence.streamBuffered?.burstTokens.median).toBeGreaterThanOrEqual(16);
      const md = readFileSync(join(out, 'speed-matrix.md'), 'utf8');
      expect(md).toContain('Stream buffered on the way');
      // a figure that could not be computed says why
      if (cell.figures?.timeBetweenTokensMs === undefined) expect(cell.figures?.notComputed?.timeBetweenTokensMs).toMatch(/arrived at one instant/);
    } finally {
      await outer.stop();
      await inner.stop();
      await sim.close();
    }
  });

  test('the same pair without gzip (buffering off all the way) is Valid: the rule does not fire on a clean proxy', { timeout: 120_000 }, async () => {
    const sim = await startSim({ profile: 'tiny', thread: true });
    const inner = await startNginx(`location / { proxy_pass ${sim.url}; proxy_http_version 1.1; proxy_buffering off; }`);
    const outer = await startNginx(`location / { proxy_pass http://127.0.0.1:${inner.port}; proxy_http_version 1.1; proxy_buffering off; }`);
    try {
      const out = mkdtempSync(join(tmpdir(), 'lsm-clean-'));
      const r = runBench({ ...TINY, LLM_BENCH_DURATION_S: '2', LLM_BENCH_MAX_TOKENS: '64', LLM_BENCH_URL: `http://127.0.0.1:${outer.port}`, LLM_BENCH_OUT: out }, 100);
      expect(r.code, r.out).toBe(0);
      const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
      expect(result.cells[0]!.status).toBe('valid');
    } finally {
      await outer.stop();
      await inner.stop();
      await sim.close();
    }
  });
});
