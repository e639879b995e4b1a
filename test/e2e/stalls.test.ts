/**
 * A stall inside every stream, as a user meets it (issue 59): the embedded simulator pauses each
 * request 3 s after its 15th token (its fault knobs), 10 ms between tokens otherwise. METHOD's time
 * between tokens is a mean per request, so the pause is averaged away (or cut out by the window's
 * edges); the ITL over every gap, the longest gap and the page's note show it, at a 6 s and a 15 s
 * window, and an SLO or a budget on them fails the cell.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { runBench } from '../faults/helpers.js';

const PAUSING = {
  LLM_BENCH_SIM_PROFILE: 'tiny',
  LLM_BENCH_CONTEXTS: '0',
  LLM_BENCH_PREFILL: 'none',
  LLM_BENCH_MAX_TOKENS: '32',
  // the warm-up asks for 8 tokens, so only the cells' requests reach the pause
  LLM_BENCH_SIM_OVERRIDES: '{"faults":{"stallRate":1,"stallMs":3000,"faultAfterTokens":15}}',
};

function run(env: Record<string, string>): { code: number | null; out: string; result: SpeedMatrixResult; md: string; html: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-stall-'));
  const r = runBench({ ...PAUSING, ...env, LLM_BENCH_OUT: dir }, 150);
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  return { ...r, result: JSON.parse(read('speed-matrix.json')) as SpeedMatrixResult, md: read('speed-matrix.md'), html: read('speed-matrix.html') };
}

describe('a 3 s pause once in every stream', () => {
  test('6 s window, one stream at a time: ITL p99 and max, the longest gap and the page show it; itlP99<=100 misses', { timeout: 180_000 }, () => {
    const r = run({ LLM_BENCH_CONCURRENCY: '1', LLM_BENCH_DURATION_S: '6', LLM_BENCH_SLO: 'itlP99<=100' });
    const cell = r.result.cells.find((c) => c.concurrency === 1 && !c.adaptive)!;
    expect(cell.status, r.out).toBe('valid');
    const itl = cell.figures!.interTokenLatencyMs!;
    // the pause, give or take a loaded machine's timers (a step is 10 ms)
    expect(itl.max, r.out).toBeGreaterThan(2_900);
    expect(itl.max).toBeLessThan(3_500);
    expect(itl.p99).toBeGreaterThan(1_000);
    expect(itl.median).toBeLessThan(50);
    expect(cell.figures!.longestGap!.ms).toBe(itl.max);
    expect(cell.figures!.longestGap!.medianGaps).toBeGreaterThan(50);
    expect(cell.slo?.meets).toBe(false);
    expect(cell.slo?.binding?.constraint).toBe('interTokenLatencyMs');
    expect(r.result.capacity?.rows[0]?.capacity).toBe(0);
    expect(r.md).toMatch(/Stalls inside streams: these cells' longest gap/);
    expect(r.md).toMatch(/- 0\/1: longest [\d,]+\.\d ms \(\d+ median gaps\) in request \S+, \d+\.\d s into the window; ITL /);
    expect(r.html).toContain('data-chart="gaps"');
    expect(r.html).toContain('Stalls inside streams');
  });

  test('15 s window, four streams: the pause shows again, and budgets on itlP99Ms and maxGapMs fail the run naming them', { timeout: 180_000 }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-stall-t-'));
    const thresholds = join(dir, 'stall.json');
    writeFileSync(thresholds, JSON.stringify({ target: 'stall', cells: { '0/4': { max: { itlP99Ms: 100, maxGapMs: 2000 } } } }));
    const r = run({ LLM_BENCH_CONCURRENCY: '4', LLM_BENCH_DURATION_S: '15', LLM_BENCH_THRESHOLDS: thresholds });
    const cell = r.result.cells[0]!;
    const itl = cell.figures!.interTokenLatencyMs!;
    expect(itl.max, r.out).toBeGreaterThan(2_900);
    expect(itl.p99).toBeGreaterThan(1_000);
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/0\/4 itlP99Ms [\d,.]+ > max 100/);
    expect(r.out).toMatch(/0\/4 maxGapMs [\d,.]+ > max 2,?000/);
    expect(r.md).toMatch(/- 0\/4: longest /);
  });
});
