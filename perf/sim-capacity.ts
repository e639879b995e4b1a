/**
 * How many concurrent streams the sim sustains on one core, and how late its steps run.
 * The sim runs in a worker thread (its own event loop, one core); this thread is the client and
 * only counts SSE events. For each stream count: open all streams, let them settle, reset the
 * sim's lateness record, measure for WINDOW_S, then disconnect everything.
 *
 *   npx tsx perf/sim-capacity.ts [streams,streams,...] [windowSeconds]
 * Goal: 1,000 streams at 50 tok/s each with step lateness p99 under 2 ms.
 */

import { Agent, request } from 'node:http';
import { monoMs } from '../src/clock.js';
import { startSim } from '../src/sim/index.js';

const levels = (process.argv[2] ?? '250,500,1000,1500').split(',').map(Number);
const WINDOW_S = Number(process.argv[3] ?? 10);
const STEP_MS = 20; // 50 tok/s per stream

const sim = await startSim({
  profile: 'tiny',
  thread: true,
  overrides: {
    stepBaseMs: STEP_MS,
    maxRunningRequests: 100_000,
    kvCapacityTokens: 1_000_000_000,
    maxModelLen: 10_000_000,
    maxBatchedTokens: 1_000_000,
    prefixCaching: false,
    eosProbability: 0,
  },
});

async function json(path: string, method = 'GET'): Promise<any> {
  const r = await fetch(`${sim.url}${path}`, { method });
  return r.json();
}

const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
let events = 0;

function openStream(i: number): () => void {
  const payload = JSON.stringify({ prompt: `stream ${i}`, max_tokens: 200_000, ignore_eos: true, stream: true });
  const req = request(`${sim.url}/v1/completions`, {
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-request-id': `cap-${i}` },
  });
  req.on('response', (res) => {
    res.on('data', (b: Buffer) => {
      // count events without parsing: one "data: " per event
      let at = b.indexOf('data: ');
      while (at >= 0) {
        events++;
        at = b.indexOf('data: ', at + 6);
      }
    });
    res.on('error', () => {});
  });
  req.on('error', () => {});
  req.end(payload);
  return () => req.destroy();
}

const rows: string[] = [];
for (const n of levels) {
  const closers: (() => void)[] = [];
  for (let i = 0; i < n; i++) closers.push(openStream(i));
  // wait until all are running
  const t0 = Date.now();
  while (Date.now() - t0 < 30_000) {
    const s = await json('/_sim/state');
    if (s.running >= n) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 1000));
  await json('/_sim/reset', 'POST');
  const s0 = await json('/_sim/state');
  const e0 = events;
  const m0 = monoMs();
  const cpu0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, WINDOW_S * 1000));
  const s1 = await json('/_sim/state');
  const elapsedS = (monoMs() - m0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const tokensPerSecond = (s1.counters.generationTokensTotal - s0.counters.generationTokensTotal) / elapsedS;
  const stepsPerSecond = (s1.stepCount - s0.stepCount) / elapsedS;
  const clientEventsPerSecond = (events - e0) / elapsedS;
  const lat = s1.stepLatenessMs;
  const row =
    `| ${n} | ${s1.running} | ${tokensPerSecond.toFixed(0)} | ${(tokensPerSecond / n).toFixed(1)} | ${stepsPerSecond.toFixed(1)} | ` +
    `${lat.p50?.toFixed(2)} | ${lat.p99?.toFixed(2)} | ${lat.max?.toFixed(2)} | ${(s1.eventLoopUtilization * 100).toFixed(0)} % | ` +
    `${clientEventsPerSecond.toFixed(0)} | ${(((cpu.user + cpu.system) / 1e6 / elapsedS) * 100).toFixed(0)} % |`;
  rows.push(row);
  console.log(row);
  for (const c of closers) c();
  const t1 = Date.now();
  while (Date.now() - t1 < 10_000) {
    const s = await json('/_sim/state');
    if (s.running === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
}

console.log(`\nsim capacity, ${STEP_MS} ms steps (target ${1000 / STEP_MS} tok/s per stream), window ${WINDOW_S} s, sim in its own thread`);
console.log('| streams | running | sim tok/s | tok/s per stream | steps/s | step late p50 ms | p99 ms | max ms | sim loop busy | client events/s | process CPU (both threads) |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
agent.destroy();
await sim.close();
