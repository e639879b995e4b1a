/**
 * SSE parser throughput (events/s) on one core: one event per buffer (each socket read carries
 * one event, as with a fast server and many streams) and batched (many events per read).
 * Run: npx tsx perf/client-parse.ts
 */
import { Bench } from 'tinybench';
import { SseParser } from '../src/client/sse.js';
import { TokenCounter } from '../src/client/token-count.js';
import type { RequestTimeline } from '../src/shapes/timeline.js';
import type { DecodedChunk } from '../src/shapes/engine.js';

const EVENTS = 1000;

/* a vLLM chat chunk with continuous usage, ~300 bytes */
function chunk(i: number): string {
  return `data: ${JSON.stringify({
    id: 'chatcmpl-0123456789abcdef',
    object: 'chat.completion.chunk',
    created: 1730000000,
    model: 'meta-llama/Llama-3.1-8B-Instruct',
    choices: [{ index: 0, delta: { content: ` tok${i}` }, logprobs: null, finish_reason: null }],
    usage: { prompt_tokens: 8192, total_tokens: 8192 + i + 1, completion_tokens: i + 1 },
  })}\n\n`;
}

const perBuffer = Array.from({ length: EVENTS }, (_, i) => Buffer.from(chunk(i)));
const batched = Buffer.concat(perBuffer);
const bytesPerEvent = batched.length / EVENTS;

/* eslint-disable @typescript-eslint/no-explicit-any */
function decode(payload: unknown): DecodedChunk {
  const p = payload as any;
  const c = p.choices?.[0]?.delta?.content;
  const out: DecodedChunk = { hasText: typeof c === 'string' && c.length > 0, reasoning: false };
  if (p.usage) out.usage = { promptTokens: p.usage.prompt_tokens, completionTokens: p.usage.completion_tokens };
  return out;
}

let sink = 0;
const noop = (d: string): void => {
  sink += d.length;
};
const withJson = (d: string): void => {
  sink += (JSON.parse(d) as { created: number }).created & 1;
};

function freshTimeline(): RequestTimeline {
  return { id: 'x', sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0 };
}

const bench = new Bench({ time: 1500, warmup: true });
bench
  .add('one event per buffer, parse only', () => {
    const p = new SseParser(noop);
    for (const b of perBuffer) p.push(b);
  })
  .add('one event per buffer, + JSON.parse', () => {
    const p = new SseParser(withJson);
    for (const b of perBuffer) p.push(b);
  })
  .add('one event per buffer, + JSON.parse + decode + token count', () => {
    const t = freshTimeline();
    const counter = new TokenCounter(t);
    let now = 0;
    const p = new SseParser((d) => {
      counter.add(decode(JSON.parse(d)), now);
    });
    for (const b of perBuffer) {
      now += 1;
      p.push(b);
    }
  })
  .add('batched (1000 events per buffer), parse only', () => {
    const p = new SseParser(noop);
    p.push(batched);
  })
  .add('batched (1000 events per buffer), + JSON.parse', () => {
    const p = new SseParser(withJson);
    p.push(batched);
  })
  .add('split every 7 bytes, parse only', () => {
    const p = new SseParser(noop);
    for (let i = 0; i < batched.length; i += 7) p.push(batched.subarray(i, i + 7));
  });

await bench.run();

console.log(`SSE parser throughput, ${EVENTS} events of ${bytesPerEvent.toFixed(0)} bytes per task run (Node ${process.version})`);
const rows = bench.tasks.map((task) => {
  const r = task.result;
  if (r.state !== 'completed' && r.state !== 'aborted-with-statistics') return { task: task.name, state: r.state };
  const eventsPerSecond = EVENTS / (r.period / 1000);
  return {
    task: task.name,
    'events/s': Math.round(eventsPerSecond).toLocaleString('en-US'),
    'µs/event': ((r.period * 1000) / EVENTS).toFixed(3),
    'MB/s': ((eventsPerSecond * bytesPerEvent) / 1e6).toFixed(0),
    runs: r.latency.samplesCount ?? '',
  };
});
console.table(rows);
if (sink === -1) console.log(sink);
