/**
 * Benchmark: the single-run HTML report of a large run — 5 contexts × 8 concurrency levels
 * (40 cells), each measured 3 times (LLM_BENCH_REPEAT=3), every measured cell with its series (31
 * one-second metric samples of a 30 s window, 5 requests' TBT per stream) — rendered in Node, then
 * loaded in headless Chromium. Prints the page size and the draw time (median of 5 loads:
 * navigation start to the load event, and to the first contentful paint). Targets: < 1.5 MB and
 * < 1 s. Figures only: no assertion on wall-clock time.
 *
 *   npx tsx perf/html-report.ts [template.json] [--loads 5] [--keep]
 *
 * The cells are synthesized from a real result (template.json, or a tiny simulator run made here,
 * about 15 s): its measured cell with series is cloned across the grid with figures scaled as a
 * large server's fall off with context and concurrency; cells whose KV need exceeds the capacity
 * become Over capacity, as on the reference pages (here only the largest three, so the page is
 * near its largest). The synthesized result is schema-checked.
 */
import { mulberry32 } from '../src/random.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { renderHtml } from '../src/pages/html.js';
import { cellKey, contextLabel } from '../src/shapes/labels.js';
import type { CellResult, FigureSpread, PrefillRowResult, SpeedMatrixResult } from '../src/shapes/result.js';
import { validateResult } from '../src/results/validate.js';
import { launchBrowser, browserMissing } from '../test/report/browser.js';

const root = join(import.meta.dirname, '..');
const CONTEXTS = [8192, 16384, 32768, 65536, 126976];
const CONCURRENCY = [1, 2, 4, 8, 16, 32, 64, 128];
const REPEAT = 3;
const WINDOW_S = 30;
const MAX_TOKENS = 4096;
/** large enough that only the three largest corner cells are Over capacity: near the worst case for page size */
const KV_CAPACITY = 8_000_000;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const rand = mulberry32(20240601);
const r3 = (x: number) => Number(x.toPrecision(3));

