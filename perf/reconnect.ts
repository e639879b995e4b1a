/**
 * What a server that closes the connection after every streamed response costs the load generator,
 * and how much opening the worker's next connection at the stream's end (pool.prepareNext) saves.
 *
 * A server in a child process streams short responses (8 tokens, 1 ms apart) and stamps the
 * monotonic time each request reaches it (the same system-wide clock as the client's). One worker
 * sends requests back to back; per request we take the gap from the previous stream's end at the
 * client to (a) the request's headers being written, (b) the server receiving it. Modes:
 *   keep-alive      the server keeps connections: the baseline
 *   close, learned  the server closes after each stream; the client knows it (Connection: close),
 *                   the next connection is opened when the next request is sent
 *   close, prepared the same, with the next connection opened as the stream ends
 *   close, resend   the server closes; the client does not know it: each request is written to the
 *                   closed connection, fails, and is resent (what an unlearned client pays)
 *
 * Run: npx tsx perf/reconnect.ts [--requests 400]
 * With --url http://127.0.0.1:8080 (a llama.cpp server) it measures the same modes against it
 * (the server's gap then includes its own work: HTTP parse, tokenizer, slot assignment).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { buildConnector, Client } from 'undici';
import { monoMs } from '../src/clock.js';
import { ConnectionPolicy } from '../src/client/connections.js';
import { NextConnection } from '../src/client/pool.js';
import { streamRequest } from '../src/client/stream.js';
import type { RequestTimeline } from '../src/shapes/timeline.js';
import { decodeLlamacppChunk } from '../src/engines/llamacpp.js';
import { distribution } from '../src/metrics/stats.js';

const argValue = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const REQUESTS = Number(argValue('requests') ?? 400);
const REAL_URL = argValue('url');
if (!Number.isInteger(REQUESTS) || REQUESTS < 10) throw new Error(`--requests must be an integer ≥ 10 (got ${argValue('requests')})`);

const serverCode = `
import http from 'node:http';
const now = () => Number(process.hrtime.bigint()) / 1e6;
const closeAfter = process.argv[1] === 'close';
const arrivals = [];
const chunk = (i) => 'data: {"choices":[{"index":0,"delta":{"content":"t' + i + ' "}}]}\\n\\n';
const server = http.createServer((req, res) => {
  arrivals.push(now());
  req.resume();
  req.on('end', async () => {
    if (req.method === 'GET') { res.writeHead(200, {'content-type':'application/json'}); res.end('{"data":[]}'); return; }
    res.writeHead(200, {'content-type':'text/event-stream'});
    for (let i = 0; i < 8; i++) { res.write(chunk(i)); await new Promise((r) => setTimeout(r, 1)); }
    const socket = res.socket;
    res.end('data: [DONE]\\n\\n');
    if (closeAfter) res.once('finish', () => socket?.destroySoon());
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => process.stdout.write('PORT ' + server.address().port + '\\n'));
process.stdin.on('data', () => { process.stdout.write('ARRIVALS ' + JSON.stringify(arrivals) + '\\n'); });
`;

interface ModeResult {
  mode: string;
  endToSentMs?: number;
  endToServerMs?: number;
  /** to the next request's first token: how long the worker's stream idles between requests */
  endToFirstTokenMs?: number;
  resent: number;
  failed: number;
}

async function startServer(close: boolean): Promise<{ origin: string; arrivals(): Promise<number[]>; stop(): void }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', serverCode, close ? 'close' : 'keep'], { stdio: ['pipe', 'pipe', 'inherit'] });
  let buf = '';
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
      wake?.();
    }
  });
  const next = async (prefix: string): Promise<string> => {
    for (;;) {
      const at = lines.findIndex((l) => l.startsWith(prefix));
      if (at >= 0) return lines.splice(at, 1)[0]!.slice(prefix.length);
      await new Promise<void>((r) => (wake = r));
    }
  };
  const port = await next('PORT ');
  return {
    origin: `http://127.0.0.1:${port}`,
    arrivals: async () => {
      child.stdin.write('x');
      return JSON.parse(await next('ARRIVALS ')) as number[];
    },
    stop: () => child.kill(),
  };
}

const BODY = { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, stream: true, ignore_eos: true };

