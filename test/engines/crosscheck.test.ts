/**
 * Server-side cross-check (src/metrics/crosscheck.ts): the pure comparison, and end to end a wrong
 * client count (multi-token chunks counted as one token each) that the server's generation
 * counter exposes: the cell is flagged in the result and on the page.
 */
import { afterAll, describe, expect, test } from 'vitest';
import type { TestContext } from 'vitest';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { resolveSuite } from '../../src/config/resolve.js';
import { closeControlAgent } from '../../src/engines/http.js';
import type { DecodedChunk, HistogramSnapshot, MetricsSample } from '../../src/shapes/engine.js';
import { createCellRunner } from '../../src/matrix/cell-test.js';
import { describeRun, openRun } from '../../src/matrix/open.js';
import { planMatrix } from '../../src/matrix/plan.js';
import { RunPrompts } from '../../src/matrix/prompts.js';
import { openRunWorkload } from '../../src/matrix/workload-run.js';
import { crossCheckCell, histogramDelta, histogramMedian, relativeDifference } from '../../src/metrics/crosscheck.js';
import { renderMarkdown } from '../../src/pages/markdown.js';
import type { CellResult } from '../../src/shapes/result.js';
import { startSim } from '../../src/sim/index.js';

afterAll(() => closeControlAgent());

/** A request sent at `sendMs` whose first token arrives after `ttftMs`, then one token every `tbtMs`. */
function timeline(id: string, sendMs: number, ttftMs: number, tbtMs: number, tokens: number, done = true): RequestTimeline {
  const chunkMs = Array.from({ length: tokens }, (_, i) => sendMs + ttftMs + i * tbtMs);
  return {
    id,
    sendMs,
    firstTokenMs: sendMs + ttftMs,
    chunkMs,
    chunkTokens: chunkMs.map(() => 1),
    tokenSource: 'chunks',
    reasoningTokens: 0,
    end: done ? { kind: 'done', atMs: chunkMs[chunkMs.length - 1]! } : { kind: 'aborted', atMs: sendMs + 5000 },
  };
}

const hist = (counts: number[]): HistogramSnapshot => ({ upperBoundsS: [0.01, 0.02, 0.04, Infinity], cumulativeCounts: counts, count: counts[3]!, sumS: 0 });

