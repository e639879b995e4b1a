/**
 * The client's own work per SSE event, without sockets or undici (issue 24 item 3): where the µs
 * above undici's dispatch go. 1,024 streams' event-stream sinks (src/client/body-sink.ts) are fed
 * one vLLM-shaped chunk each per round (about 300 bytes, continuous usage, the chunk of
 * perf/client-floor.ts), round after round, so each stream's state is as cold as at 1,024 live
 * streams. Each part is timed alone in a fresh process (so no part shapes the JIT for another),
 * the lowest of 7 runs (the machine is shared):
 *
 * - sse:               the SSE parser only (split, decode the data line's UTF-8);
 * - sse+json:          … and JSON.parse of every event;
 * - sse+json+decode:   … and the vLLM decoder;
 * - sink:              the whole sink: arrival time (client/arrival-clock.ts), JSON.parse, decoder,
 *                      token counter, timeline (how an adapter without a scan is read);
 * - sse+scan:          the SSE parser handing each event's bytes to the vLLM adapter's scan
 *                      (engines/openai-scan.ts): no string, no JSON.parse;
 * - sink+scan:         the whole sink as a cell runs it, with the scan.
 *
 *   npx tsx perf/client-sink.ts [--streams 1024] [--rounds 200]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eventStreamSink } from '../src/client/body-sink.js';
import { SseParser } from '../src/client/sse.js';
import type { StreamRequestOptions } from '../src/client/stream-options.js';
import { decodeOpenAIChunk } from '../src/engines/openai.js';
import { scanOpenAIChunk } from '../src/engines/openai-scan.js';
import type { RequestTimeline } from '../src/shapes/timeline.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive integer`);
  return v;
}

const STREAMS = arg('streams', 1024);
const ROUNDS = arg('rounds', 200);
const head =
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795994958,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":4,"total_tokens":';
const chunk = (n: number): Buffer => Buffer.from(`data: ${head}${4 + n},"completion_tokens":${n},"prompt_tokens_details":{"cached_tokens":0}}}\n\n`);
const role = Buffer.from(
  'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795994958,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}\n\n',
);
const rounds = Array.from({ length: ROUNDS + 1 }, (_, i) => chunk(i + 1));

const PARTS = ['sse', 'sse+json', 'sse+json+decode', 'sink', 'sse+scan', 'sink+scan'] as const;
type Part = (typeof PARTS)[number];

function feeder(part: Part, i: number): (b: Buffer) => void {
  if (part.startsWith('sse')) {
    const onData = (data: string): void => {
      if (part === 'sse' || part === 'sse+scan') return;
      const payload = JSON.parse(data) as unknown;
      if (part === 'sse+json+decode') decodeOpenAIChunk(payload);
    };
    const parser = new SseParser(onData, part === 'sse+scan' ? { onDataBytes: (b, s, e) => scanOpenAIChunk(b, s, e, false) !== undefined } : {});
    return (b) => parser.push(b);
  }
  const timeline: RequestTimeline = { id: `s${i}`, sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0 };
  const opts = { id: `s${i}`, decode: decodeOpenAIChunk, ...(part === 'sink+scan' ? { scan: scanOpenAIChunk } : {}), endsWithDone: true } as unknown as StreamRequestOptions;
  const sink = eventStreamSink(timeline, opts, 'text/event-stream', () => undefined, (_code, message) => {
    throw new Error(message);
  });
  return (b) => sink.data(b);
}

/** ns per event of one fresh set of streams */
function once(part: Part): number {
  const feeds = Array.from({ length: STREAMS }, (_, i) => feeder(part, i));
  for (const f of feeds) f(role);
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < ROUNDS; r++) {
    const b = rounds[r]!;
    for (const f of feeds) f(b);
  }
  return Number(process.hrtime.bigint() - t0) / (ROUNDS * STREAMS);
}

const only = process.argv.indexOf('--part');
if (only >= 0) {
  // a child: one part, its lowest of 7 runs
  const part = process.argv[only + 1] as Part;
  let best = Infinity;
  for (let run = 0; run < 7; run++) best = Math.min(best, once(part));
  process.stdout.write(`${best}\n`);
} else {
  const best = new Map<Part, number>();
  const self = fileURLToPath(import.meta.url);
  for (const p of PARTS) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', self, '--part', p, '--streams', String(STREAMS), '--rounds', String(ROUNDS)], { encoding: 'utf8' });
    best.set(p, Number(out.trim()));
  }
  console.log(`${STREAMS} streams × ${ROUNDS} rounds, ns per event (lowest of 7 runs, each part in its own process)\n`);
  /** what each part adds to */
  const BASE: Record<Part, Part | undefined> = { sse: undefined, 'sse+json': 'sse', 'sse+json+decode': 'sse+json', sink: 'sse+json+decode', 'sse+scan': 'sse', 'sink+scan': 'sse+scan' };
  console.log('| part | ns per event | added to |');
  console.log('|---|---|---|');
  for (const p of PARTS) {
    const ns = best.get(p)!;
    const base = BASE[p];
    const added = base === undefined ? '' : `${ns - best.get(base)! >= 0 ? '+' : ''}${(ns - best.get(base)!).toFixed(0)} over ${base}`;
    console.log(`| ${p} | ${ns.toFixed(0)} | ${added} |`);
  }
}
