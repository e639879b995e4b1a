/**
 * The measurement behind the client-side Requests queued rule (src/judge/status.ts
 * clientQueued, docs/method.md "Requests queued"): runs small cells against the simulator and
 * prints, per cell, the client's own load figures (clientLoad: mean running, mean waiting, peak
 * running, share held at the peak) beside the server's mean running, and what the client-side
 * rule says.
 *
 *   npx tsx perf/client-queued.ts [windowMs=2000] [maxTokens=64] [levels=1,2,4,8] [servers=all]
 *
 * Servers: `tiny` and `sglang-h200` (they run every C at once), the same at 16K context, and a
 * one-slot `tiny` (it queues every C > 1).
 */
import { clientLoad } from '../src/metrics/client-load.js';
import { MATRIX_TTFT_FROM } from '../src/metrics/request.js';
import { cellStatuses, clientQueued } from '../src/judge/status.js';
import { openAccuracyRun, runAccuracyCell, startThreadSim } from '../test/accuracy/harness.js';
import type { SimProfileOverrides } from '../src/sim/index.js';

const windowMs = Number(process.argv[2] ?? 2000);
const maxTokens = Number(process.argv[3] ?? 64);
const levels = (process.argv[4] ?? '1,2,4,8').split(',').map(Number);
const only = process.argv[5];

interface Server {
  name: string;
  profile: string;
  overrides: SimProfileOverrides;
  contexts: number[];
  levels: number[];
}

const servers: Server[] = [
  { name: 'tiny', profile: 'tiny', overrides: { eosProbability: 0 }, contexts: [0, 16_384], levels },
  { name: 'sglang-h200', profile: 'sglang-h200', overrides: { eosProbability: 0 }, contexts: [0, 16_384], levels },
  { name: 'tiny, 1 slot', profile: 'tiny', overrides: { eosProbability: 0, maxRunningRequests: 1 }, contexts: [0, 16_384], levels: [1, 2, 4] },
];

const f = (n: number | undefined, d = 2): string => (n === undefined ? '—' : n.toFixed(d));
console.log('server | context | C | server running | client running | Δ % | client waiting | max waiting | peak | held at peak | client rule | server rule');
for (const s of servers.filter((x) => only === undefined || x.name === only)) {
  const sim = await startThreadSim({ profile: s.profile, overrides: s.overrides });
  const engine = s.profile === 'sglang-h200' ? 'sglang' : 'vllm';
  const run = await openAccuracyRun(sim, { target: { engine }, matrix: { contexts: s.contexts, concurrency: s.levels, maxOutputTokens: maxTokens } });
  try {
    for (const context of s.contexts) {
      for (const c of s.levels) {
        const x = await runAccuracyCell(run, sim, { context, concurrency: c, windowMs, metricsIntervalMs: 50, gateTimeoutMs: 30_000 });
        const own = clientLoad(x.raw.timelines, x.raw.windowStartMs, x.raw.windowEndMs, MATRIX_TTFT_FROM);
        const server = x.figures.serverActiveRequests;
        const serverRule = cellStatuses({ concurrency: c, figures: x.figures, samples: x.raw.samples, loopDelayBoundMs: Infinity }).statuses.join(',');
        const delta = server !== undefined && server > 0 ? (100 * (own.meanRunning - server)) / server : undefined;
        console.log(
          [s.name, context, c, f(server), f(own.meanRunning), f(delta, 1), f(own.meanWaiting), own.maxWaiting, own.peakRunning, f(own.heldAtPeakShare), clientQueued(own, c) ? 'queued' : 'valid', serverRule].join(' | '),
        );
      }
    }
  } finally {
    await run.opened.close();
    await sim.close();
  }
}
