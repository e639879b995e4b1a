/**
 * Benchmark: the post-window work of one cell at the size of a GPU server's cell (issue 59, item 2).
 * Synthetic timelines as the load runners keep them (compact typed arrays, 10 B a chunk) go through
 * the same code a cell runs after its window closes: src/matrix/cell-outcome.ts (figures, the
 * status inputs, the cross-check, the series), the status rules, the verdicts (budgets, an SLO),
 * the Markdown and HTML pages, the JSON and its schema check. Prints time and memory per stage.
 *
 *   node --expose-gc --import tsx perf/cell-scale.ts [--events 1e6,1e7] [--streams 256] [--window-s 30]
 *
 * Targets (issue 59): at most 1 s of post-window work per million token events on the 2-core VM,
 * and memory within the README's 16 B per token (the timelines' 10 B included). The figures of a
 * run are in docs/accuracy.md ("Scale").
 */
import type { RequestTimeline } from '../src/shapes/timeline.js';
import type { CellResult, SpeedMatrixResult } from '../src/shapes/result.js';
import { cellResultOf, repeatFigures, type Raw } from '../src/matrix/cell-outcome.js';
import { judgeCell, judgeCellStatus } from '../src/judge/index.js';
import { parseSloText } from '../src/slo/slo.js';
import { renderMarkdown } from '../src/pages/markdown.js';
import { renderHtml } from '../src/pages/html.js';
import { validateResult } from '../src/results/validate.js';
import { sglangResult } from '../test/results/fixtures/sglang-h200.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (see the header)');

/**
 * `streams` closed-loop workers over a window of `windowS` s, one token a chunk, requests of 1,024
 * tokens back to back (a 40 ms TTFT between them), the step chosen so the window holds `events`
 * token chunks; one request in each 64 pauses 2 s once (a stall the ITL figures must find).
 */
function synthetic(events: number, streams: number, windowS: number): { timelines: RequestTimeline[]; ws: number; we: number; chunks: number } {
  const ws = 10_000;
  const we = ws + windowS * 1000;
  const stepMs = (streams * windowS * 1000) / events;
  const timelines: RequestTimeline[] = [];
  let chunks = 0;
  let n = 0;
  for (let w = 0; w < streams; w++) {
    let t = ws - 3000 + (w * stepMs) / streams;
    while (t < we + 1000) {
      const id = `w${w}-r${n++}`;
      const send = t;
      const first = send + 40;
      const tokens = 1024;
      const chunkMs = new Float64Array(tokens);
      const pauseAt = n % 64 === 0 ? 512 : -1;
      let at = first;
      for (let i = 0; i < tokens; i++) {
        chunkMs[i] = at;
        at += i === pauseAt ? 2000 : stepMs;
      }
      chunks += tokens;
      const end = chunkMs[tokens - 1]!;
      timelines.push({
        id,
        sendMs: send,
        sentHeadersMs: send + 0.2,
        headersMs: send + 5,
        firstTokenMs: first,
        chunkMs,
        chunkTokens: new Uint16Array(tokens).fill(1),
        tokenSource: 'usage',
        promptTokens: 100,
        completionTokens: tokens,
        reasoningTokens: 0,
        end: end <= we ? { kind: 'done', atMs: end + 0.1 } : { kind: 'aborted', atMs: we },
      });
      t = end + 0.5;
    }
  }
  return { timelines, ws, we, chunks };
}

const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const held = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

