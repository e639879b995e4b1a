/**
 * A server that is up but not ready (found on a real llama.cpp b4748 started beside the run: while
 * it loads its model it answers every path with 503 "Loading model"). The run used to probe it
 * once, fall back to the generic adapter ("could not tell which engine"), and stop with "GET
 * /v1/models answered HTTP 503 without any model id. Set `model` …", a wrong fix. Now setup waits
 * for it as for a server that does not answer (LLM_BENCH_RETRY_S), says so in its progress lines,
 * and then detects and probes the engine as usual; past the budget it stops naming the status and
 * the fix. The same for a gateway's 502 while its upstream is not up, and for a warm-up request
 * answered 503 by a server that lists its models before it can generate.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { closeControlAgent, isUnreachable } from '../../src/engines/http.js';
import { ProbeError, probeModels } from '../../src/engines/openai.js';
import { openRun } from '../../src/matrix/open.js';
import { resolveSimProfile, startSim, type SimHandle, type SimProfileOverrides } from '../../src/sim/index.js';

const sims: SimHandle[] = [];
const servers: Server[] = [];
async function sim(overrides: SimProfileOverrides): Promise<SimHandle> {
  const s = await startSim({ profile: 'tiny', personality: 'llamacpp', overrides: { stepBaseMs: 2, eosProbability: 0, ...overrides } });
  sims.push(s);
  return s;
}
afterAll(async () => {
  await Promise.all(sims.map((s) => s.close()));
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await closeControlAgent();
});

/** the progress lines written while `run` runs */
async function linesOf<T>(run: () => Promise<T>): Promise<{ lines: string[]; result: PromiseSettledResult<T> }> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
  try {
    const [result] = await Promise.allSettled([run()]);
    return { lines, result: result! };
  } finally {
    spy.mockRestore();
  }
}
afterEach(() => vi.restoreAllMocks());

type Opened = Awaited<ReturnType<typeof openRun>>;
/** the opened run of a settled openRun, which must have opened (the progress lines in the failure) */
function openedOf(result: PromiseSettledResult<Opened>, lines: string[]): Opened {
  expect(result.status, JSON.stringify(result) + lines.join('')).toBe('fulfilled');
  return (result as PromiseFulfilledResult<Opened>).value;
}

const cfgFor = (url: string, env: Record<string, string> = {}, engine?: 'llamacpp') =>
  resolveSuite({ target: { url, ...(engine ? { engine } : {}) }, matrix: { contexts: [0], concurrency: [1], prefill: [], windowS: 1, maxOutputTokens: 8 } }, env);

