/**
 * End to end per simulated engine: the sim in a worker thread with the llama.cpp, TGI,
 * TensorRT-LLM or Ollama personality; auto-detection picks that engine; the run opens (probe,
 * warm-up), the page's run info is described, and a short real matrix (two cells) runs through the
 * generated cell test body with valid figures.
 */
import { afterAll, describe, expect, test } from 'vitest';
import type { TestContext } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { closeControlAgent } from '../../src/engines/http.js';
import { detectEngine } from '../../src/engines/detect.js';
import { createCellRunner } from '../../src/matrix/cell-test.js';
import { describeRun, openRun } from '../../src/matrix/open.js';
import { planMatrix } from '../../src/matrix/plan.js';
import { RunPrompts } from '../../src/matrix/prompts.js';
import { openRunWorkload } from '../../src/matrix/workload-run.js';
import type { CellResult } from '../../src/shapes/result.js';
import { startSim } from '../../src/sim/index.js';

afterAll(() => closeControlAgent());

const expected = {
  // one token per event, counted by chunk: the adapter no longer asks for per-token timings (they made b4748 bunch its stream)
  llamacpp: { tokenSource: 'chunks', kv: 65_536, maxRunning: 8, metrics: true },
  tgi: { tokenSource: 'chunks', kv: 65_536, maxRunning: undefined, metrics: true },
  trtllm: { tokenSource: 'usage', kv: 65_536, maxRunning: 8, metrics: true },
  ollama: { tokenSource: 'chunks', kv: undefined, maxRunning: undefined, metrics: false },
} as const;

describe.each(Object.keys(expected) as (keyof typeof expected)[])('%s personality end to end', (personality) => {
  test('detected, probed, and a two-cell matrix runs valid', { timeout: 60_000 }, async () => {
    const sim = await startSim({ profile: 'tiny', personality, thread: true });
    const cfg = resolveSuite(
      // METHOD.md's 50 ms Client-limited bound, as the suite's runs (vitest.config.ts says why)
      { target: { url: sim.url }, matrix: { contexts: [0, 1024], concurrency: [1, 4], prefill: [], windowS: 1, maxOutputTokens: 32 }, timeouts: { gateSettleMs: 200 }, clientLimitedLoopDelayMs: 50 },
      {},
    );
    const opened = await openRun(cfg);
    try {
      expect((await detectEngine(opened.session.target)).kind).toBe(personality);
      const { facts, adapter } = opened.session;
      expect(adapter.kind).toBe(personality);
      expect(facts.engine.value).toBe(personality);
      expect(facts.version?.value).toContain(sim.profile.version);
      expect(facts.kvCapacityTokens?.value).toBe(expected[personality].kv);
      expect(facts.maxRunningRequests?.value).toBe(expected[personality].maxRunning);
      expect(facts.metricsPath !== undefined).toBe(expected[personality].metrics);

      const plan = planMatrix(cfg.matrix, { kvCapacityTokens: facts.kvCapacityTokens?.value, maxRunningRequests: facts.maxRunningRequests?.value });
      const info = describeRun(cfg, opened, plan);
      expect(info.engine.engine).toBe(personality);
      expect(info.engine.version).toBe(facts.version?.value);
      const forced = personality !== 'tgi' && personality !== 'ollama';
      expect(info.run.outputLengthForced).toBe(forced ? undefined : false);

      const run = createCellRunner({ cfg, opened, info, thresholds: { cells: {}, prefill: {} }, updating: false, prompts: new RunPrompts(opened.session, cfg.promptMode), workload: openRunWorkload(cfg.workload, false), results: new Map() });
      for (const cell of plan.cells.filter((c) => c.key === '0/1' || c.key === '1K/4')) {
        const meta: { speedMatrix?: { cell: CellResult } } = {};
        const tc = { task: { meta }, skip: () => undefined, signal: new AbortController().signal } as unknown as TestContext;
        await run(cell, tc);
        const result = meta.speedMatrix!.cell;
        expect(result.status, `${cell.key} ${JSON.stringify(result.evidence)}`).toBe('valid');
        const f = result.figures!;
        expect(f.failedRequests).toBe(0);
        expect(f.tokenSource).toBe(expected[personality].tokenSource);
        // tiny: 10 ms steps, one token per step per request → about 100 tok/s per request
        expect(f.perRequestTokensPerSecond!).toBeGreaterThan(50);
        expect(f.perRequestTokensPerSecond!).toBeLessThan(130);
        expect(f.totalTokensPerSecond).toBeGreaterThan(cell.concurrency * 40);
        expect(f.averageActiveRequestsSource).toBe(expected[personality].metrics ? 'server' : 'client');
      }
    } finally {
      await opened.close();
      await sim.close();
    }
  });
});
