/**
 * Issue 18 (3): statuses without server metrics. Where a server exposes no running or waiting
 * figure, the client's own timelines decide Requests queued (src/judge/status.ts clientQueued).
 * Here the simulator's cells are judged twice: as the matrix judges them (server samples), and
 * with the server's figures taken away (samples [], no server fields), as a server without
 * metrics would be judged.
 *
 * - A server that runs all C at once (`tiny`, `sglang-h200`; C = 1, 2, 4, 8; 64 tokens; short
 *   windows; context 0 and 16K) reads Valid from the client's timelines too: no false queue from
 *   the wait every new request has for its first token.
 * - A server with one slot reads Requests queued at C = 2 and 4 (client-side evidence), Valid at 1.
 * - Where metrics exist, the client's running count (first to last token) agrees with the
 *   server's mean running within 5 % (context 0; at long contexts the server also counts the
 *   prefill that the client sees as waiting).
 *
 * NOTE for the `bare` personality (one slot, no /metrics): the same checks belong against it once
 * it exists (lead: add it to SERVERS below with queues: true).
 */
import { afterAll, describe, expect, test } from 'vitest';
import type { CellFigures } from '../../src/shapes/result.js';
import { cellStatuses } from '../../src/judge/status.js';
import type { SimProfileOverrides } from '../../src/sim/index.js';
import { fmt, openAccuracyRun, runAccuracyCell, startThreadSim, type AccuracyCell } from './harness.js';

const MAX_TOKENS = 64;
const WINDOW_MS = 2_500;

interface ServerSpec {
  name: string;
  profile: string;
  engine: 'vllm' | 'sglang';
  overrides: SimProfileOverrides;
  contexts: number[];
  levels: number[];
  /** the server queues every C above its slots */
  slots?: number;
}

const SERVERS: ServerSpec[] = [
  { name: 'tiny', profile: 'tiny', engine: 'vllm', overrides: { eosProbability: 0 }, contexts: [0, 16_384], levels: [1, 2, 4, 8] },
  { name: 'sglang-h200', profile: 'sglang-h200', engine: 'sglang', overrides: { eosProbability: 0 }, contexts: [0, 16_384], levels: [1, 2, 4, 8] },
  { name: 'tiny, one slot', profile: 'tiny', engine: 'vllm', overrides: { eosProbability: 0, maxRunningRequests: 1 }, contexts: [0], levels: [1, 2, 4], slots: 1 },
];

/** The cell's statuses as a server without metrics would get them: no samples, no server figures. */
function clientOnlyStatuses(x: AccuracyCell, concurrency: number) {
  const { serverActiveRequests: _s, maxWaitingRequests: _w, ...figures } = x.figures;
  return cellStatuses({
    concurrency,
    figures: { ...figures, activeRequestsDisagree: false } as CellFigures,
    timelines: x.raw.timelines,
    samples: [],
    windowStartMs: x.raw.windowStartMs,
    windowEndMs: x.raw.windowEndMs,
    loopDelayBoundMs: Infinity,
  });
}

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

for (const spec of SERVERS) {
  describe(`${spec.name}: statuses from the client's own timelines`, () => {
    const cells = new Map<string, Promise<AccuracyCell>>();
    let opened: Promise<{ sim: Awaited<ReturnType<typeof startThreadSim>>; run: Awaited<ReturnType<typeof openAccuracyRun>> }> | undefined;
    const open = () =>
      (opened ??= (async () => {
        const sim = await startThreadSim({ profile: spec.profile, overrides: spec.overrides });
        const run = await openAccuracyRun(sim, { target: { engine: spec.engine }, matrix: { contexts: spec.contexts, concurrency: spec.levels, maxOutputTokens: MAX_TOKENS } });
        closers.push(async () => {
          await run.opened.close();
          await sim.close();
        });
        return { sim, run };
      })());
    const cell = (context: number, c: number): Promise<AccuracyCell> => {
      const key = `${context}/${c}`;
      let got = cells.get(key);
      if (!got) {
        // the sim's queue never empties with one slot, and the probe does not learn the slot count
        // (vLLM without /server_info), so the readiness gate would wait it out: a short gate, as a
        // server without metrics has none
        const gateTimeoutMs = spec.slots !== undefined && c > spec.slots ? 3_000 : 30_000;
        got = open().then(({ sim, run }) => runAccuracyCell(run, sim, { context, concurrency: c, windowMs: WINDOW_MS, metricsIntervalMs: 50, gateTimeoutMs }));
        cells.set(key, got);
      }
      return got;
    };

    for (const context of spec.contexts) {
      for (const c of spec.levels) {
        const queues = spec.slots !== undefined && c > spec.slots;
        test(`${context}/${c} reads ${queues ? 'Requests queued' : 'Valid'} without server figures`, async () => {
          const x = await cell(context, c);
          expect(x.figures.failedRequests).toBe(0);
          const verdict = clientOnlyStatuses(x, c);
          const q = verdict.evidence.queued;
          console.log(
            `${spec.name} ${context}/${c}: server running ${fmt(x.figures.serverActiveRequests)}, client running ${fmt(x.figures.clientRunningRequests)}, ` +
              `waiting ${fmt(x.figures.clientWaitingRequests)} (max ${x.figures.clientMaxWaitingRequests}), ${verdict.statuses.join(', ')}${q ? ` peak ${q.peakRunning}, held ${fmt(q.heldAtPeakShare)}` : ''}`,
          );
          if (queues) {
            expect(verdict.statuses).toEqual(['requests-queued']);
            expect(q).toMatchObject({ source: 'client', concurrency: c, peakRunning: spec.slots });
          } else {
            expect(verdict.statuses, JSON.stringify(x.figures)).toEqual(['valid']);
          }
        });
      }
    }

    for (const c of spec.levels) {
      test(`0/${c}: the client's running count is within 5 % of the server's mean running`, async () => {
        const x = await cell(0, c);
        const server = x.figures.serverActiveRequests!;
        expect(x.figures.runningFrom).toBe('samples');
        expect(Math.abs(x.figures.clientRunningRequests! - server) / server).toBeLessThan(0.05);
      });
    }
  });
}