describe('crossCheckCell (pure)', () => {
  // 10 streams, 100 tok/s each, for 0–3000 ms: the client received 1,000 tok/s
  const timelines = Array.from({ length: 10 }, (_, i) => timeline(`r${i}`, 0, 15, 10, 300));

  test('generation counter over the samples span: agrees, or disagrees beyond 10 %', () => {
    const samples = (deltaTokens: number): MetricsSample[] => [
      { atMs: 1000, generationTokensTotal: 5000 },
      { atMs: 2000, generationTokensTotal: 5000 + deltaTokens / 2 },
      { atMs: 3000, generationTokensTotal: 5000 + deltaTokens },
    ];
    const ok = crossCheckCell({ timelines, windowStartMs: 500, windowEndMs: 3000, samples: samples(2000), figures: {} })!;
    expect(ok.disagree).toBe(false);
    expect(ok.items).toEqual([
      expect.objectContaining({ figure: 'outputTokensPerSecond', server: 1000, disagree: false, spanS: 2, samples: 3 }),
    ]);
    expect(ok.items[0]!.client).toBeCloseTo(1000, -1);
    const bad = crossCheckCell({ timelines, windowStartMs: 500, windowEndMs: 3000, samples: samples(2600), figures: {}, engine: 'vllm' })!;
    expect(bad.disagree).toBe(true);
    expect(bad.items[0]).toMatchObject({ server: 1300, disagree: true, source: expect.stringMatching(/^vllm Δ generation-token counter/) });
  });

  test('too few samples, or a span under 500 ms: nothing to compare', () => {
    expect(crossCheckCell({ timelines, windowStartMs: 0, windowEndMs: 3000, samples: [{ atMs: 1000, generationTokensTotal: 1 }], figures: {} })).toBeUndefined();
    expect(
      crossCheckCell({ timelines, windowStartMs: 0, windowEndMs: 3000, samples: [{ atMs: 1000, generationTokensTotal: 1 }, { atMs: 1400, generationTokensTotal: 400 }], figures: {} }),
    ).toBeUndefined();
  });

  test('TTFT histogram: the median bucket (widened 10 %) must hold the client median', () => {
    expect(histogramMedian({ upperBoundsS: [0.01, 0.02, Infinity], cumulativeCounts: [2, 6, 6], count: 6, sumS: 0 })).toEqual({ lowerS: 0.01, upperS: 0.02, medianS: 0.0125, count: 6 });
    expect(histogramDelta(hist([1, 2, 3, 3]), hist([1, 6, 9, 9]))!.cumulativeCounts).toEqual([0, 4, 6, 6]);
    expect(histogramDelta(hist([5, 5, 5, 5]), hist([1, 1, 1, 1]))).toBeUndefined();
    // 6 requests start inside the span, each with TTFT 15 ms
    const starts = Array.from({ length: 6 }, (_, i) => timeline(`t${i}`, 1100 + i * 100, 15, 10, 5));
    const inBucket = crossCheckCell({ timelines: starts, windowStartMs: 1000, windowEndMs: 3000, samples: [{ atMs: 1000, ttftHistogram: hist([0, 0, 0, 0]) }, { atMs: 2500, ttftHistogram: hist([0, 6, 6, 6]) }], figures: {} })!;
    expect(inBucket.items[0]).toMatchObject({ figure: 'ttftMedianMs', server: 15, client: 15, disagree: false, samples: 6 });
    const wrong = crossCheckCell({ timelines: starts, windowStartMs: 1000, windowEndMs: 3000, samples: [{ atMs: 1000, ttftHistogram: hist([0, 0, 0, 0]) }, { atMs: 2500, ttftHistogram: hist([0, 0, 6, 6]) }], figures: {} })!;
    expect(wrong.items[0]).toMatchObject({ figure: 'ttftMedianMs', disagree: true });
  });

  test('llama.cpp per-request timings: (predicted_n − 1) / predicted_ms of requests that finished in the window', () => {
    const reqs = [timeline('a', 0, 15, 10, 50), timeline('b', 0, 15, 10, 50), timeline('c', 0, 15, 10, 50, false)];
    const serverTimings = new Map([
      ['a', { predictedN: 50, predictedMs: 490 }],
      ['b', { predictedN: 50, predictedMs: 490 }],
      ['c', { predictedN: 10, predictedMs: 10 }], // aborted: not counted
    ]);
    const ok = crossCheckCell({ timelines: reqs, windowStartMs: 0, windowEndMs: 1000, samples: [], figures: { perRequestTokensPerSecond: 100 }, serverTimings })!;
    expect(ok.items).toEqual([expect.objectContaining({ figure: 'perRequestTokensPerSecond', server: 100, client: 100, disagree: false, samples: 2 })]);
    // the client timed the same requests 20 % slower than the server did (e.g. its clock or its chunks are wrong)
    const slowReqs = [timeline('a', 0, 15, 12.5, 50), timeline('b', 0, 15, 12.5, 50)];
    const slow = crossCheckCell({ timelines: slowReqs, windowStartMs: 0, windowEndMs: 1000, samples: [], figures: { perRequestTokensPerSecond: 80 }, serverTimings })!;
    expect(slow.items[0]).toMatchObject({ server: 100, client: 80, disagree: true });
  });

  test('llama.cpp per-request timings compare the same requests: a cell of mixed speeds is not flagged when each request agrees', () => {
    // Recorded shape: sharedPrefix 4 groups × 1024 + 256 tokens, 4 streams on 4 slots, 32 output tokens,
    // llama.cpp b4748 on CPU. A cache miss's 1,275-token prefill stalls the slots decoding beside
    // it, so the 24 finished requests' own (predicted_n − 1) / predicted_ms ran from 21.5 to 163 tok/s;
    // the client's speed of each was within 1 % of it. The cell's figure, a median over every
    // request's part inside the window (edges included), was 73.2 where these requests' median was
    // 63.4: the old comparison flagged that 15 % as a disagreement.
    const serverRates = [65.4, 64.9, 156.5, 158.1, 21.8, 56.3, 56.2, 93.9, 21.5, 43.3, 43.3, 158.1, 48.1, 48.1, 48.0, 163.1, 30.1, 155.9, 155.8, 155.8, 22.1, 53.4, 92.6, 92.7];
    const reqs = serverRates.map((r, i) => timeline(`q${i}`, i * 400, 200, 1000 / r / 1.005, 32)); // the client 0.5 % faster
    const serverTimings = new Map(serverRates.map((r, i) => [`q${i}`, { predictedN: 32, predictedMs: (31 / r) * 1000 }]));
    const end = Math.max(...reqs.map((t) => t.end!.atMs));
    const check = crossCheckCell({ timelines: reqs, windowStartMs: 0, windowEndMs: end, samples: [], figures: { perRequestTokensPerSecond: 73.2 }, serverTimings })!;
    const it = check.items.find((i) => i.figure === 'perRequestTokensPerSecond')!;
    expect(it.samples).toBe(24);
    expect(it.server).toBeCloseTo(60.6, 1); // the median of the recorded rates (56.3 and 64.9 either side)
    expect(it.client).toBeCloseTo(60.6 * 1.005, 1);
    expect(it.disagree).toBe(false);
    expect(check.disagree).toBe(false);
  });

  test('relative difference: both zero is 0, only the client zero is 1', () => {
    expect(relativeDifference(0, 0)).toBe(0);
    expect(relativeDifference(5, 0)).toBe(1);
    expect(relativeDifference(110, 100)).toBeCloseTo(0.1, 10);
  });
});

