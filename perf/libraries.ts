/**
 * Our hand-written parsers against the npm libraries that do the same job (issue 20, item 7), for
 * correctness on the texts this project reads, and CPU. The figures are in docs/libraries.md.
 *
 *   npx tsx perf/libraries.ts prom   Prometheus text: src/engines/prometheus.ts against
 *                                    parse-prometheus-text-format and prom2javascript, on the
 *                                    engine fixtures (test/fixtures/engines/*.txt), the simulator's
 *                                    /metrics of every personality that has one (after a few
 *                                    requests, so histograms are filled) and the edge cases of
 *                                    test/engines/prometheus.test.ts. Samples are compared as a
 *                                    multiset of `name{sorted labels} value`; then µs per body.
 *   npx tsx perf/libraries.ts sse    SSE: src/client/sse.ts against eventsource-parser (fed through
 *                                    a streaming TextDecoder, as its string API needs) on the byte
 *                                    cases of test/client/sse.test.ts, each split whole, byte by byte
 *                                    and 40 pseudo-random ways: the same events, and each event
 *                                    dispatched during the same push (the client stamps a token's
 *                                    arrival at dispatch). Then single-core events/s (tinybench).
 * `--no-cpu` stops after the correctness tables.
 * CPU per event at 1,024 streams: `npx tsx perf/client-floor.ts --readers dispatch+sse+json,dispatch+esp+json`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { getMetricsFromIterator } from 'prom2javascript';
import { Bench } from 'tinybench';
import { SseParser } from '../src/client/sse.js';
import { parsePrometheus } from '../src/engines/prometheus.js';
import { startSim } from '../src/sim/index.js';
import type { SimPersonality } from '../src/sim/profiles.js';

const root = join(import.meta.dirname, '..');

/** a task's mean time per run, in ms; undefined when it did not complete */
function periodMs(task: Bench['tasks'][number]): number | undefined {
  const r = task.result;
  return r.state === 'completed' || r.state === 'aborted-with-statistics' ? r.period : undefined;
}

// ---------------------------------------------------------------- Prometheus

/** `+Inf` and friends, as the exposition format writes them; Number() reads none of them. */
function promNumber(s: string | undefined): number {
  if (s === undefined) return NaN;
  const t = s.trim();
  if (/^\+?inf$/i.test(t)) return Infinity;
  if (/^-inf$/i.test(t)) return -Infinity;
  return Number(t);
}