function templateResult(): SpeedMatrixResult {
  const given = process.argv.slice(2).find((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
  if (given) return JSON.parse(readFileSync(given, 'utf8'));
  const out = mkdtempSync(join(tmpdir(), 'lsm-html-perf-'));
  console.error('running a tiny simulator matrix for a template result (about 15 s) …');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LLM_BENCH_') && !k.startsWith('VITEST')));
  const run = spawnSync('npx', ['vitest', 'bench', '--run'], {
    cwd: root,
    env: {
      ...clean,
      LLM_BENCH_QUIET: '1',
      LLM_BENCH_SIM_PROFILE: 'tiny',
      LLM_BENCH_CONTEXTS: '0',
      LLM_BENCH_CONCURRENCY: '4',
      LLM_BENCH_PREFILL: '1K',
      LLM_BENCH_DURATION_S: '1.5',
      LLM_BENCH_MAX_TOKENS: '64',
      LLM_BENCH_OUT: out,
    },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`template run failed (exit ${run.status}):\n${run.stdout}\n${run.stderr}`);
  const r = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
  rmSync(out, { recursive: true, force: true });
  return r;
}

function spread(median: number): FigureSpread {
  const values = [median * (1 - 0.02 * rand()), median, median * (1 + 0.02 * rand())].map(r3);
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { values, min, max, relativeHalfRange: median ? r3((max - min) / 2 / median) : undefined };
}

function synthesize(t: SpeedMatrixResult): SpeedMatrixResult {
  const base = t.cells.find((c) => c.figures && c.series) ?? t.cells.find((c) => c.figures);
  if (!base?.figures) throw new Error('the template result has no measured cell');
  const row = t.prefill.find((p) => p.figures);
  const cells: CellResult[] = [];
  for (const context of CONTEXTS) {
    for (const concurrency of CONCURRENCY) {
      const c: CellResult = structuredClone(base);
      c.context = context;
      c.contextLabel = contextLabel(context);
      c.concurrency = concurrency;
      delete c.adaptive;
      delete c.resumed;
      if (concurrency * (context + MAX_TOKENS) > KV_CAPACITY) {
        c.status = 'over-capacity';
        c.statuses = ['over-capacity'];
        c.evidence = { capacity: { requiredTokens: concurrency * (context + MAX_TOKENS), kvCapacityTokens: KV_CAPACITY } };
        for (const k of ['figures', 'series', 'repeats', 'promptTokens', 'calibration', 'serverCrossCheck', 'clientCpu', 'clientEventLoopDelayMs', 'connections'] as const) delete c[k];
        cells.push(c);
        continue;
      }
      const perRequest = r3((180 / (1 + context / 65536)) * (1 / (1 + concurrency / 48)) * (0.97 + 0.06 * rand()));
      const total = r3(perRequest * concurrency * 0.98);
      const tbt = 1000 / perRequest;
      const ttft = r3(40 + context / 200 + concurrency * 3 * (1 + context / 32768));
      const f = c.figures!;
      f.totalTokensPerSecond = total;
      f.perRequestTokensPerSecond = perRequest;
      f.timeBetweenTokensMs = { median: r3(tbt), p90: r3(tbt * 1.1), p99: r3(tbt * 1.3), samples: concurrency * 5 };
      f.ttftMs = { median: ttft, p90: r3(ttft * 1.4), p99: r3(ttft * 2), samples: concurrency * 5 };
      f.measuredForS = WINDOW_S;
      f.outputTokens = Math.round(total * WINDOW_S);
      f.completedRequests = concurrency * 4;
      f.startedRequests = concurrency * 5;
      f.clientActiveRequests = concurrency;
      f.averageActiveRequests = concurrency;
      f.promptTokens = context;
      c.promptTokens = context;
      c.status = concurrency >= 64 && context >= 32768 ? 'requests-queued' : 'valid';
      c.statuses = [c.status];
      if (c.status === 'requests-queued') c.evidence = { queued: { maxWaiting: concurrency / 4, meanRunning: concurrency * 0.8, concurrency } };
      c.repeats = {
        count: REPEAT,
        spread: {
          totalTokensPerSecond: spread(total),
          perRequestTokensPerSecond: spread(perRequest),
          ttftMs: spread(ttft),
          timeBetweenTokensMs: spread(r3(tbt)),
        },
      };
      const atS = Array.from({ length: WINDOW_S + 1 }, (_, i) => i);
      c.series = {
        metrics: {
          atS,
          running: atS.map(() => Math.max(0, Math.round(concurrency * (0.9 + 0.1 * rand())))),
          waiting: atS.map(() => (c.status === 'requests-queued' ? Math.round((concurrency / 4) * rand()) : 0)),
          kvUsage: atS.map(() => r3(Math.min(1, (concurrency * (context + MAX_TOKENS / 2)) / KV_CAPACITY) * (0.95 + 0.05 * rand()))),
        },
        requestTbtMs: Array.from({ length: concurrency * 5 }, () => r3(tbt * Math.exp(0.15 * (rand() + rand() + rand() - 1.5)))),
      };
      cells.push(c);
    }
  }
  const prefill: PrefillRowResult[] = row
    ? CONTEXTS.map((context) => {
        const p: PrefillRowResult = structuredClone(row);
        p.context = context;
        p.contextLabel = contextLabel(context);
        delete p.resumed;
        const ttftMs = r3(30 + context / 9 + (context * context) / 4e7);
        p.figures = { promptTokens: context, ttftMs, promptTokensPerSecond: r3(context / (ttftMs / 1000)) };
        p.repeats = { count: REPEAT, failed: 0, spread: { ttftMs: spread(ttftMs), promptTokensPerSecond: spread(p.figures.promptTokensPerSecond) } };
        return p;
      })
    : [];
  const r: SpeedMatrixResult = structuredClone({ ...t, cells, prefill });
  r.partial = false;
  delete r.incomplete;
  delete r.capacity;
  r.info.title = 'html-report perf: 5 contexts × 8 concurrency levels × 3 repeats';
  r.info.plannedCells = cells.map((c) => cellKey(c.context, c.concurrency));
  r.info.plannedPrefill = prefill.map((p) => p.contextLabel);
  r.info.run = { ...r.info.run, contexts: CONTEXTS, concurrency: CONCURRENCY, prefillContexts: row ? CONTEXTS : [], repeat: REPEAT, windowS: WINDOW_S, maxOutputTokens: MAX_TOKENS };
  return r;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const loads = Number(arg('loads') ?? 5);
  const result = synthesize(templateResult());
  const valid = validateResult(result);
  if (!valid.ok) throw new Error(`the synthesized result does not match the schema:\n${valid.errors.join('\n')}`);
  const measured = result.cells.filter((c) => c.figures).length;

  const renders: number[] = [];
  let html = '';
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    html = renderHtml(result);
    renders.push(performance.now() - t0);
  }
  const dir = mkdtempSync(join(tmpdir(), 'lsm-html-perf-'));
  const file = join(dir, 'speed-matrix.html');
  writeFileSync(file, html);
  const bytes = Buffer.byteLength(html);
  const gz = gzipSync(html).length;

  console.log(`\n### HTML report: ${result.cells.length} cells (${measured} measured, ${result.cells.length - measured} Over capacity) × ${REPEAT} repeats, ${result.prefill.length} prefill rows\n`);
  console.log('| Figure | Value | Target |');
  console.log('|---|---|---|');
  console.log(`| Page size | ${(bytes / 1e6).toFixed(3)} MB (${(bytes / 1024).toFixed(0)} KiB; gzip ${(gz / 1024).toFixed(0)} KiB) | < 1.5 MB |`);
  console.log(`| Render in Node (median of 5) | ${median(renders).toFixed(1)} ms | |`);
  if (browserMissing) {
    console.log(`| Draw in Chromium | not measured: ${browserMissing} | < 1 s |`);
  } else {
    const browser = await launchBrowser();
    try {
      const loadMs: number[] = [];
      const fcpMs: number[] = [];
      let problems: string[] = [];
      let marks = 0;
      // one discarded warm-up, then the measured loads, each in a fresh context (no cache)
      for (let i = 0; i <= loads; i++) {
        const p = await browser.open(file);
        // paint entries are recorded a frame after load
        await p.page
          .waitForFunction(() => (globalThis as unknown as { performance: { getEntriesByName(n: string): unknown[] } }).performance.getEntriesByName('first-contentful-paint').length > 0, undefined, { timeout: 5_000 })
          .catch(() => {});
        const t = await p.page.evaluate(() => {
          type Entry = { startTime: number; loadEventEnd?: number };
          const perf = (globalThis as unknown as { performance: { getEntriesByType(t: string): Entry[]; getEntriesByName(n: string): Entry[] } }).performance;
          const nav = perf.getEntriesByType('navigation')[0];
          const fcp = perf.getEntriesByName('first-contentful-paint')[0];
          return { load: nav?.loadEventEnd !== undefined ? nav.loadEventEnd - nav.startTime : NaN, fcp: fcp ? fcp.startTime : NaN };
        });
        if (i > 0) {
          loadMs.push(t.load);
          fcpMs.push(t.fcp);
        }
        problems = [...p.consoleErrors, ...p.pageErrors, ...p.requests];
        marks = await p.count('figure.chart .mark');
        await p.close();
      }
      console.log(`| Draw in Chromium: navigation start → load event (median of ${loads}) | ${median(loadMs).toFixed(0)} ms (${loadMs.map((x) => x.toFixed(0)).join(', ')}) | < 1 s |`);
      console.log(`| First contentful paint (median of ${loads}) | ${median(fcpMs).toFixed(0)} ms | |`);
      console.log(`| Marks drawn (all charts) | ${marks} | |`);
      console.log(`| Console errors, page errors, requests | ${problems.length}${problems.length ? `: ${problems.slice(0, 3).join('; ')}` : ''} | 0 |`);
    } finally {
      await browser.close();
    }
  }
  if (process.argv.includes('--keep')) console.log(`\npage kept: ${file}`);
  else rmSync(dir, { recursive: true, force: true });
}

await main();
