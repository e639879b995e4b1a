/**
 * Memory the load generator holds per token received (issue 19, item 8): one sustained-decode cell
 * of many streams over a long window, through the product's own path (openRun, RunPrompts,
 * runCell), against the embedded simulator in a worker thread (its memory is its own isolate's, so
 * the main isolate's heap is the client's). Prints the heap held by the cell's timelines per token
 * (JS heap and ArrayBuffer memory after a full GC, compacted as the runners keep them, and the same timelines as plain arrays,
 * which is how they were held before), the peak RSS, and the tokens received.
 *
 * Run: node --expose-gc --import tsx perf/timeline-memory.ts [--streams 512] [--window-s 60] [--step-ms 20]
 * The figures of a run on this 2-core VM are in docs/accuracy.md ("Memory").
 */
import { compactTimeline } from '../src/client/compact.js';
import type { RequestTimeline } from '../src/shapes/timeline.js';
import { resolveSuite } from '../src/config/resolve.js';
import { runCell } from '../src/load/cell.js';
import { openRun } from '../src/matrix/open.js';
import { RunPrompts } from '../src/matrix/prompts.js';
import { startSim } from '../src/sim/index.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number (got ${process.argv[i + 1]})`);
  return v;
}
const STREAMS = arg('streams', 512);
const WINDOW_S = arg('window-s', 60);
const STEP_MS = arg('step-ms', 20);

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc --import tsx perf/timeline-memory.ts');
const heap = (): number => {
  gc();
  gc();
  // typed arrays keep their bytes outside the JS heap (ArrayBuffer backing stores): count both
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

let peakRss = 0;
const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);

const sim = await startSim({
  profile: 'tiny',
  thread: true,
  overrides: { maxRunningRequests: STREAMS * 2, kvCapacityTokens: 50_000_000, maxBatchedTokens: 1_000_000, stepBaseMs: STEP_MS, maxTruthRecords: 2_000 },
});
const cfg = resolveSuite({ target: { url: sim.url, engine: 'vllm' }, matrix: { contexts: [0], concurrency: [STREAMS], maxOutputTokens: 4096 } }, {});
const opened = await openRun(cfg);
const prompts = new RunPrompts(opened.session, cfg.promptMode);
const row = await prompts.rowPrompt(0, 4096);
const cellPrompts = prompts.forCell(row, STREAMS);
const before = heap();
const raw = await runCell(opened.session, {
  context: 0,
  concurrency: STREAMS,
  promptFor: (w, i) => cellPrompts.prompt(w, i),
  scoutPrompts: cellPrompts.scoutPrompts(),
  windowMs: WINDOW_S * 1000,
  gateTimeoutMs: 60_000,
  gateSettleMs: 500,
  drainTimeoutMs: 10_000,
  metricsIntervalMs: 1_000,
});
const timelines: RequestTimeline[] = raw.timelines;
let tokens = 0;
let chunks = 0;
for (const t of timelines) {
  chunks += t.chunkMs.length;
  for (let i = 0; i < t.chunkTokens.length; i++) tokens += t.chunkTokens[i]!;
}
const compacted = heap() - before;
// the same timelines held as plain arrays (as before compaction; exact-length arrays, so this
// is a floor for the old pushed arrays, which carry growth slack)
for (const t of timelines) {
  t.chunkMs = Array.from(t.chunkMs);
  t.chunkTokens = Array.from(t.chunkTokens);
}
const plain = heap() - before;
for (const t of timelines) compactTimeline(t);
const again = heap() - before;
clearInterval(rssTimer);
const mib = (b: number): string => (b / 2 ** 20).toFixed(1);
console.log(`streams ${STREAMS}, window ${WINDOW_S} s, step ${STEP_MS} ms: ${timelines.length} requests, ${tokens} tokens in ${chunks} chunks`);
console.log(`heap held by the cell (compacted, as the runners keep it): ${mib(compacted)} MiB = ${(compacted / tokens).toFixed(1)} B per token`);
console.log(`  the same as plain arrays (before):                        ${mib(plain)} MiB = ${(plain / tokens).toFixed(1)} B per token`);
console.log(`  compacted again:                                           ${mib(again)} MiB = ${(again / tokens).toFixed(1)} B per token`);
console.log(`peak RSS (client and the sim's worker thread): ${mib(peakRss)} MiB`);
const perHourAt50k = ((compacted / tokens) * 50_000 * 3600) / 2 ** 30;
console.log(`bound per hour of window at 50 k tok/s: ${perHourAt50k.toFixed(2)} GiB`);
console.log(`output tok/s over the window: ${(tokens / WINDOW_S).toFixed(0)} (all requests of the cell, window and burst)`);
void raw;
await opened.close();
await sim.close();
