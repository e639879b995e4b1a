/**
 * Client-side running and Requests queued against a real server (loopback only): runs cells the
 * way the matrix does and prints, per cell, the server's running figure (and where it came
 * from) beside the client's own (clientLoad), and the statuses with and without the server's
 * figures.
 *
 *   URL=http://127.0.0.1:18282 ENGINE=llamacpp CONTEXTS=0,1024 LEVELS=1,2,4 MAX_TOKENS=64 WINDOW_MS=4000 npx tsx perf/real-client-status.ts
 */
import { resolveSuite } from '../src/config/resolve.js';
import { runCell } from '../src/load/cell.js';
import { openRun } from '../src/matrix/open.js';
import { RunPrompts } from '../src/matrix/prompts.js';
import { clientLoad } from '../src/metrics/client-load.js';
import { computeCellFigures } from '../src/metrics/figures.js';
import { MATRIX_TTFT_FROM } from '../src/metrics/request.js';
import { cellStatuses } from '../src/judge/status.js';

const url = process.env.URL ?? 'http://127.0.0.1:18282';
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(url)) throw new Error(`URL=${url}: loopback only (http://127.0.0.1:PORT)`);
const list = (v: string | undefined, d: number[]) => (v ? v.split(',').map(Number) : d);
const contexts = list(process.env.CONTEXTS, [0]);
const levels = list(process.env.LEVELS, [1, 2, 4]);
const maxTokens = Number(process.env.MAX_TOKENS ?? 64);
const windowMs = Number(process.env.WINDOW_MS ?? 4000);

const cfg = resolveSuite({ target: { engine: (process.env.ENGINE ?? 'llamacpp') as 'llamacpp', url }, matrix: { contexts, concurrency: levels, maxOutputTokens: maxTokens } }, {});
const opened = await openRun(cfg);
const prompts = new RunPrompts(opened.session, cfg.promptMode);
const f = (n: number | undefined, d = 2) => (n === undefined ? '—' : n.toFixed(d));
console.log('cell | server running (from) | client running | Δ % | client waiting | peak | held | with server figures | client-side only');
try {
  for (const context of contexts) {
    const row = await prompts.rowPrompt(context, maxTokens);
    for (const c of levels) {
      const p = prompts.forCell(row, c);
      const raw = await runCell(opened.session, {
        context,
        concurrency: c,
        promptFor: (w, i) => p.prompt(w, i),
        scoutPrompts: p.scoutPrompts(),
        windowMs,
        gateTimeoutMs: 60_000,
        gateSettleMs: 500,
        drainTimeoutMs: 60_000,
        metricsIntervalMs: 250,
      });
      const figures = computeCellFigures({ timelines: raw.timelines, windowStartMs: raw.windowStartMs, windowEndMs: raw.windowEndMs, metricsSamples: raw.samples, ttftFrom: MATRIX_TTFT_FROM });
      const common = { concurrency: c, timelines: raw.timelines, windowStartMs: raw.windowStartMs, windowEndMs: raw.windowEndMs, loopDelayBoundMs: Infinity };
      const withServer = cellStatuses({ ...common, figures, samples: raw.samples });
      const { serverActiveRequests: _s, maxWaitingRequests: _w, ...clientFigures } = figures;
      const clientOnly = cellStatuses({ ...common, figures: clientFigures, samples: [] });
      const own = clientLoad(raw.timelines, raw.windowStartMs, raw.windowEndMs, MATRIX_TTFT_FROM);
      const server = figures.serverActiveRequests;
      console.log(
        [
          `${context}/${c}`,
          `${f(server)} (${figures.runningFrom})`,
          f(own.meanRunning),
          server ? f((100 * (own.meanRunning - server)) / server, 1) : '—',
          f(own.meanWaiting),
          own.peakRunning,
          f(own.heldAtPeakShare),
          withServer.statuses.join(','),
          clientOnly.statuses.join(','),
        ].join(' | '),
      );
    }
  }
} finally {
  await opened.close();
}
