/**
 * Average active requests on llama.cpp's decode counters, in a cell whose server idles part of the
 * window (multi-turn think times): the figure is a mean over the window, as METHOD.md's is.
 *
 * llama.cpp's busy slots per decode call see no idle time: a conversation that thinks 0.4 s after a
 * turn of about 0.2 s keeps its slot busy a third of the window, yet every decode call has that one
 * slot busy. Real llama.cpp b4748 (docs/running.md) showed 1.0 and 2.0 against the client's 0.5 and
 * 1.2. The cell's figure is the per-call mean times the share of the window with a request in
 * flight (src/metrics/figures.ts); here it is checked against the sim's truth: the time each
 * request spent admitted (admission to its end) inside the window, over the window.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { computeCellFigures } from '../../src/metrics/figures.js';
import { MATRIX_TTFT_FROM } from '../../src/metrics/request.js';
import type { SimHandle } from '../../src/sim/index.js';
import type { MultiTurnWorkload } from '../../src/workload/conversation.js';
import { runConversationCell } from './conversation-cell.js';
import { FAST_TINY, fmt, openAccuracyRun, startThreadSim, truthSince, type OpenedAccuracyRun } from './harness.js';

const THINK_MS = 400;
const WORKLOAD: MultiTurnWorkload = { kind: 'multiTurn', turns: 3, userTokens: 64, systemTokens: 128, thinkMs: { kind: 'fixed', value: THINK_MS }, seed: 1 };
const CONCURRENCY = 2;
const WINDOW_MS = 4000;
/** the figure against the truth: within this share of max(truth, 1), as the ⚠ flag's rule */
const TOLERANCE = 0.1;

let sim: SimHandle;
let run: OpenedAccuracyRun;

beforeAll(async () => {
  // 20 tokens of 10 ms steps: a turn of about 0.2 s, then 0.4 s of think time
  sim = await startThreadSim({ personality: 'llamacpp', overrides: { ...FAST_TINY, maxRunningRequests: 4 } });
  run = await openAccuracyRun(sim, { target: { engine: 'llamacpp' }, matrix: { contexts: [0], concurrency: [CONCURRENCY], maxOutputTokens: 20 } });
}, 30_000);

afterAll(async () => {
  await run?.opened.close();
  await sim?.close();
});

describe('average active requests from llama.cpp decode counters, with think times', () => {
  test(`the figure is the mean over the window (the sim's admitted time), within ${TOLERANCE * 100} %, where a count per decode call is not`, async () => {
    const raw = await runConversationCell(run, { workload: WORKLOAD, concurrency: CONCURRENCY, thinkMs: THINK_MS, maxTokens: 20, windowMs: WINDOW_MS, tag: `${run.opened.session.runId}-think` });
    const { windowStartMs: ws, windowEndMs: we } = raw;
    const truth = await truthSince(sim, raw.timelines[0]!.sendMs - 1);
    let admittedMs = 0;
    for (const t of raw.timelines) {
      const rec = truth.get(t.id);
      if (rec?.admittedMs === undefined) continue;
      const from = Math.max(rec.admittedMs, ws);
      const to = Math.min(rec.endMs ?? we, we);
      if (to > from) admittedMs += to - from;
    }
    const truthMean = admittedMs / (we - ws);
    const f = computeCellFigures({ timelines: raw.timelines, windowStartMs: ws, windowEndMs: we, metricsSamples: raw.samples, ttftFrom: MATRIX_TTFT_FROM });
    // the busy slots per decode call, as the counters give them (what the figure was before)
    const counted = raw.samples.filter((s) => s.atMs >= ws && s.atMs <= we && s.decodeCallsTotal !== undefined && s.busySlotsPerDecode !== undefined);
    const [first, last] = [counted[0]!, counted[counted.length - 1]!];
    const perCall = (last.busySlotsPerDecode! * last.decodeCallsTotal! - first.busySlotsPerDecode! * first.decodeCallsTotal!) / (last.decodeCallsTotal! - first.decodeCallsTotal!);
    console.log(
      `[accuracy] think ${THINK_MS} ms, ${CONCURRENCY} conversations: average active ${fmt(f.averageActiveRequests)} (${f.averageActiveRequestsSource}, ${f.runningFrom}), ` +
        `truth ${fmt(truthMean)}, client in flight ${fmt(f.clientActiveRequests)}, busy slots per decode call ${fmt(perCall)}`,
    );
    expect(f.runningFrom).toBe('decode-counters');
    expect(f.averageActiveRequestsSource).toBe('server');
    // the think time is material: a count per decode call is far above the truth
    expect(perCall).toBeGreaterThan(truthMean * (1 + 3 * TOLERANCE));
    expect(Math.abs(f.averageActiveRequests - truthMean)).toBeLessThanOrEqual(TOLERANCE * Math.max(truthMean, 1));
    expect(f.activeRequestsDisagree).toBe(false);
  }, 60_000);
});