/** One worker as the cell runner has it (pool.ts): a Client on a NextConnection connector. */
async function runMode(mode: string, origin: string, policy: ConnectionPolicy | undefined, prepare: boolean): Promise<{ timelines: RequestTimeline[] }> {
  const next = new NextConnection(buildConnector({ timeout: 10_000 }));
  const client = new Client(origin, { pipelining: 1, connect: next.connect });
  const warm = await client.request({ path: '/v1/models', method: 'GET' });
  await warm.body.dump();
  const timelines: RequestTimeline[] = [];
  try {
    for (let i = 0; i < REQUESTS; i++) {
      timelines.push(
        await streamRequest({
          id: `${mode.replace(/\W+/g, '-')}-${i}`,
          dispatcher: client,
          origin,
          path: '/v1/chat/completions',
          body: BODY,
          decode: decodeLlamacppChunk,
          endsWithDone: true,
          timeouts: { headersMs: 10_000, stallMs: 10_000 },
          ...(policy ? { connections: policy } : {}),
          ...(prepare ? { onConnectionClosing: () => next.prepare() } : {}),
        }),
      );
    }
  } finally {
    next.discard();
    await client.destroy();
  }
  return { timelines };
}

function summarize(mode: string, timelines: RequestTimeline[], arrivals?: number[]): ModeResult {
  const sent: number[] = [];
  const atServer: number[] = [];
  const toFirst: number[] = [];
  // skip the first 10: JIT and the policy still learning
  for (let i = 10; i < timelines.length; i++) {
    const prevEnd = timelines[i - 1]!.end?.atMs;
    const t = timelines[i]!;
    if (prevEnd === undefined || t.sentHeadersMs === undefined) continue;
    sent.push(t.sentHeadersMs - prevEnd);
    if (t.firstTokenMs !== undefined) toFirst.push(t.firstTokenMs - prevEnd);
    if (arrivals) {
      // the last arrival at or after the request's (re)send: the one the server answered
      const a = arrivals.filter((x) => x >= t.sendMs - 0.001).sort((x, y) => x - y)[0];
      if (a !== undefined) atServer.push(a - prevEnd);
    }
  }
  return {
    mode,
    endToSentMs: distribution(sent)?.median,
    endToServerMs: distribution(atServer)?.median,
    endToFirstTokenMs: distribution(toFirst)?.median,
    resent: timelines.filter((t) => t.connectionRetries).length,
    failed: timelines.filter((t) => t.end?.kind === 'error').length,
  };
}

async function local(): Promise<ModeResult[]> {
  const out: ModeResult[] = [];
  const cases: Array<{ mode: string; close: boolean; policy: () => ConnectionPolicy | undefined; prepare: boolean }> = [
    { mode: 'keep-alive', close: false, policy: () => new ConnectionPolicy(), prepare: true },
    { mode: 'close, learned', close: true, policy: learned, prepare: false },
    { mode: 'close, prepared', close: true, policy: learned, prepare: true },
    // no policy to learn from: every request is written to the closed connection and resent
    { mode: 'close, resend', close: true, policy: () => undefined, prepare: false },
  ];
  for (const c of cases) {
    const server = await startServer(c.close);
    try {
      const { timelines } = await runMode(c.mode, server.origin, c.policy(), c.prepare);
      out.push(summarize(c.mode, timelines, await server.arrivals()));
    } finally {
      server.stop();
    }
  }
  return out;
}

function learned(): ConnectionPolicy {
  const p = new ConnectionPolicy();
  p.closesAfterResponse = true;
  return p;
}

async function real(url: string): Promise<ModeResult[]> {
  const out: ModeResult[] = [];
  for (const c of [
    { mode: 'close, learned', policy: learned, prepare: false },
    { mode: 'close, prepared', policy: learned, prepare: true },
    { mode: 'close, resend', policy: () => undefined, prepare: false },
  ]) {
    const { timelines } = await runMode(c.mode, url, c.policy(), c.prepare);
    out.push(summarize(c.mode, timelines));
  }
  return out;
}

const started = monoMs();
const results = REAL_URL ? await real(REAL_URL.replace(/\/+$/, '')) : await local();
const ms = (v: number | undefined): string => (v === undefined ? '—' : v.toFixed(3));
console.log(
  `${REQUESTS} requests per mode, one worker${REAL_URL ? ` against ${REAL_URL}` : ', local server in a child process'}; medians in ms from the previous stream's end`,
);
console.log('| mode | to headers written | to the server receiving it | to its first token | resent | failed |');
console.log('|---|---|---|---|---|---|');
for (const r of results) console.log(`| ${r.mode} | ${ms(r.endToSentMs)} | ${ms(r.endToServerMs)} | ${ms(r.endToFirstTokenMs)} | ${r.resent} | ${r.failed} |`);
console.log(`(${((monoMs() - started) / 1000).toFixed(1)} s)`);
await once(process, 'beforeExit').catch(() => undefined);
