/**
 * Guards of the load runners against misbehaving servers: a worker facing empty answers backs off
 * instead of hot-looping, and the drain barrier does not take one failed metrics scrape as idle.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runCell } from '../../src/load/cell.js';
import { waitForIdle } from '../../src/load/drain.js';
import { openaiSession } from '../helpers/load-session.js';
import type { MetricsSample } from '../../src/shapes/engine.js';

function session(baseUrl: string, readMetrics?: () => Promise<MetricsSample | undefined>, hasMetrics = readMetrics !== undefined) {
  return openaiSession(baseUrl, { runId: 'guards', maxOutputTokens: 16, ...(readMetrics ? { readMetrics } : {}), hasMetrics });
}

describe('a server that answers 200 with no tokens at once', () => {
  let server: Server;
  let url = '';
  let posts = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.method === 'GET') return res.end('{"data":[{"id":"m"}]}');
      posts++;
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test('its workers back off: a 1.5 s cell sends tens of requests, not thousands', async () => {
    const run = await runCell(session(url), {
      context: 0,
      concurrency: 2,
      promptFor: () => 'Hi',
      scoutPrompts: ['Hi'],
      windowMs: 1000,
      gateTimeoutMs: 10_000,
      gateSettleMs: 0,
      drainTimeoutMs: 1000,
      metricsIntervalMs: 1000,
    });
    // no worker ever gets a token: once every worker's last 5 requests failed, the gate stops
    // waiting and the window opens (it used to wait out its whole timeout)
    expect(run.gate.timedOut).toBe(false);
    // backoff 50, 100, 200, 400, 800, 1000 ms: at most ~8 requests per worker in 1.5 s
    expect(run.timelines.length).toBeLessThan(30);
    expect(run.timelines.length).toBeGreaterThanOrEqual(2);
    expect(posts).toBe(run.timelines.length + 1); // + the scout
  });
});

describe('a server that answers 500 to every request', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.method === 'GET') return res.end('{"data":[{"id":"m"}]}');
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"boom"}}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test('the gate stops waiting once every worker failed 5 in a row: the cell is measured at once, as failures', async () => {
    const run = await runCell(session(url), {
      context: 0,
      concurrency: 3,
      promptFor: () => 'Hi',
      scoutPrompts: ['Hi'],
      windowMs: 500,
      gateTimeoutMs: 60_000,
      gateSettleMs: 0,
      drainTimeoutMs: 1000,
      metricsIntervalMs: 1000,
    });
    // it stopped on the failures, not on its 60 s timeout (how long that took is the machine's)
    expect(run.gate.timedOut).toBe(false);
    expect(run.timelines.length).toBeGreaterThanOrEqual(15);
    expect(run.timelines.every((t) => t.end?.kind === 'error' && t.end.code === 'http-status' || t.end?.kind === 'aborted')).toBe(true);
  });
});

describe('drain barrier', () => {
  test('one failed scrape while busy is not idle: it waits for an idle sample', async () => {
    const answers: (MetricsSample | undefined)[] = [
      { atMs: 0, running: 3, waiting: 0 },
      undefined,
      { atMs: 0, running: 1, waiting: 0 },
      { atMs: 0, running: 0, waiting: 0 },
    ];
    let calls = 0;
    const s = session('http://127.0.0.1:9', async () => answers[Math.min(calls++, answers.length - 1)]);
    const out = await waitForIdle(s, 5000);
    expect(out).toMatchObject({ timedOut: false, checked: true, last: { running: 0, waiting: 0 } });
    expect(calls).toBe(4);
  });

  test('a server without metrics is taken as drained at once', async () => {
    const out = await waitForIdle(session('http://127.0.0.1:9', async () => undefined, false), 5000);
    expect(out).toMatchObject({ timedOut: false, checked: false });
  });

  test('a server with metrics whose first scrape fails is not idle: it waits for an idle sample', async () => {
    const answers: (MetricsSample | undefined)[] = [undefined, undefined, { atMs: 0, running: 0, waiting: 0 }];
    let calls = 0;
    const out = await waitForIdle(session('http://127.0.0.1:9', async () => answers[Math.min(calls++, answers.length - 1)]), 5000);
    expect(out).toMatchObject({ timedOut: false, checked: true, last: { running: 0, waiting: 0 } });
    expect(calls).toBe(3);
  });

  test('a server with metrics whose scrapes all fail times the barrier out (the cell is marked)', async () => {
    const out = await waitForIdle(session('http://127.0.0.1:9', async () => undefined, true), 300);
    expect(out.timedOut).toBe(true);
    expect(out.checked).toBe(false);
  });

  test('a server that stays busy times the barrier out', async () => {
    const out = await waitForIdle(session('http://127.0.0.1:9', async () => ({ atMs: 0, running: 2, waiting: 1 })), 300);
    expect(out.timedOut).toBe(true);
    expect(out.waitedMs).toBeGreaterThanOrEqual(300);
  });
});

describe('a server that echoes the API key in its error body', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${req.headers.authorization?.slice(7)} --hf-token hf_abc` } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test('the stored failure text carries neither the key nor a secret-named flag value', async () => {
    const { sendRequest } = await import('../../src/load/session.js');
    const { Client } = await import('undici');
    const s = { ...session(url), target: { baseUrl: url, apiKey: 'sk-live-SECRET123' } };
    const client = new Client(url);
    try {
      const t = await sendRequest(s, { id: 'r1', prompt: 'Hi', maxTokens: 4, dispatcher: client });
      expect(t.end).toMatchObject({ kind: 'error', code: 'http-status', httpStatus: 401 });
      const message = t.end?.kind === 'error' ? t.end.message : '';
      expect(message).toContain('Incorrect API key provided');
      expect(message).not.toContain('SECRET123');
      expect(message).not.toContain('hf_abc');
    } finally {
      await client.destroy();
    }
  });
});

describe('readiness gate', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.method === 'GET') return res.end('{"data":[{"id":"m"}]}');
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let n = 0;
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'x ' } }] })}\n\n`);
        if (++n >= 200) {
          clearInterval(timer);
          res.end('data: [DONE]\n\n');
        }
      }, 10);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const cellOf = (hasMetrics: boolean) =>
    runCell(session(url, async () => undefined, hasMetrics), {
      context: 0,
      concurrency: 2,
      promptFor: () => 'Hi',
      scoutPrompts: ['Hi'],
      windowMs: 200,
      gateTimeoutMs: 800,
      gateSettleMs: 100,
      drainTimeoutMs: 300,
      metricsIntervalMs: 100,
    });

  test('failed scrapes of a server that has metrics are not an empty queue: the gate times out and marks the cell', async () => {
    const run = await cellOf(true);
    expect(run.gate.timedOut).toBe(true);
    expect(run.drain.timedOut).toBe(true);
  });

  test('a server without metrics opens the gate once every worker streams', async () => {
    const run = await cellOf(false);
    expect(run.gate.timedOut).toBe(false);
    expect(run.drain.timedOut).toBe(false);
  });
});

describe('fast fail of the readiness gate', () => {
  let server: Server;
  let url = '';
  let posts = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.method === 'GET') return res.end('{"data":[{"id":"m"}]}');
      req.resume();
      // the scout and the first 3 requests of each of the 2 workers are refused; then long streams
      if (++posts <= 7) {
        res.writeHead(429, { 'content-type': 'application/json' });
        return res.end('{"error":{"message":"busy"}}');
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => {
        if (res.destroyed) return clearInterval(timer);
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'x ' } }] })}\n\n`);
      }, 10);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  test('workers that stream again after 3 failures are not "failing": the gate waits for them as usual', async () => {
    const phases: string[] = [];
    const run = await runCell(session(url), {
      context: 0,
      concurrency: 2,
      promptFor: () => 'Hi',
      scoutPrompts: ['Hi'],
      windowMs: 300,
      gateTimeoutMs: 10_000,
      gateSettleMs: 300,
      drainTimeoutMs: 300,
      metricsIntervalMs: 100,
      onPhase: (m) => phases.push(m),
    });
    expect(phases.some((p) => p.includes('every worker'))).toBe(false);
    expect(run.gate.timedOut).toBe(false);
    // both workers were streaming when the window opened
    expect(run.timelines.filter((t) => t.firstTokenMs !== undefined && t.firstTokenMs < run.windowStartMs)).toHaveLength(2);
  });
});