function measure(events: number, streams: number, windowS: number): void {
  gc!();
  const before = held();
  const { timelines, ws, we, chunks } = synthetic(events, streams, windowS);
  gc!();
  const base = held();
  const rssAtBase = process.memoryUsage().rss;
  const maxRssBefore = process.resourceUsage().maxRSS * 1024;
  const inWindow = timelines.reduce((a, t) => {
    let k = 0;
    for (let i = 0; i < t.chunkMs.length; i++) if (t.chunkMs[i]! >= ws && t.chunkMs[i]! <= we) k++;
    return a + k;
  }, 0);
  console.log(`\n${(inWindow / 1e6).toFixed(2)} M token events in the window (${(chunks / 1e6).toFixed(2)} M held, ${timelines.length} requests, ${streams} streams, ${windowS} s): timelines hold ${mib(base - before)} (${((base - before) / chunks).toFixed(1)} B a chunk)`);

  let peak = base;
  const stages: Array<[string, number, number]> = [];
  const stage = <T>(name: string, f: () => T): T => {
    const t0 = performance.now();
    const out = f();
    const ms = performance.now() - t0;
    const now = held();
    peak = Math.max(peak, now);
    stages.push([name, ms, now - base]);
    return out;
  };
  const raw = {
    timelines,
    scouts: [],
    samples: [],
    windowStartMs: ws,
    windowEndMs: we,
    gate: { timedOut: false, waitedMs: 1000 },
    drain: { timedOut: false, waitedMs: 0, checked: false },
    loopDelayMs: { p50: 0.5, p99: 2, max: 4 },
    connections: { opened: streams, preparedUnused: 0, requests: timelines.length, serverClosesAfterResponse: false },
  } as unknown as Raw;
  const cell = { context: 0, contextLabel: '0', concurrency: streams };
  const slo = parseSloText('perRequest>=20,ttftP90<=2000,itlP99<=100,maxGapMs<=5000');
  const repeat = stage('figures, status inputs, cross-check', () => repeatFigures({ clientLimitedLoopDelayMs: 5, slo, engine: 'vllm' }, cell, raw, () => {}));
  const verdict = stage('status rules', () => judgeCellStatus([repeat.status]));
  const result: CellResult = stage('result record (series, usage check)', () => cellResultOf(cell, undefined, [repeat], verdict, () => {}));
  stage('verdicts (budget, SLO)', () => {
    const j = judgeCell(`0/${streams}`, result, { allowClientLimited: false, allowErrors: false, slo, maxOutputTokens: 1024, budget: { min: { perRequestTokensPerSecond: 10 }, max: { itlP99Ms: 1000 } } });
    Object.assign(result, j);
  });
  const reference = sglangResult();
  const page: SpeedMatrixResult = { ...reference, info: { ...reference.info, run: { ...reference.info.run, slo, contexts: [0], concurrency: [streams], prefillContexts: [] }, plannedCells: [`0/${streams}`], plannedPrefill: [] }, prefill: [], cells: [result] };
  const md = stage('Markdown page', () => renderMarkdown(page));
  const html = stage('HTML page', () => renderHtml(page));
  const json = stage('JSON and its schema check', () => {
    const text = JSON.stringify(page, null, 2);
    const ok = validateResult(JSON.parse(text));
    if (!ok.ok) throw new Error(`the page's JSON does not validate: ${JSON.stringify(ok).slice(0, 400)}`);
    return text;
  });
  const total = stages.reduce((a, s) => a + s[1], 0);
  for (const [name, ms, mem] of stages) console.log(`  ${name.padEnd(40)} ${ms.toFixed(0).padStart(7)} ms   held beyond the timelines after it: ${mib(mem)}`);
  const per = total / (inWindow / 1e6);
  console.log(`  ${'post-window work'.padEnd(40)} ${total.toFixed(0).padStart(7)} ms = ${per.toFixed(0)} ms per million events (target ≤ 1,000)`);
  const maxRss = process.resourceUsage().maxRSS * 1024;
  // the process's peak RSS over the post-window work, above its RSS once the timelines were built
  // (an earlier, higher peak of building them would hide it: then at most that)
  const growth = Math.max(0, maxRss - rssAtBase);
  const timelineB = (base - before) / chunks;
  console.log(
    `  memory per chunk held: timelines ${timelineB.toFixed(1)} B; the post-window work's peak RSS above them ${(growth / chunks).toFixed(1)} B${maxRss <= maxRssBefore ? ' (at most: the peak was set before it)' : ''}, ` +
      `${(timelineB + growth / chunks).toFixed(1)} B together (target 16); JS heap and buffers held beyond the timelines at a stage's end at most ${((peak - base) / chunks).toFixed(1)} B (garbage included)`,
  );
  console.log(`  sizes: JSON ${(json.length / 1024).toFixed(0)} KiB, Markdown ${(md.length / 1024).toFixed(0)} KiB, HTML ${(html.length / 1024).toFixed(0)} KiB · ITL p99 ${result.figures?.interTokenLatencyMs?.p99.toFixed(2)} ms, max ${result.figures?.interTokenLatencyMs?.max.toFixed(0)} ms · status ${result.status}`);
}

const streams = Number(arg('streams', '256'));
const windowS = Number(arg('window-s', '30'));
for (const e of arg('events', '1e6,1e7').split(',')) measure(Number(e), streams, windowS);
