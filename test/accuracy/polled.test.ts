/**
 * Issue 60, row 8: a polled stream (a server's own HTTP layer polls its engine every 20 ms and
 * sends what it found, the first poll late, so the first chunk is a backlog of tokens) reads the
 * server's own decode rate within 10 %, from continuous usage and from a local tokenizer's
 * per-chunk recount; and a server that sends every stream's headers at once but generates one
 * stream at a time is Requests queued from the client's own evidence. The server's own rate is the
 * engine's, before the polls hold its tokens (the simulator's truth: genTokens over its emissions'
 * span, as llama.cpp's timings give predicted_per_second).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { simTokenizerJsonText } from '../../src/sim/tokenizer-json.js';
import type { SimHandle } from '../../src/sim/index.js';
import { median } from '../../src/metrics/stats.js';
import { accuracyStatuses, compareWithTruth, fmt, openAccuracyRun, runAccuracyCell, startThreadSim, type AccuracyCell, type OpenedAccuracyRun } from './harness.js';

const POLL = { pollMs: 20, firstPollMs: 150 };

/** the median over the cell's requests of the engine's own decode rate (tok/s) */
function serverOwnRate(cell: AccuracyCell): number | undefined {
  const rates: number[] = [];
  for (const t of cell.raw.timelines) {
    const rec = cell.truth.get(t.id);
    if (!rec || rec.genFirstMs === undefined || rec.genLastMs === undefined || !(rec.genLastMs > rec.genFirstMs)) continue;
    rates.push(((rec.genTokens! - rec.genFirstTokens!) / (rec.genLastMs - rec.genFirstMs)) * 1000);
  }
  return median(rates);
}

/** the largest first chunk of the cell's requests, in tokens: the backlog */
const largestFirstChunk = (cell: AccuracyCell): number => Math.max(...cell.raw.timelines.map((t) => t.chunkTokens[0] ?? 0));

describe('a polled stream reads the server\'s own rate', () => {
  const tokenizer = join(mkdtempSync(join(tmpdir(), 'lsm-polled-')), 'tokenizer.json');
  let usageSim: SimHandle;
  let bareSim: SimHandle;
  let usageRun: OpenedAccuracyRun;
  let bareRun: OpenedAccuracyRun;
  beforeAll(async () => {
    writeFileSync(tokenizer, simTokenizerJsonText());
    usageSim = await startThreadSim({ profile: 'tiny', overrides: { eosProbability: 0, wire: POLL } });
    usageRun = await openAccuracyRun(usageSim, { target: { engine: 'vllm' }, matrix: { contexts: [0], concurrency: [1], maxOutputTokens: 64 } });
    // no usage, no token ids, no metrics, one stream generating at a time, every stream's headers at once
    bareSim = await startThreadSim({ profile: 'bare', overrides: { wire: { ...POLL, tokensPerChunk: [1, 1] } } });
    bareRun = await openAccuracyRun(bareSim, { target: { engine: 'openai', tokenizer }, matrix: { contexts: [0], concurrency: [1], maxOutputTokens: 64 } });
  });
  afterAll(async () => {
    await usageRun?.opened.close();
    await bareRun?.opened.close();
    await usageSim?.close();
    await bareSim?.close();
  });

  test.each([
    ['continuous usage', 1],
    ['continuous usage', 4],
    ['a local tokenizer', 1],
  ] as const)('%s, %i at once: per-request tok/s within a tenth of the engine\'s own rate', { timeout: 120_000 }, async (source, concurrency) => {
    const bare = source === 'a local tokenizer';
    const cell = await runAccuracyCell(bare ? bareRun : usageRun, bare ? bareSim : usageSim, { context: 0, concurrency, windowMs: 3_000 });
    const own = serverOwnRate(cell);
    const measured = cell.figures.perRequestTokensPerSecond;
    const cmp = compareWithTruth(cell);
    console.log(`[accuracy] polled ${source} 0/${concurrency}: per-request ${fmt(measured)} tok/s vs the engine's own ${fmt(own)}; tokens ${cmp.measured.outputTokens} vs ${cmp.truth.outputTokens}; first chunk up to ${largestFirstChunk(cell)} tokens; ${cell.figures.tokenSource}`);
    expect(cell.figures.tokenSource).toBe(bare ? 'local-tokenizer' : 'usage');
    // the polls hold tokens back: a first chunk carries the 150 ms backlog
    expect(largestFirstChunk(cell)).toBeGreaterThanOrEqual(5);
    expect(own).toBeDefined();
    expect(Math.abs(measured! - own!)).toBeLessThanOrEqual(0.1 * own!);
  });

  test('one stream at a time, every stream\'s headers at once, 4 at once: Requests queued from the client\'s own evidence', { timeout: 120_000 }, async () => {
    const cell = await runAccuracyCell(bareRun, bareSim, { context: 0, concurrency: 4, windowMs: 3_000 });
    const verdict = accuracyStatuses(cell, 4);
    console.log(`[accuracy] polled bare 0/4: ${verdict.statuses.join(', ')} ${JSON.stringify(verdict.evidence.queued)}`);
    expect(verdict.statuses).toContain('requests-queued');
    expect(verdict.evidence.queued).toMatchObject({ source: 'client', peakRunning: 1 });
  });
});