describe('a wrong client count does not pass silently', () => {
  test('two tokens per chunk counted as one: the server counter flags the cell, the page shows ⚠', { timeout: 60_000 }, async () => {
    const sim = await startSim({ profile: 'tiny', personality: 'vllm', thread: true, overrides: { tokensPerStep: 2 } });
    const cfg = resolveSuite(
      // METHOD.md's 50 ms Client-limited bound, as the suite's runs (vitest.config.ts says why)
      { target: { url: sim.url }, matrix: { contexts: [0], concurrency: [2], prefill: [], windowS: 2, maxOutputTokens: 64 }, timeouts: { gateSettleMs: 200 }, clientLimitedLoopDelayMs: 50 },
      {},
    );
    const opened = await openRun(cfg);
    try {
      const adapter = opened.session.adapter;
      const honest = adapter.decodeChunk.bind(adapter);
      const honestScan = adapter.scanChunk!.bind(adapter);
      const broken = (d: DecodedChunk): DecodedChunk => {
        delete d.usage;
        delete d.tokenCount;
        return d;
      };
      // a broken decoder: ignores usage and token ids, so every chunk counts as one token (both
      // readings of the adapter, the parsed payload's and the bytes' scan)
      adapter.decodeChunk = (p: unknown): DecodedChunk => broken(honest(p));
      adapter.scanChunk = (b, s, e, wantText) => {
        const d = honestScan(b, s, e, wantText);
        return d === undefined ? undefined : broken(d);
      };
      const plan = planMatrix(cfg.matrix, { kvCapacityTokens: opened.session.facts.kvCapacityTokens?.value });
      const info = describeRun(cfg, opened, plan);
      const run = createCellRunner({ cfg, opened, info, thresholds: { cells: {}, prefill: {} }, updating: false, prompts: new RunPrompts(opened.session, cfg.promptMode), workload: openRunWorkload(cfg.workload, false), results: new Map() });
      const meta: { speedMatrix?: { cell: CellResult } } = {};
      await run(plan.cells[0]!, { task: { meta }, skip: () => undefined, signal: new AbortController().signal } as unknown as TestContext);
      const cell = meta.speedMatrix!.cell;
      const check = cell.serverCrossCheck!;
      expect(check.disagree).toBe(true);
      const tokens = check.items.find((i) => i.figure === 'outputTokensPerSecond')!;
      expect(tokens.disagree).toBe(true);
      expect(tokens.server / tokens.client).toBeGreaterThan(1.7);
      expect(tokens.server / tokens.client).toBeLessThan(2.3);
      const md = renderMarkdown({ schemaVersion: 2, info, prefill: [], cells: [cell], partial: false });
      expect(md).toMatch(/⚠ Server cross-check: the server's own figures differ from the client's by more than 10 % in 0\/2 \(total tok\/s: server [\d,.]+, client [\d,.]+\)/);
      expect(md).toMatch(/\| Sustained decode \| 0 \| 2 \| Valid ⚠ \|/);
    } finally {
      await opened.close();
      await sim.close();
    }
  });
});
