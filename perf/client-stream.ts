/**
 * End-to-end accuracy and cost of the streaming client (CLIENT-PERF.md setup, smaller by default):
 * a fake OpenAI SSE server in a child process stamps each token with its monotonic send time; the
 * client (one undici Client per stream, connections pre-opened) records arrival times. Errors are
 * client arrival minus server send time (the same system-wide monotonic clock).
 *
 * Run: npx tsx perf/client-stream.ts [--streams 256] [--tokens 100] [--gap-ms 20] [--ttft-ms 100] [--rounds 2]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { monoMs } from '../src/clock.js';
import { createWorkerDispatchers } from '../src/client/pool.js';
import { streamRequest } from '../src/client/stream.js';
import type { RequestTimeline } from '../src/shapes/timeline.js';
import type { DecodedChunk } from '../src/shapes/engine.js';
import { EventLoopMonitor } from '../src/load/loop-monitor.js';
import { distribution } from '../src/metrics/stats.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number (got ${process.argv[i + 1]})`);
  return v;
}
const STREAMS = arg('streams', 256);
const TOKENS = arg('tokens', 100);
const GAP_MS = arg('gap-ms', 20);
const TTFT_MS = arg('ttft-ms', 100);
/** rounds of all streams; figures are from the last one (the first warms JIT on both sides) */
const ROUNDS = arg('rounds', 2);

const serverCode = `
import http from 'node:http';
const now = () => Number(process.hrtime.bigint()) / 1e6;
const [tokens, gapMs, ttftMs] = process.argv.slice(1).map(Number);
const server = http.createServer((req, res) => {
  const receivedMs = now();
  req.resume();
  req.on('end', () => {
    if (req.method === 'GET') { res.writeHead(200, {'content-type':'application/json'}); res.end('{"data":[]}'); return; }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"choices":[{"delta":{"role":"assistant","content":""}}],"r":' + receivedMs + '}\\n\\n');
    let i = 0;
    const next = () => {
      if (res.destroyed) return;
      if (i === tokens) { res.end('data: [DONE]\\n\\n'); return; }
      i++;
      res.write('data: {"choices":[{"delta":{"content":" tok"}}],"t":' + now() + '}\\n\\n');
      setTimeout(next, gapMs);
    };
    setTimeout(next, ttftMs);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const child = spawn(process.execPath, ['--input-type=module', '-e', serverCode, String(TOKENS), String(GAP_MS), String(TTFT_MS)], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [portLine] = (await once(child.stdout!, 'data')) as [Buffer];
const origin = `http://127.0.0.1:${Number(portLine.toString().trim())}`;

const pool = createWorkerDispatchers(origin, STREAMS);
const pre = await pool.preconnect();
console.log(`preconnect: ${pre.opened} opened, ${pre.failed} failed`);

interface Truth {
  receivedMs?: number;
  sentMs: number[];
}
let truths: Truth[] = [];
let timelines: RequestTimeline[] = [];
const monitor = new EventLoopMonitor(10);
let cpu0 = process.cpuUsage();
let wall0 = monoMs();

for (let round = 1; round <= ROUNDS; round++) {
  truths = [];
  monitor.start();
  cpu0 = process.cpuUsage();
  wall0 = monoMs();
  timelines = await Promise.all(
    pool.clients.map((dispatcher, i) => {
      const truth: Truth = { sentMs: [] };
      truths.push(truth);
      const decode = (payload: unknown): DecodedChunk => {
        const p = payload as { r?: number; t?: number; choices: Array<{ delta: { content?: string } }> };
        if (p.r !== undefined) truth.receivedMs = p.r;
        if (p.t !== undefined) truth.sentMs.push(p.t);
        const c = p.choices[0]?.delta.content;
        return { hasText: typeof c === 'string' && c.length > 0, reasoning: false };
      };
      return streamRequest({
        id: `perf-${round}-${i}`,
        dispatcher,
        origin,
        path: '/v1/chat/completions',
        body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] },
        decode,
        endsWithDone: true,
        timeouts: { headersMs: 60_000, stallMs: 60_000 },
      });
    }),
  );
}

const wallMs = monoMs() - wall0;
const cpu = process.cpuUsage(cpu0);
const loop = monitor.stop();
await pool.destroyAll();
child.kill();

const ttftErr: number[] = [];
const tokenErr: number[] = [];
const sendDelay: number[] = [];
const sentHeadersDelay: number[] = [];
let delivered = 0;
let done = 0;
timelines.forEach((t, i) => {
  const truth = truths[i]!;
  if (t.end?.kind === 'done') done++;
  delivered += t.chunkMs.length;
  const n = Math.min(t.chunkMs.length, truth.sentMs.length);
  for (let k = 0; k < n; k++) tokenErr.push(t.chunkMs[k]! - truth.sentMs[k]!);
  if (n > 0) ttftErr.push(t.chunkMs[0]! - truth.sentMs[0]!);
  if (truth.receivedMs !== undefined) sendDelay.push(truth.receivedMs - t.sendMs);
  if (t.sentHeadersMs !== undefined) sentHeadersDelay.push(t.sentHeadersMs - t.sendMs);
});

const fmt = (d: ReturnType<typeof distribution>): string =>
  d ? `median ${d.median.toFixed(2)} / p90 ${d.p90.toFixed(2)} / p99 ${d.p99.toFixed(2)} ms (n=${d.samples})` : 'n/a';
const cpuMs = (cpu.user + cpu.system) / 1000;
console.log(`streams ${STREAMS}, ${TOKENS} tokens each, ${GAP_MS} ms apart, first after ${TTFT_MS} ms (Node ${process.version})`);
console.log(`completed ${done}/${STREAMS}; tokens delivered ${delivered}/${STREAMS * TOKENS} (${((100 * delivered) / (STREAMS * TOKENS)).toFixed(1)} %)`);
console.log(`token arrival error (client − server send): ${fmt(distribution(tokenErr))}`);
console.log(`first-token arrival error:                 ${fmt(distribution(ttftErr))}`);
console.log(`send → server received:                    ${fmt(distribution(sendDelay))}`);
console.log(`send → headers written (sendHeaders):      ${fmt(distribution(sentHeadersDelay))}`);
console.log(`client CPU ${((100 * cpuMs) / wallMs).toFixed(0)} % of one core over ${(wallMs / 1000).toFixed(1)} s; ${((1000 * cpuMs) / Math.max(1, delivered + 2 * STREAMS)).toFixed(1)} µs CPU per SSE event`);
console.log(`event-loop delay: ${loop ? `p50 ${loop.p50.toFixed(2)} / p99 ${loop.p99.toFixed(2)} / max ${loop.max.toFixed(2)} ms` : 'n/a'}`);
