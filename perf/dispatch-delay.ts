/**
 * Dispatch delay of the open-loop rate runner (issue 22 "Dispatch keeps time"): how late each
 * request is handed to undici after its scheduled time, and how late it reaches the server, at
 * several rates. A fake OpenAI SSE server runs in a child process and logs each POST's arrival on
 * the same system-wide monotonic clock.
 *
 * Run: npx tsx perf/dispatch-delay.ts [--rates 50,200,500] [--seconds 10] [--tokens 16] [--gap-ms 20] [--threads 1] [--process constant,poisson]
 * `--threads 1,2`: each rate sent from the cell's own thread, then over 2 client threads
 * (rate-threads.ts), with each one's worst-thread loop delay and read lag p99 beside it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { ConnectionPolicy } from '../src/client/connections.js';
import { OpenAIAdapter } from '../src/engines/openai.js';
import { arrivalSchedule } from '../src/load/arrivals.js';
import { runRateCell } from '../src/load/rate-cell.js';
import type { LoadSession } from '../src/load/session.js';
import { distribution } from '../src/metrics/stats.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}
const RATES = arg('rates', '50,200,500').split(',').map(Number);
const SECONDS = Number(arg('seconds', '10'));
const TOKENS = Number(arg('tokens', '16'));
const GAP_MS = Number(arg('gap-ms', '20'));
const THREADS = arg('threads', '1').split(',').map(Number);
const PROCESSES = arg('process', 'constant,poisson').split(',') as Array<'constant' | 'poisson'>;

const serverCode = `
import http from 'node:http';
const now = () => Number(process.hrtime.bigint()) / 1e6;
const [tokens, gapMs] = process.argv.slice(1).map(Number);
const arrivals = new Map();
const server = http.createServer((req, res) => {
  const at = now();
  if (req.url === '/_arrivals') { res.end(JSON.stringify([...arrivals])); arrivals.clear(); return; }
  req.resume();
  if (req.method === 'GET') { res.end('{"data":[{"id":"m"}]}'); return; }
  arrivals.set(req.headers['x-request-id'], at);
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let n = 0;
  const tick = () => {
    if (res.destroyed) return;
    if (n++ < tokens) { res.write('data: {"choices":[{"index":0,"delta":{"content":"x "}}]}\\n\\n'); setTimeout(tick, gapMs); }
    else res.end('data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":' + tokens + '}}\\n\\ndata: [DONE]\\n\\n');
  };
  tick();
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const child = spawn(process.execPath, ['--input-type=module', '-e', serverCode, String(TOKENS), String(GAP_MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
const [portLine] = (await once(child.stdout!, 'data')) as [Buffer];
const url = `http://127.0.0.1:${Number(portLine.toString().trim())}`;

const session: LoadSession = {
  target: { baseUrl: url },
  adapter: new OpenAIAdapter(),
  facts: { engine: { value: 'openai', source: 'perf' }, model: { value: 'm', source: 'perf' } },
  model: 'm',
  endpoint: 'chat',
  maxOutputTokens: TOKENS,
  timeouts: { headersMs: 10_000, stallMs: 10_000, unreachableRetryMs: 0 },
  runId: 'perf',
  connections: new ConnectionPolicy(),
  hasMetrics: false,
};

const f = (x: number) => x.toFixed(2);
console.log(`open-loop dispatch delay: ${SECONDS} s windows, ${TOKENS} tokens ${GAP_MS} ms apart per request (${((TOKENS * GAP_MS) / 1000).toFixed(2)} s each); server in another process`);
console.log('| rate (req/s) | process | client threads | requests | send − scheduled p50 / p99 / max (ms) | server arrival − scheduled p50 / p99 (ms) | peak in flight | loop delay p99 / read lag p99 (worst thread, ms) |');
console.log('|---|---|---|---|---|---|---|---|');
for (const rate of RATES) {
  for (const [kind, threads] of PROCESSES.flatMap((k) => THREADS.map((t) => [k, t] as const))) {
    const schedule = arrivalSchedule({ rate, process: { kind }, seed: 1, windowMs: SECONDS * 1000, rampMs: 1000 });
    const run = await runRateCell(session, {
      context: 0, rate, schedule, promptFor: (i) => `p${i}`, scoutPrompts: ['warm'], windowMs: SECONDS * 1000,
      maxInFlight: Math.ceil(rate * ((TOKENS * GAP_MS) / 1000) * 3 + 16), drainTimeoutMs: 1000, metricsIntervalMs: 1000, threads,
    });
    const arrivals = new Map<string, number>((await (await fetch(`${url}/_arrivals`)).json()) as Array<[string, number]>);
    const inWindow = run.requests.filter((r) => r.scheduledMs >= run.windowStartMs);
    const sendDelays = inWindow.map((r) => r.timeline.sendMs - r.scheduledMs);
    const send = { ...distribution(sendDelays)!, max: Math.max(...sendDelays) };
    const atServer = distribution(inWindow.flatMap((r) => (arrivals.has(r.timeline.id) ? [arrivals.get(r.timeline.id)! - r.scheduledMs] : [])))!;
    const self = `${run.loopDelayMs ? f(run.loopDelayMs.p99) : '–'} / ${run.arrivalLagMs ? f(run.arrivalLagMs.p99) : '–'}`;
    console.log(`| ${rate} | ${kind} | ${threads} | ${inWindow.length} | ${f(send.median)} / ${f(send.p99)} / ${f(send.max)} | ${f(atServer.median)} / ${f(atServer.p99)} | ${run.ceiling.peakInFlight} | ${self} |`);
  }
}
child.kill();
