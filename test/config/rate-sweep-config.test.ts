/**
 * The sweep's configuration: matrix.rates 'sweep' / 'sweep:N' and LLM_BENCH_RATES=sweep / sweep:N
 * resolve into RateSettings with `rates: []` and `sweep: { points }`; bad points and columns
 * without concurrency 1 are errors naming the field and the fix.
 */
import { describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { MatrixSchema } from '../../src/config/schema.js';
import { parseSweepText } from '../../src/config/sweep-input.js';
import type { MatrixInput } from '../../src/config/suite-input.js';

const url = 'http://127.0.0.1:8000';
const resolveMatrix = (matrix: MatrixInput, env: Record<string, string> = {}) => resolveSuite({ target: { url }, matrix }, env);
const error = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('no error');
};

describe('rate sweep settings', () => {
  test('the sweep text: 5 points unless given, 2…20, anything else is not a sweep', () => {
    expect(parseSweepText('sweep')).toEqual({ points: 5 });
    expect(parseSweepText(' Sweep : 8 ')).toEqual({ points: 8 });
    expect(parseSweepText('sweep:2')).toEqual({ points: 2 });
    expect(parseSweepText('sweep:20')).toEqual({ points: 20 });
    for (const bad of ['sweep:1', 'sweep:21', 'sweep:2.5', 'sweep:', 'sweep:x']) expect(parseSweepText(bad)).toHaveProperty('error');
    expect(parseSweepText('1,2')).toBeUndefined();
    expect(parseSweepText('sweeps')).toBeUndefined();
  });

  test('from the suite and from the environment: no rates, the sweep recorded', () => {
    const base = { rates: [], arrival: 'poisson', seed: 1, rampS: 0, maxInFlight: 512 };
    expect(resolveMatrix({ concurrency: [1, 8], rates: 'sweep' }).rates).toEqual({ ...base, sweep: { points: 5 } });
    expect(resolveMatrix({ concurrency: [1, 8], rates: 'sweep:8' }).rates).toEqual({ ...base, sweep: { points: 8 } });
    expect(resolveMatrix({ concurrency: [1, 8] }, { LLM_BENCH_RATES: 'sweep:3' }).rates).toEqual({ ...base, sweep: { points: 3 } });
    // the environment wins both ways
    expect(resolveMatrix({ concurrency: [1, 8], rates: 'sweep' }, { LLM_BENCH_RATES: '2,4' }).rates?.rates).toEqual([2, 4]);
    expect(resolveMatrix({ concurrency: [1, 8], rates: [2, 4] }, { LLM_BENCH_RATES: 'sweep' }).rates).toMatchObject({ rates: [], sweep: { points: 5 } });
    // a list has no sweep field: its pages and files stay as they were
    expect(resolveMatrix({ rates: [1] }).rates).not.toHaveProperty('sweep');
  });

  test('bad points name the field', () => {
    expect(error(() => resolveMatrix({ concurrency: [1, 8] }, { LLM_BENCH_RATES: 'sweep:1' }))).toMatch(/^LLM_BENCH_RATES: "sweep:1": a sweep's points are a whole number from 2 to 20, e\.g\. sweep:8/);
    expect(error(() => resolveMatrix({ concurrency: [1, 8], rates: 'sweep:40' }))).toMatch(/- matrix\.rates: "sweep:40": a sweep's points are a whole number from 2 to 20/);
    expect(error(() => resolveMatrix({ concurrency: [1, 8], rates: 'fast' }))).toMatch(/- matrix\.rates: "fast" is neither a list of rates nor a sweep/);
    // the suite file's schema says the same
    const parsed = MatrixSchema.safeParse({ rates: 'sweep:0' });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toMatch(/from 2 to 20/);
    expect(MatrixSchema.safeParse({ rates: 'often' }).error?.issues[0]?.message).toMatch(/neither a list of rates nor a sweep/);
    expect(MatrixSchema.safeParse({ rates: 'sweep:4' }).success).toBe(true);
    expect(MatrixSchema.safeParse({ rates: [1, 2] }).success).toBe(true);
  });

  test('a sweep needs concurrency 1 and another column: the error names the fields and the fix', () => {
    const e = error(() => resolveMatrix({ concurrency: [2, 8] }, { LLM_BENCH_RATES: 'sweep' }));
    expect(e).toMatch(/^LLM_BENCH_RATES: a sweep starts at the synchronous rate, measured by the decode cell at concurrency 1, which the columns \(2, 8\) lack/);
    expect(e).toMatch(/LLM_BENCH_CONCURRENCY or matrix\.concurrency/);
    expect(error(() => resolveMatrix({ concurrency: [4], rates: 'sweep' }))).toMatch(/^matrix\.rates: a sweep starts/);
    expect(error(() => resolveMatrix({ concurrency: [1], rates: 'sweep' }))).toMatch(/^matrix\.rates: a sweep ends at the throughput limit.*LLM_BENCH_CONCURRENCY or matrix\.concurrency/);
    expect(error(() => resolveMatrix({ concurrency: [1, 8] }, { LLM_BENCH_CONCURRENCY: '8', LLM_BENCH_RATES: 'sweep' }))).toMatch(/columns \(8\) lack/);
  });
});