/** a loopback server in front of `upstream`: `answer` may answer a request itself, else it is relayed */
async function front(upstream: string, answer: (method: string, path: string) => { status: number; type: string; body: string; headers?: Record<string, string> } | undefined): Promise<string> {
  const up = new URL(upstream);
  const server = createServer((req, res) => {
    const own = answer(req.method ?? 'GET', req.url ?? '/');
    if (own) {
      req.resume();
      res.writeHead(own.status, { 'content-type': own.type, ...own.headers });
      res.end(own.body);
      return;
    }
    // a fresh connection each (llama.cpp's sim closes its streams' connections; a pooled socket would be reused after that)
    const relay = request({ host: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers, agent: false }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(relay);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const BAD_GATEWAY = '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.22.1</center></body></html>';

describe("the simulator's loadingMs knob", () => {
  test("answers every path 503 with llama.cpp's body until the time is up (its /_sim/* routes open), then serves", async () => {
    const s = await sim({ wire: { loadingMs: 3_000 } });
    for (const path of ['/health', '/v1/models', '/props', '/metrics', '/slots']) {
      const res = await fetch(s.url + path);
      expect([res.status, await res.json()], path).toEqual([503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } }]);
    }
    expect((await fetch(`${s.url}/_sim/truth`)).status).toBe(200);
    // then it serves (polled: a loaded machine may be late)
    let status = 503;
    for (let i = 0; i < 100 && status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await fetch(`${s.url}/v1/models`)).status;
    }
    expect(status).toBe(200);
  });

  test('a wrong value is refused naming the knob', () => {
    expect(() => resolveSimProfile('tiny', { wire: { loadingMs: -1 } }, 'llamacpp')).toThrow('sim wire knob loadingMs = -1 is invalid: give milliseconds, a number ≥ 0');
  });
});

describe('the models probe', () => {
  test('503 "Loading model" (llama.cpp while it loads) is not-ready, retried like an unreachable server, with the fix', async () => {
    const s = await sim({ wire: { loadingMs: 60_000 } });
    const err = await probeModels({ baseUrl: s.url }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProbeError);
    expect((err as ProbeError).code).toBe('not-ready');
    expect(isUnreachable(err)).toBe(true);
    expect((err as Error).message).toContain('the server is not ready: GET /v1/models answered HTTP 503: Loading model');
    expect((err as Error).message).toContain('LLM_BENCH_RETRY_S');
    expect((err as Error).message).not.toContain('Set `model`');
  });

  test("a gateway's 502 page while its upstream is not up is not-ready too, its page named by its title", async () => {
    const s = await sim({});
    const url = await front(s.url, () => ({ status: 502, type: 'text/html', body: BAD_GATEWAY }));
    const err = (await probeModels({ baseUrl: url }).catch((e: unknown) => e)) as ProbeError;
    expect(err.code).toBe('not-ready');
    expect(err.message).toContain('answered HTTP 502: an HTML page "502 Bad Gateway"');
  });

  test('a 500 is not taken for a server that is starting', async () => {
    const s = await sim({});
    const url = await front(s.url, () => ({ status: 500, type: 'application/json', body: '{"error":"boom"}' }));
    const err = await probeModels({ baseUrl: url }).catch((e: unknown) => e);
    expect(isUnreachable(err)).toBe(false);
  });
});

describe('openRun against a server still loading its model', () => {
  test('detected: waits with progress lines, then detects llama.cpp and reads its slots (not the generic adapter)', { timeout: 30_000 }, async () => {
    const s = await sim({ wire: { loadingMs: 1_500 } });
    const { lines, result } = await linesOf(() => openRun(cfgFor(s.url)));
    const opened = openedOf(result, lines);
    try {
      expect(opened.session.adapter.kind).toBe('llamacpp');
      expect(opened.detectionNote).toBeUndefined();
      expect(opened.session.facts.maxRunningRequests?.value).toBeGreaterThan(0);
      // the health check first (llama.cpp answers it 503 while it loads)
      const waits = lines.filter((l) => l.includes(': the server is not ready: GET /health answered HTTP 503: Loading model; trying again in'));
      expect(waits.length, lines.join('')).toBeGreaterThan(0);
      expect(lines.join('')).not.toContain('could not tell which engine');
    } finally {
      await opened.close();
    }
  });

  test('engine set by the user: the probe waits the same way', { timeout: 30_000 }, async () => {
    const s = await sim({ wire: { loadingMs: 1_000 } });
    const { lines, result } = await linesOf(() => openRun(cfgFor(s.url, {}, 'llamacpp')));
    const opened = openedOf(result, lines);
    try {
      expect(opened.session.facts.kvCapacityTokens?.value).toBeGreaterThan(0);
    } finally {
      await opened.close();
    }
  });

  test('past LLM_BENCH_RETRY_S: stops naming the status, the server\'s words and the fix', { timeout: 30_000 }, async () => {
    const s = await sim({ wire: { loadingMs: 600_000 } });
    const { lines, result } = await linesOf(() => openRun(cfgFor(s.url, { LLM_BENCH_RETRY_S: '1' })));
    expect(result.status).toBe('rejected');
    const message = String((result as PromiseRejectedResult).reason?.message);
    // the health check's wait goes on at its end; the models list's decides
    expect(message).toContain('the server is not ready: GET /v1/models answered HTTP 503: Loading model');
    expect(message).toContain('raise it for a model that loads longer');
    // it waited its budget, trying again, not giving up at the first answer (counted, not timed)
    expect(lines.filter((l) => l.includes('trying again in')).length, lines.join('')).toBeGreaterThan(0);
  });
});

describe('builds that answer some paths before the rest', () => {
  const LOADING = { status: 503, type: 'application/json', body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}' };

  test('the models list open while /health and the rest answer 503: the health check waits, then llama.cpp is detected with its slots', { timeout: 30_000 }, async () => {
    const s = await sim({});
    const readyAt = performance.now() + 1_500;
    const url = await front(s.url, (_m, path) => (performance.now() < readyAt && path !== '/v1/models' ? LOADING : undefined));
    const { lines, result } = await linesOf(() => openRun(cfgFor(url)));
    const opened = openedOf(result, lines);
    try {
      expect(opened.session.adapter.kind).toBe('llamacpp');
      expect(opened.detectionNote).toBeUndefined();
      expect(opened.session.facts.maxRunningRequests?.value).toBeGreaterThan(0);
      expect(opened.session.facts.tokenizePath).toBeDefined();
      expect(lines.join('')).toContain(': the server is not ready: GET /health answered HTTP 503: Loading model; trying again in');
    } finally {
      await opened.close();
    }
  });

  test('/props answering 503 after the health check passed: the llama.cpp probe waits too', { timeout: 30_000 }, async () => {
    const s = await sim({});
    const readyAt = performance.now() + 1_500;
    const url = await front(s.url, (_m, path) => (performance.now() < readyAt && path === '/props' ? LOADING : undefined));
    const { lines, result } = await linesOf(() => openRun(cfgFor(url, {}, 'llamacpp')));
    const opened = openedOf(result, lines);
    try {
      expect(opened.session.facts.kvCapacityTokens?.value).toBeGreaterThan(0);
      expect(lines.join('')).toContain(': the server is not ready: GET /props answered HTTP 503; trying again in');
    } finally {
      await opened.close();
    }
  });
});

test('a health check that stays 503 while the engine serves (a gateway routing /health elsewhere): the run goes on after the wait', { timeout: 30_000 }, async () => {
  const s = await sim({});
  const url = await front(s.url, (_m, path) => (path === '/health' ? { status: 503, type: 'text/plain', body: 'upstream health: down' } : undefined));
  const { lines, result } = await linesOf(() => openRun(cfgFor(url, { LLM_BENCH_RETRY_S: '1' })));
  await openedOf(result, lines).close();
  expect(lines.join('')).toContain(': the server is not ready: GET /health answered HTTP 503: upstream health: down after 1 s; going on: the probes and the warm-up decide');
});

describe('the warm-up', () => {
  test('answered 503 by a server that lists its models already: waits (no try used up), then opens', { timeout: 30_000 }, async () => {
    const s = await sim({});
    let refused = 0;
    const url = await front(s.url, (method, path) => {
      if (method !== 'POST' || !path.includes('completions') || refused >= 3) return undefined;
      refused++;
      return { status: 503, type: 'application/json', body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}' };
    });
    const { lines, result } = await linesOf(() => openRun(cfgFor(url, {}, 'llamacpp')));
    await openedOf(result, lines).close();
    expect(refused).toBe(3);
    const text = lines.join('');
    expect(text).toContain('the server is not ready: warm-up request 1 answered HTTP 503: Loading model; trying again in');
    // three 503s, and still the first of its three tries, said once
    expect(text).not.toContain('warm-up request 2 of 3');
    expect(text.split('warm-up request 1 of 3').length - 1).toBe(1);
  });

  const RATE_LIMITED = '{"error":{"code":429,"message":"Too many requests","type":"rate_limit_error"}}';

  test('answered 429 with Retry-After: waits what the server asked (no try used up), says it rate-limited the run, then opens', { timeout: 30_000 }, async () => {
    const s = await sim({});
    const at: number[] = [];
    const url = await front(s.url, (method, path) => {
      if (method !== 'POST' || !path.includes('completions')) return undefined;
      at.push(Date.now());
      return at.length <= 2 ? { status: 429, type: 'application/json', body: RATE_LIMITED, headers: { 'retry-after': '1' } } : undefined;
    });
    const { lines, result } = await linesOf(() => openRun(cfgFor(url, {}, 'llamacpp')));
    await openedOf(result, lines).close();
    const text = lines.join('');
    expect(text).toContain('the server rate-limited the run: warm-up request 1 answered HTTP 429: rate limited (Too many requests); Retry-After 1 s; trying again in 1.0 s');
    expect(text).not.toContain('warm-up request 2 of 3');
    // each try came a second or more after the last (250 ms doubling would have come sooner)
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(950);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(950);
  });

  test('answered 429 past LLM_BENCH_RETRY_S: the setup error says the server rate-limited the run and what to do', { timeout: 30_000 }, async () => {
    const s = await sim({});
    const url = await front(s.url, (method, path) => (method === 'POST' && path.includes('completions') ? { status: 429, type: 'application/json', body: RATE_LIMITED } : undefined));
    const { result } = await linesOf(() => openRun(cfgFor(url, { LLM_BENCH_RETRY_S: '1' }, 'llamacpp')));
    expect(result.status).toBe('rejected');
    const message = String((result as PromiseRejectedResult).reason?.message);
    expect(message).toMatch(/the warm-up request to http:\/\/127\.0\.0\.1:\d+ failed \(rate-limited: HTTP 429: rate limited \(Too many requests\)\); the server rate-limited the run \(HTTP 429 for \d\.\d s\): raise its rate limit for this client .*LLM_BENCH_RETRY_S/);
    expect(message).not.toContain('check the URL, model and API key');
  });

  test('answered 503 past LLM_BENCH_RETRY_S: the setup error says not ready, not "check the URL, model and API key"', { timeout: 30_000 }, async () => {
    const s = await sim({});
    const url = await front(s.url, (method, path) =>
      method === 'POST' && path.includes('completions') ? { status: 503, type: 'application/json', body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}' } : undefined,
    );
    const { result } = await linesOf(() => openRun(cfgFor(url, { LLM_BENCH_RETRY_S: '1' }, 'llamacpp')));
    expect(result.status).toBe('rejected');
    const message = String((result as PromiseRejectedResult).reason?.message);
    expect(message).toMatch(/the warm-up request to http:\/\/127\.0\.0\.1:\d+ failed \(.*Loading model\); the server is not ready \(HTTP 503 for \d\.\d s\)/);
    expect(message).not.toContain('check the URL, model and API key');
  });
});

describe('metrics without the counts the run waits on (issue 60)', () => {
  test('a /metrics that answers 200 without running or waiting: said once at the start, and the drain barrier reads the client at once instead of waiting out its 120 s', { timeout: 30_000 }, async () => {
    const { waitForIdle } = await import('../../src/load/drain.js');
    // a llama.cpp fork: its counters as b4748 names them, its running and waiting gauges renamed, no /slots (started without --slots)
    const s = await sim({});
    const url = await front(s.url, (method, path) =>
      method !== 'GET' ? undefined
      : path.startsWith('/metrics') ? { status: 200, type: 'text/plain', body: '# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 100\n# HELP fork:requests_busy renamed\nfork:requests_busy 0\n' }
      : path.startsWith('/slots') ? { status: 501, type: 'application/json', body: '{"error":{"code":501,"message":"This server does not support slots endpoint.","type":"not_supported_error"}}' }
      : undefined,
    );
    const { lines, result } = await linesOf(() => openRun(cfgFor(url, {}, 'llamacpp')));
    const opened = openedOf(result, lines);
    try {
      expect(opened.session.hasMetrics).toBe(false);
      expect(lines.join('').match(/metrics answered without a running or a waiting count/g)).toHaveLength(1);
      const drained = await waitForIdle(opened.session, 120_000);
      expect(drained).toMatchObject({ timedOut: false, checked: false });
    } finally {
      await opened.close();
    }
    // the sim's own metrics have the counts: nothing said, the barrier checks them
    const { lines: plain, result: own } = await linesOf(() => openRun(cfgFor(s.url, {}, 'llamacpp')));
    const real = openedOf(own, plain);
    try {
      expect(real.session.hasMetrics).toBe(true);
      expect(plain.join('')).not.toContain('without a running or a waiting count');
      expect((await waitForIdle(real.session, 10_000)).checked).toBe(true);
    } finally {
      await real.close();
    }
  });
});
