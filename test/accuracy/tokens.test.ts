/**
 * Done-when 5: multi-token chunks (tokensPerStep 4, as speculative decoding or a stream interval
 * would send) and reasoning deltas are counted right: output tokens equal the truth's tokens, and
 * the time between tokens is the step time / 4.
 */
import { afterAll, describe, expect, test } from 'vitest';
import type { SimPersonality } from '../../src/sim/index.js';
import type { SimHandle } from '../../src/sim/index.js';
import { compareWithTruth, FAST_TINY, fmt, msTolerance, openAccuracyRun, runAccuracyCell, startThreadSim, type AccuracyCell } from './harness.js';

const STEP_MS = 10;
const TOKENS_PER_STEP = 4;

const sims: SimHandle[] = [];
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of closers) await c();
  for (const s of sims) await s.close();
});

async function cellWith(personality: Exclude<SimPersonality, 'bare'>, reasoningTokens: number, concurrency: number): Promise<AccuracyCell> {
  const sim = await startThreadSim({ personality, overrides: { ...FAST_TINY, stepBaseMs: STEP_MS, tokensPerStep: TOKENS_PER_STEP, reasoningTokens } });
  sims.push(sim);
  // chat endpoint (the default): reasoning deltas exist only there
  const run = await openAccuracyRun(sim, { target: { engine: personality }, matrix: { contexts: [0], concurrency: [1], maxOutputTokens: 4000 } });
  closers.push(() => run.opened.close());
  return runAccuracyCell(run, sim, { context: 0, concurrency, windowMs: 1500 });
}

/** every chunk the client received carries exactly the tokens the sim wrote in that chunk */
function expectChunksMatchTruth(cell: AccuracyCell): void {
  for (const t of cell.raw.timelines) {
    const rec = cell.truth.get(t.id)!;
    expect(rec, t.id).toBeDefined();
    expect(t.chunkTokens.length).toBeGreaterThan(0);
    expect(t.chunkTokens.length).toBeLessThanOrEqual(rec.tokens.length);
    expect(Array.from(t.chunkTokens)).toEqual(rec.tokens.slice(0, t.chunkTokens.length).map(([, n]) => n));
    // and each arrived after the sim wrote it
    for (let i = 0; i < t.chunkMs.length; i++) expect(t.chunkMs[i]!).toBeGreaterThanOrEqual(rec.tokens[i]![0]);
  }
}

describe('multi-token chunks and reasoning deltas', () => {
  test.each(['vllm', 'sglang'] as const)('%s: 4 tokens per chunk, 12 reasoning tokens: tokens = truth, TBT = step / 4', async (personality) => {
    const C = 4;
    const reasoning = 12; // a multiple of 4: no chunk mixes reasoning and content
    const cell = await cellWith(personality, reasoning, C);
    const cmp = compareWithTruth(cell);
    console.log(
      `[accuracy] ${personality} tokensPerStep 4: tokens ${cmp.measured.outputTokens} vs truth ${cmp.truth.outputTokens}; ` +
        `TBT ${fmt(cmp.measured.tbtMedianMs)} vs ${fmt(cmp.truth.tbtMedianMs)} ms; TTFT ${fmt(cmp.measured.ttftMedianMs)} vs ${fmt(cmp.truth.ttftMedianMs)} ms`,
    );
    expect(cell.figures.tokenSource).toBe('usage');
    expect(cell.figures.failedRequests).toBe(0);
    expectChunksMatchTruth(cell);
    expect(cell.raw.timelines.every((t) => t.chunkTokens.every((n) => n === TOKENS_PER_STEP))).toBe(true);

    // output tokens in the window: the tokens the sim wrote in it (chunks straddling an edge by
    // their transit time are the only difference allowed: 2 %)
    expect(Math.abs(cmp.measured.outputTokens - cmp.truth.outputTokens)).toBeLessThanOrEqual(0.02 * cmp.truth.outputTokens);
    expect(cmp.measured.outputTokens % TOKENS_PER_STEP).toBe(0);

    // TBT: the step time spread over its 4 tokens
    const tbtTruth = cmp.truth.tbtMedianMs!;
    expect(Math.abs(cmp.measured.tbtMedianMs! - tbtTruth)).toBeLessThanOrEqual(msTolerance(tbtTruth));
    expect(Math.abs(cmp.measured.tbtMedianMs! - STEP_MS / TOKENS_PER_STEP)).toBeLessThanOrEqual(0.1 * (STEP_MS / TOKENS_PER_STEP));
    expect(cell.figures.perRequestTokensPerSecond!).toBeGreaterThan(0.9 * (1000 * TOKENS_PER_STEP) / STEP_MS);
    expect(cell.figures.perRequestTokensPerSecond!).toBeLessThan(1.1 * (1000 * TOKENS_PER_STEP) / STEP_MS);

    // reasoning: counted as output tokens and as reasoning; the first reasoning delta is the first token
    for (const t of cell.raw.timelines) {
      expect(t.reasoningTokens).toBe(reasoning);
      const rec = cell.truth.get(t.id)!;
      expect(t.firstTokenMs).toBe(t.chunkMs[0]);
      expect(t.firstTokenMs!).toBeGreaterThanOrEqual(rec.firstTokenMs!);
    }
    // (the TTFT tolerance itself is checked in timing.test.ts, with its retry rule for a loaded machine)
  }, 30_000);

  test('a chunk that crosses the reasoning/content boundary (10 reasoning tokens, 4 per step) keeps the total exact', async () => {
    const cell = await cellWith('vllm', 10, 2);
    expectChunksMatchTruth(cell);
    for (const t of cell.raw.timelines) {
      const total = Array.from(t.chunkTokens).reduce((a, b) => a + b, 0);
      const rec = cell.truth.get(t.id)!;
      const written = rec.tokens.slice(0, t.chunkTokens.length).reduce((a, [, n]) => a + n, 0);
      expect(total).toBe(written);
      // the sim writes the boundary step as two events (2 reasoning + 2 content) that both carry the
      // step's cumulative usage, so all 4 tokens land on the reasoning event: 12, not 10
      expect(t.reasoningTokens).toBeGreaterThanOrEqual(10);
      expect(t.reasoningTokens).toBeLessThanOrEqual(12);
    }
  }, 30_000);
});
