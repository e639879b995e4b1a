/**
 * Issue 18, done when, against the `bare` personality (close-delimited HTTP/1.0 streams, an
 * unterminated last `data: [DONE]`, "null" finish reasons, 2–4 tokens per chunk, no usage, one
 * request at a time, no metrics, no tokenize endpoint) with a local tokenizer.json (the sim's
 * own, exported): every request completes, output tokens are within 1 % of the sim's truth,
 * per-request tok/s within 5 %, the cells with C > 1 read Requests queued from client-side
 * evidence, and the result names the token source and the stream endings. Without a tokenizer
 * the run stops with an error naming LLM_BENCH_TOKENIZER.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { simTokenizerJsonText } from '../../src/sim/tokenizer-json.js';
import type { SimHandle } from '../../src/sim/index.js';
import { streamEndings } from '../../src/metrics/stream-endings.js';
import { usageDisagreement } from '../../src/metrics/usage-check.js';
import { accuracyStatuses, compareWithTruth, edgeTransitTokens, fmt, openAccuracyRun, runAccuracyCell, startThreadSim, type OpenedAccuracyRun } from './harness.js';

let sim: SimHandle;
let run: OpenedAccuracyRun;
const tokenizer = join(mkdtempSync(join(tmpdir(), 'lsm-bare-')), 'tokenizer.json');

beforeAll(async () => {
  writeFileSync(tokenizer, simTokenizerJsonText());
  sim = await startThreadSim({ profile: 'bare' });
  // no engine set: detection and its confirming request find the generic adapter, as for a user
  run = await openAccuracyRun(sim, { target: { engine: undefined, tokenizer }, matrix: { contexts: [0, 1024], concurrency: [1], maxOutputTokens: 64 } });
});
afterAll(async () => {
  await run?.opened.close();
  await sim?.close();
});

describe('any OpenAI-compatible server: the bare personality with a local tokenizer', () => {
  test.each([
    [0, 1],
    [1024, 1],
    [0, 2],
    [1024, 4],
  ])('context %i, %i at once: no failure, tokens and per-request tok/s match the truth, endings named', { timeout: 120_000 }, async (context, concurrency) => {
    expect(run.opened.session.adapter.kind).toBe('openai');
    const cell = await runAccuracyCell(run, sim, { context, concurrency, windowMs: 2_500 });
    const cmp = compareWithTruth(cell);
    const transit = edgeTransitTokens(cell);
    console.log(
      `[accuracy] bare ${context}/${concurrency}: tokens ${cmp.measured.outputTokens} vs truth ${cmp.truth.outputTokens} ` +
        `(${transit.tokens} in ${transit.chunks} chunks in transit at a window edge); ` +
        `per-request ${fmt(cmp.measured.perRequestTps)} vs ${fmt(cmp.truth.perRequestTps)} tok/s; source ${cell.figures.tokenSource}`,
    );
    expect(cell.figures.failedRequests).toBe(0);
    expect(cell.raw.timelines.filter((t) => t.end?.kind === 'error')).toEqual([]);
    expect(cell.figures.tokenSource).toBe('local-tokenizer');
    // within 1 %, besides the chunks written before a window edge and read after it: this cell's
    // 2.5 s window holds about 250 tokens, and one 4-token chunk in transit is 1.6 % of them (a
    // 30 s window makes it 0.1 %). At most one chunk per request at each edge.
    expect(transit.chunks).toBeLessThanOrEqual(2 * concurrency);
    expect(Math.abs(cmp.measured.outputTokens - cmp.truth.outputTokens)).toBeLessThanOrEqual(Math.max(1, 0.01 * cmp.truth.outputTokens) + transit.tokens);
    expect(cmp.measured.perRequestTps).toBeDefined();
    expect(Math.abs(cmp.measured.perRequestTps! - cmp.truth.perRequestTps!)).toBeLessThanOrEqual(0.05 * cmp.truth.perRequestTps!);
    // every completed stream ended with an unterminated `data: [DONE]` at the close
    const endings = streamEndings(cell.raw.timelines, cell.raw.windowStartMs, cell.raw.windowEndMs);
    expect(endings.unterminatedLast).toBe(cell.figures.completedRequests);
    expect(endings.done).toBe(0);
    const verdict = accuracyStatuses(cell, concurrency);
    if (concurrency === 1) expect(verdict.statuses).toEqual(['valid']);
    else {
      expect(verdict.statuses).toContain('requests-queued');
      expect(verdict.evidence.queued?.source).toBe('client');
    }
  });
});

describe('without a tokenizer, and usage that lies', () => {
  test('bare without LLM_BENCH_TOKENIZER: prompts cannot be sized, and the error names the variable', { timeout: 60_000 }, async () => {
    const noTok = await openAccuracyRun(sim, { target: { engine: undefined }, matrix: { contexts: [1024], concurrency: [1], maxOutputTokens: 64 } });
    try {
      await expect(noTok.prompts.rowPrompt(1024, 64)).rejects.toThrow(/LLM_BENCH_TOKENIZER/);
    } finally {
      await noTok.opened.close();
    }
  });

  test('a final usage of twice the streamed tokens is flagged on every request, and the counts come from the text', { timeout: 60_000 }, async () => {
    // the generic adapter asks for include_usage only: one final usage chunk, no continuous usage.
    // No simulated EOS: the generic adapter sends no ignore_eos, and a request stopped after one or
    // two tokens reports a doubled usage that is still within the 2-token tolerance (a rare flake).
    const liar = await startThreadSim({ profile: 'tiny', overrides: { eosProbability: 0, faults: { usageFactor: 2 } } });
    const lied = await openAccuracyRun(liar, { target: { engine: 'openai', tokenizer }, matrix: { contexts: [0], concurrency: [2], maxOutputTokens: 32 } });
    try {
      const cell = await runAccuracyCell(lied, liar, { context: 0, concurrency: 2, windowMs: 1_500 });
      const cmp = compareWithTruth(cell);
      const transit = edgeTransitTokens(cell);
      expect(cell.figures.tokenSource).toBe('local-tokenizer');
      expect(transit.chunks).toBeLessThanOrEqual(2 * 2);
      expect(Math.abs(cmp.measured.outputTokens - cmp.truth.outputTokens)).toBeLessThanOrEqual(Math.max(1, 0.01 * cmp.truth.outputTokens) + transit.tokens);
      const flagged = usageDisagreement(cell.raw.timelines);
      expect(flagged?.requests).toBeGreaterThan(0);
      expect(flagged?.requests).toBe(flagged?.of);
      expect(flagged!.example.usage).toBe(2 * flagged!.example.counted);
    } finally {
      await lied.opened.close();
      await liar.close();
    }
  });
});