function key(name: string, labels: Record<string, string> | undefined, value: number): string {
  const l = Object.entries(labels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(',');
  return `${name}{${l}} ${Object.is(value, NaN) ? 'NaN' : String(value)}`;
}

function ours(text: string): string[] {
  return parsePrometheus(text).samples.map((s) => key(s.name, s.labels, s.value));
}

/** parse-prometheus-text-format's families, flattened back to samples (histogram/summary parts by their suffixes). */
function pptf(text: string): string[] {
  const out: string[] = [];
  for (const f of parsePrometheusTextFormat(text)) {
    for (const m of f.metrics) {
      if (m.buckets) {
        for (const [le, v] of Object.entries(m.buckets)) out.push(key(`${f.name}_bucket`, { ...m.labels, le }, promNumber(v)));
        if (m.count !== undefined) out.push(key(`${f.name}_count`, m.labels, promNumber(m.count)));
        if (m.sum !== undefined) out.push(key(`${f.name}_sum`, m.labels, promNumber(m.sum)));
      } else if (m.quantiles) {
        for (const [q, v] of Object.entries(m.quantiles)) out.push(key(f.name, { ...m.labels, quantile: q }, promNumber(v)));
        if (m.count !== undefined) out.push(key(`${f.name}_count`, m.labels, promNumber(m.count)));
        if (m.sum !== undefined) out.push(key(`${f.name}_sum`, m.labels, promNumber(m.sum)));
      } else out.push(key(f.name, m.labels, promNumber(m.value)));
    }
  }
  return out;
}

/** prom2javascript's families (an async line iterator), flattened the same way. */
async function p2j(text: string): Promise<string[]> {
  const metrics = await getMetricsFromIterator(text.split('\n')[Symbol.iterator]());
  const out: string[] = [];
  for (const [name, m] of Object.entries(metrics)) {
    for (const d of m.data as Array<Record<string, unknown>>) {
      const labels = d.labels as Record<string, string>;
      if (d.buckets) {
        for (const [le, v] of Object.entries(d.buckets as Record<string, number>)) out.push(key(`${name}_bucket`, { ...labels, le }, v));
        out.push(key(`${name}_count`, labels, d.count as number));
        if (d.sum !== undefined) out.push(key(`${name}_sum`, labels, d.sum as number));
      } else if (d.quantiles) {
        for (const [q, v] of Object.entries(d.quantiles as Record<string, number>)) out.push(key(name, { ...labels, quantile: q }, v));
        if (d.count !== undefined) out.push(key(`${name}_count`, labels, d.count as number));
        if (d.sum !== undefined) out.push(key(`${name}_sum`, labels, d.sum as number));
      } else out.push(key(name, labels, d.value as number));
    }
  }
  return out;
}

/** Samples one side has and the other lacks (multisets). */
function diff(a: string[], b: string[]): { missing: string[]; extra: string[] } {
  const count = new Map<string, number>();
  for (const k of a) count.set(k, (count.get(k) ?? 0) + 1);
  const extra: string[] = [];
  for (const k of b) {
    const n = count.get(k) ?? 0;
    if (n > 0) count.set(k, n - 1);
    else extra.push(k);
  }
  const missing = [...count].flatMap(([k, n]) => Array<string>(n).fill(k));
  return { missing, extra };
}

/** Edge cases of test/engines/prometheus.test.ts, and what engines write that a parser may trip on. */
const EDGE_CASES: Record<string, string> = {
  'escapes, braces and commas in label values, trailing comma': 'm{path="C:\\\\dir",msg="say \\"hi\\", then\\nbye",set="{a,b}",} 3\n',
  'spaces inside braces and around the value': 'm { a = "1" , b="2" }   7  \n',
  'timestamps': 'a:b_c{x="1",y="two"} 2.5e3 1700000000000\n',
  '+Inf, -Inf, NaN values': 'h_bucket{le="+Inf"} +Inf\ng -Inf\nn NaN\n',
  'CRLF line ends, comments, # EOF': '# a comment\r\n\r\n# TYPE x gauge\r\nx{r="0"} 1\r\nx{r="1"} NaN\r\nx{r="2"} 2\r\n# EOF\r\n',
  'garbage among samples (an HTML error page)': '<html>oops</html>\nok 1\n',
  'a malformed label set': 'bad{a="1" 2\nok 1\n',
};

async function simBodies(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const runs: Array<{ label: string; personality: SimPersonality; overrides?: Record<string, unknown> }> = [
    { label: 'vllm', personality: 'vllm' },
    { label: 'sglang', personality: 'sglang' },
    { label: 'llamacpp (b4748 names)', personality: 'llamacpp' },
    { label: 'llamacpp (current names)', personality: 'llamacpp', overrides: { llamacppMetrics: 'current' } },
    { label: 'tgi', personality: 'tgi' },
    { label: 'trtllm', personality: 'trtllm' },
    { label: 'ollama', personality: 'ollama' },
  ];
  for (const r of runs) {
    const sim = await startSim({ profile: 'tiny', personality: r.personality, ...(r.overrides ? { overrides: r.overrides } : {}) });
    try {
      const models = (await (await fetch(`${sim.url}/v1/models`)).json()) as { data?: Array<{ id: string }> };
      const model = models.data?.[0]?.id ?? 'm';
      await Promise.all(
        [0, 1, 2].map(() =>
          fetch(`${sim.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 }),
          }).then((res) => res.text()),
        ),
      );
      for (const path of ['/metrics', '/prometheus/metrics']) {
        const res = await fetch(`${sim.url}${path}`);
        const text = await res.text();
        if (res.ok && text.includes('# TYPE')) {
          out[`sim ${r.label} ${path}`] = text;
          break;
        }
      }
    } finally {
      await sim.close();
    }
  }
  return out;
}

async function prom(): Promise<void> {
  const fixtures = join(root, 'test', 'fixtures', 'engines');
  const bodies: Record<string, string> = {};
  for (const f of readdirSync(fixtures).filter((f) => f.endsWith('.txt')).sort()) bodies[`fixture ${f}`] = readFileSync(join(fixtures, f), 'utf8');
  Object.assign(bodies, await simBodies());
  for (const [k, v] of Object.entries(EDGE_CASES)) bodies[`edge: ${k}`] = v;

  console.log('| text | samples (ours) | parse-prometheus-text-format | prom2javascript |');
  console.log('|---|---|---|---|');
  const notes: string[] = [];
  for (const [name, text] of Object.entries(bodies)) {
    const mine = ours(text);
    const cell = (label: string, theirs: string[] | Error): string => {
      if (theirs instanceof Error) {
        notes.push(`${label} on "${name}": threw ${theirs.message.slice(0, 100)}`);
        return 'throws';
      }
      const d = diff(mine, theirs);
      if (d.missing.length + d.extra.length === 0) return 'same';
      notes.push(`${label} on "${name}": lacks ${JSON.stringify(d.missing.slice(0, 3))}${d.missing.length > 3 ? ` (+${d.missing.length - 3})` : ''}; adds ${JSON.stringify(d.extra.slice(0, 3))}${d.extra.length > 3 ? ` (+${d.extra.length - 3})` : ''}`);
      return `${d.missing.length} lacking, ${d.extra.length} extra`;
    };
    let a: string[] | Error;
    try {
      a = pptf(text);
    } catch (e) {
      a = e as Error;
    }
    let b: string[] | Error;
    try {
      b = await p2j(text);
    } catch (e) {
      b = e as Error;
    }
    console.log(`| ${name} | ${mine.length} | ${cell('parse-prometheus-text-format', a)} | ${cell('prom2javascript', b)} |`);
  }
  console.log('\n' + notes.map((n) => `- ${n}`).join('\n'));

  if (noCpu) return;
  // CPU: the largest engine body (the simulator's vLLM /metrics), parsed whole
  const largest = Object.entries(bodies).sort((x, y) => y[1].length - x[1].length)[0]!;
  const bench = new Bench({ time: 1000, warmup: true });
  bench
    .add('ours', () => void parsePrometheus(largest[1]))
    .add('parse-prometheus-text-format', () => void parsePrometheusTextFormat(largest[1]))
    .add('prom2javascript', async () => void (await getMetricsFromIterator(largest[1].split('\n')[Symbol.iterator]())));
  await bench.run();
  console.log(`\nCPU on "${largest[0]}" (${largest[1].length} bytes, ${ours(largest[1]).length} samples), one core:`);
  for (const t of bench.tasks) console.log(`- ${t.name}: ${periodMs(t) === undefined ? t.result.state : `${(periodMs(t)! * 1000).toFixed(1)} µs per body`}`);
}

// ---------------------------------------------------------------- SSE

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
function splits(s: string): Array<[string, Uint8Array[]]> {
  const b = enc(s);
  const out: Array<[string, Uint8Array[]]> = [['whole', [b]], ['bytewise', Array.from({ length: b.length }, (_, i) => b.subarray(i, i + 1))]];
  for (let seed = 1; seed <= 40; seed++) {
    const pieces: Uint8Array[] = [];
    let x = seed >>> 0;
    for (let i = 0; i < b.length; ) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      const n = 1 + (x % 7);
      pieces.push(b.subarray(i, Math.min(b.length, i + n)));
      i += n;
    }
    out.push([`random ${seed}`, pieces]);
  }
  return out;
}

/** [event data, index of the push that dispatched it (pieces.length = at end)] */
type Dispatched = Array<[string, number]>;

function runOurs(pieces: Uint8Array[], how: 'clean' | 'error'): Dispatched {
  const out: Dispatched = [];
  let at = 0;
  const p = new SseParser((d) => out.push([d, at]));
  for (; at < pieces.length; at++) p.push(pieces[at]!);
  p.end(how);
  return out;
}

/**
 * eventsource-parser as a client would use it: bytes through a streaming TextDecoder, then feed().
 * `at end`: reset({ consume: true }) (its way to finish a stream). `+ends` adds what ours does on
 * purpose: a clean end dispatches the last event without its blank line (feed "\n\n"), and
 * trailing whitespace of the data is stripped.
 */
function runEsp(pieces: Uint8Array[], how: 'clean' | 'error', withEnds: boolean): Dispatched {
  const out: Dispatched = [];
  let at = 0;
  const parser = createParser({ onEvent: (e) => void out.push([withEnds ? e.data.trimEnd() : e.data, at]) });
  const decoder = new TextDecoder('utf-8');
  for (; at < pieces.length; at++) parser.feed(decoder.decode(pieces[at]!, { stream: true }));
  const rest = decoder.decode();
  if (rest) parser.feed(rest);
  if (withEnds && how === 'clean') parser.feed('\n\n');
  parser.reset({ consume: how === 'clean' });
  return out;
}

/** The byte cases of test/client/sse.test.ts: the stream and how it ends. */
const SSE_CASES: Array<[string, string, 'clean' | 'error']> = [
  ['LF-separated events', 'data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n', 'clean'],
  ['CRLF, CR and mixed line ends', 'data: one\r\n\r\ndata: two\r\rdata: three\n\r\ndata: four\r\n\n', 'clean'],
  ['comments and other fields', ': keep-alive\n\nevent: message\nid: 7\nretry: 100\ndata: payload\nfoo: bar\ndatabase: no\n\n: ping\n\n', 'clean'],
  ['multi-line data', 'data: line1\ndata: line2\ndata:line3\n\n', 'clean'],
  ['data with/without the space, bare `data`', 'data:{"x":1}\n\ndata:  two spaces\n\ndata\n\n', 'clean'],
  ['trailing whitespace (TRT-LLM)', 'data: {"a":1} \n\ndata: [DONE] \t\n\n', 'clean'],
  ['multi-byte UTF-8 split anywhere', 'data: {"t":"héllo 世界 🎉"}\n\n', 'clean'],
  ['an event without data lines', 'event: x\n\n\n\n: c\n\n', 'clean'],
  ['a CR-only blank line at the end of a push', 'data: x\r\r', 'clean'],
  ['clean end: last line without its line end (bare)', 'data: {"a":1}\n\ndata: [DONE]', 'clean'],
  ['clean end: only `data: [DONE]`', 'data: [DONE]', 'clean'],
  ['clean end: line end but no blank line', 'data: x\n\ndata: [DONE]\n', 'clean'],
  ['clean end: CRLF, no blank line', 'data: x\r\n\r\ndata: [DONE]\r\n', 'clean'],
  ['clean end: two data lines, second unterminated', 'data: a\r\ndata: b', 'clean'],
  ['clean end: unterminated comment', 'data: a\n: pi', 'clean'],
  ['error end: nothing pending dispatched', 'data: {"a":1}\n\ndata: x\ndata: {"tr', 'error'],
  ['500 batched events, CRLF and LF', Array.from({ length: 500 }, (_, i) => (i % 3 === 0 ? `data: {"i":${i}}\r\n\r\n` : `data: {"i":${i}}\n\n`)).join(''), 'clean'],
];

async function sse(): Promise<void> {
  console.log('| case | eventsource-parser: same events | same push | eventsource-parser + our ends: same events | same push |');
  console.log('|---|---|---|---|---|');
  const notes: string[] = [];
  for (const [name, stream, how] of SSE_CASES) {
    const tally = { plainEvents: 0, plainPush: 0, endsEvents: 0, endsPush: 0 };
    const ways = splits(stream);
    for (const [way, pieces] of ways) {
      const mine = runOurs(pieces, how);
      const plain = runEsp(pieces, how, false);
      const ends = runEsp(pieces, how, true);
      const same = (a: Dispatched, b: Dispatched): boolean => JSON.stringify(a.map((e) => e[0])) === JSON.stringify(b.map((e) => e[0]));
      const samePush = (a: Dispatched, b: Dispatched): boolean => JSON.stringify(a) === JSON.stringify(b);
      if (same(mine, plain)) tally.plainEvents++;
      else if (way === 'whole') notes.push(`"${name}" (whole): ours ${JSON.stringify(mine.map((e) => e[0]))}, eventsource-parser ${JSON.stringify(plain.map((e) => e[0]))}`);
      if (samePush(mine, plain)) tally.plainPush++;
      if (same(mine, ends)) tally.endsEvents++;
      else if (way === 'whole') notes.push(`"${name}" (whole, + our ends): ours ${JSON.stringify(mine.map((e) => e[0]))}, eventsource-parser ${JSON.stringify(ends.map((e) => e[0]))}`);
      if (samePush(mine, ends)) tally.endsPush++;
      else if (same(mine, ends) && notes.length < 40) notes.push(`"${name}" (${way}, + our ends): same events, later push: ours ${JSON.stringify(mine)}, eventsource-parser ${JSON.stringify(ends)}`);
    }
    const n = ways.length;
    console.log(`| ${name} | ${tally.plainEvents}/${n} | ${tally.plainPush}/${n} | ${tally.endsEvents}/${n} | ${tally.endsPush}/${n} |`);
  }
  console.log('\n' + [...new Set(notes)].slice(0, 30).map((n) => `- ${n}`).join('\n'));

  if (noCpu) return;
  // single-core events/s, as perf/client-parse.ts measures ours: vLLM-shaped ~300-byte chunks
  const chunk = (i: number): string =>
    `data: ${JSON.stringify({ id: 'chatcmpl-0123456789abcdef', object: 'chat.completion.chunk', created: 1730000000, model: 'meta-llama/Llama-3.1-8B-Instruct', choices: [{ index: 0, delta: { content: ` tok${i}` }, logprobs: null, finish_reason: null }], usage: { prompt_tokens: 8192, total_tokens: 8192 + i + 1, completion_tokens: i + 1 } })}\n\n`;
  const EVENTS = 1000;
  const perBuffer = Array.from({ length: EVENTS }, (_, i) => Buffer.from(chunk(i)));
  const batched = Buffer.concat(perBuffer);
  let sink = 0;
  const bench = new Bench({ time: 1500, warmup: true });
  bench
    .add('ours, one event per buffer', () => {
      const p = new SseParser((d) => void (sink += d.length));
      for (const b of perBuffer) p.push(b);
    })
    .add('eventsource-parser, one event per buffer', () => {
      const d = new TextDecoder();
      const p = createParser({ onEvent: (e) => void (sink += e.data.length) });
      for (const b of perBuffer) p.feed(d.decode(b, { stream: true }));
    })
    .add('ours, batched', () => {
      const p = new SseParser((d) => void (sink += d.length));
      p.push(batched);
    })
    .add('eventsource-parser, batched', () => {
      const d = new TextDecoder();
      const p = createParser({ onEvent: (e) => void (sink += e.data.length) });
      p.feed(d.decode(batched, { stream: true }));
    });
  await bench.run();
  console.log(`\nparse only, one core, ${(batched.length / EVENTS).toFixed(0)}-byte events:`);
  for (const t of bench.tasks) {
    const period = periodMs(t);
    if (period === undefined) {
      console.log(`- ${t.name}: ${t.result.state}`);
      continue;
    }
    const perEventNs = (period * 1e6) / EVENTS;
    console.log(`- ${t.name}: ${Math.round(1e9 / perEventNs).toLocaleString('en-US')} events/s (${perEventNs.toFixed(0)} ns per event)`);
  }
  if (sink < 0) console.log(sink);
}

const part = process.argv[2];
const noCpu = process.argv.includes('--no-cpu');
if (part === 'prom') await prom();
else if (part === 'sse') await sse();
else throw new Error('usage: npx tsx perf/libraries.ts prom|sse');
