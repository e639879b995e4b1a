/**
 * A server behind a redirect (issue 60, row 2): the run asks the models path without following,
 * measures where the redirect leads (saying so once, so no request pays the hop), and refuses a
 * redirect to a login page, to another host with the API key, or round in circles, naming the
 * Location. A gateway that redirects the stream's POST alone is named at the warm-up, with the fix.
 * It used to stop with "GET /v1/models answered HTTP 307 without any model id", the Location never
 * named.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { closeControlAgent } from '../../src/engines/http.js';
import { followBaseRedirects, MAX_REDIRECTS } from '../../src/engines/redirect.js';
import { openRun } from '../../src/matrix/open.js';
import { startSim, type SimHandle } from '../../src/sim/index.js';

const sims: SimHandle[] = [];
const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(sims.map((s) => s.close()));
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await closeControlAgent();
});

async function sim(): Promise<SimHandle> {
  const s = await startSim({ profile: 'tiny', overrides: { stepBaseMs: 2, eosProbability: 0 } });
  sims.push(s);
  return s;
}

/** a loopback server answering every request with `status` and the Location `to(path, method)` gives (none: 404) */
async function redirector(status: number, to: (path: string, method: string) => string | undefined): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    const location = to(req.url ?? '/', req.method ?? 'GET');
    if (location === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(status, { location, 'content-type': 'text/html' }).end('<html><body>Moved</body></html>');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const cfgFor = (url: string, env: Record<string, string> = {}) =>
  resolveSuite({ target: { url }, matrix: { contexts: [0], concurrency: [1], prefill: [], windowS: 1, maxOutputTokens: 8 } }, env);

async function stderrOf<T>(run: () => Promise<T>): Promise<{ text: string; result: PromiseSettledResult<T> }> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  try {
    const [result] = await Promise.allSettled([run()]);
    return { text: lines.join(''), result: result! };
  } finally {
    spy.mockRestore();
  }
}

describe('a redirecting gateway in front of the server', () => {
  test('307 for every path, two hops: the run measures where they lead, says so once, and opens', { timeout: 30_000 }, async () => {
    const s = await sim();
    const second = await redirector(308, (path) => `${s.url}${path}`);
    const first = await redirector(307, (path) => `${second}${path}`);
    const { text, result } = await stderrOf(() => openRun(cfgFor(first)));
    expect(result.status, text + JSON.stringify(result)).toBe('fulfilled');
    const opened = (result as PromiseFulfilledResult<Awaited<ReturnType<typeof openRun>>>).value;
    try {
      expect(opened.session.target.baseUrl).toBe(s.url);
      expect(text).toContain(`[speed-matrix] ${first}/v1/models → ${second}/v1/models (HTTP 307); ${second}/v1/models → ${s.url}/v1/models (HTTP 308): measuring ${s.url} (set LLM_BENCH_URL there to skip the hop)`);
      expect(text.match(/skip the hop/g)).toHaveLength(1);
    } finally {
      await opened.close();
    }
  });

  test('a Location relative to the gateway, under a moved mount', async () => {
    const s = await sim();
    const url = await redirector(301, (path) => (path.startsWith('/old/') ? path.replace('/old/', '/new/') : undefined));
    const r = await followBaseRedirects({ baseUrl: `${url}/old` });
    expect(r.baseUrl).toBe(`${url}/new`);
    expect(r.hops).toEqual([`${url}/old/v1/models → ${url}/new/v1/models (HTTP 301)`]);
    // no redirect: the base as given
    expect(await followBaseRedirects({ baseUrl: s.url })).toEqual({ baseUrl: s.url, hops: [] });
  });

  test('a redirect to a login page, to another host with the API key, or in circles: refused, naming the Location', async () => {
    const login = await redirector(302, () => '/login?next=%2Fv1%2Fmodels');
    await expect(followBaseRedirects({ baseUrl: login })).rejects.toThrow(`GET ${login}/v1/models redirects to ${login}/login?… (HTTP 302), not to the same API under another address (a login page, a moved site?); set LLM_BENCH_URL to the server itself`);
    const s = await sim();
    const otherHost = s.url.replace('127.0.0.1', 'localhost');
    const away = await redirector(307, (path) => `${otherHost}${path}`);
    await expect(followBaseRedirects({ baseUrl: away, apiKey: 'sk-secret-1234' })).rejects.toThrow(`GET ${away}/v1/models redirects to another server, ${otherHost}/v1/models (HTTP 307: another host or port, or from https to http); the API key is not sent where you did not send it`);
    // the same host on another port is another server too; http → https on the same host and port is the usual upgrade
    const port = new URL(away).port;
    const otherPort = await redirector(307, (path) => `http://127.0.0.1:${Number(port) === 1 ? 2 : 1}${path}`);
    await expect(followBaseRedirects({ baseUrl: otherPort, apiKey: 'sk-secret-1234' })).rejects.toThrow(/redirects to another server/);
    let upgrade = '';
    upgrade = await redirector(301, (path) => `${upgrade.replace('http:', 'https:')}${path}`);
    expect((await followBaseRedirects({ baseUrl: upgrade, apiKey: 'sk-secret-1234' })).baseUrl).toBe(upgrade.replace('http:', 'https:'));
    // a token in the Location's query string is never shown
    const signed = await redirector(302, () => '/login?access_token=tok-SECRET-42');
    const refused = await followBaseRedirects({ baseUrl: signed }).catch((e: unknown) => String(e));
    expect(refused).toContain('/login?…');
    expect(refused).not.toContain('tok-SECRET-42');
    // without a key there is nothing to give away
    expect((await followBaseRedirects({ baseUrl: away })).baseUrl).toBe(otherHost);
    const circle = await redirector(307, (path) => path);
    await expect(followBaseRedirects({ baseUrl: circle })).rejects.toThrow(`redirects more than ${MAX_REDIRECTS} times`);
  });

  test('a gateway that redirects the stream\'s POST only: the warm-up names the Location and the fix', { timeout: 30_000 }, async () => {
    const s = await sim();
    const server = createServer(async (req, res) => {
      if (req.method === 'POST') {
        req.resume();
        res.writeHead(307, { location: `${s.url}${req.url}` }).end();
        return;
      }
      const up = await fetch(`${s.url}${req.url}`);
      res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await up.arrayBuffer()));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { result } = await stderrOf(() => openRun(cfgFor(url, { LLM_BENCH_ENGINE: 'vllm' })));
    expect(result.status).toBe('rejected');
    expect(String((result as PromiseRejectedResult).reason?.message)).toContain(`HTTP 307: redirects to ${s.url}/v1/chat/completions; the stream's POST is not sent on: set LLM_BENCH_URL to the server itself`);
  });
});
