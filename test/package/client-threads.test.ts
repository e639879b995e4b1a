/**
 * Client threads from the built package (issue 24): a thread's bootstrap in dist/ runs the
 * compiled entry (dist/src/load/stream-thread-main.js), not the TypeScript sources, so an
 * installed package can spread a cell's streams over threads without tsx.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { resolveSuite, runCell, startSim } from 'llm-speed-matrix';
import { openRun } from '../../dist/src/matrix/open.js';

test('a cell over 2 client threads, run from dist/, streams every worker', { timeout: 60_000 }, async () => {
  const entry = fileURLToPath(new URL('../../dist/src/load/stream-thread-main.js', import.meta.url));
  expect(existsSync(entry)).toBe(true);
  expect(existsSync(entry.replace(/stream-thread-main\.js$/, 'stream-thread.mjs'))).toBe(true);
  const sim = await startSim({ profile: 'tiny', thread: true, overrides: { stepBaseMs: 10, stepPerRequestMs: 0, stepPerKvTokenMs: 0, eosProbability: 0 } });
  const cfg = resolveSuite({ target: { url: sim.url }, matrix: { contexts: [0], concurrency: [4], maxOutputTokens: 200 } }, {});
  const opened = await openRun(cfg);
  try {
    const phases: string[] = [];
    const raw = await runCell(opened.session, {
      context: 0,
      concurrency: 4,
      promptFor: (w, i) => `worker ${w} request ${i}: tell me a story`,
      scoutPrompts: ['tell me a story'],
      windowMs: 800,
      gateTimeoutMs: 10_000,
      gateSettleMs: 100,
      drainTimeoutMs: 5_000,
      metricsIntervalMs: 200,
      threads: 2,
      onPhase: (m) => phases.push(m),
    });
    expect(phases).toContain('starting 4 workers on 2 client threads');
    expect(raw.clientThreads).toHaveLength(2);
    expect(raw.timelines.filter((t) => t.end?.kind !== 'error' && t.chunkMs.length > 0).length).toBeGreaterThanOrEqual(4);
    expect(new Set(raw.timelines.map((t) => t.id.replace(/-r\d+$/, '')))).toHaveProperty('size', 4);
  } finally {
    await opened.close();
    await sim.close();
  }
});
