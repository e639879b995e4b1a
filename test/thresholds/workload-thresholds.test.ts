/**
 * Issue 23: threshold files name the workload their cell budgets were measured with; a run of
 * another workload is refused, and -u rewrites the cell budgets for the run's workload (the
 * prefill rows, synthetic in every run, are kept).
 */
import { describe, expect, test } from 'vitest';
import { checkThresholdsWorkload, parseThresholds } from '../../src/thresholds/load.js';
import { formatThresholds, updateThresholds } from '../../src/thresholds/update.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

const SHARED = 'sharedPrefix:groups=4,prefix=3072,suffix=1024,seed=1';

describe('threshold files and workloads', () => {
  test('a file of synthetic budgets refuses a workload run, naming both and the fixes; a file of that workload passes', () => {
    const synthetic = updateThresholds(sglangResult()).file;
    expect(synthetic.workload).toBeUndefined();
    expect(() => checkThresholdsWorkload(synthetic, 'thresholds/x.json', 'synthetic')).not.toThrow();
    expect(() => checkThresholdsWorkload(synthetic, 'thresholds/x.json', SHARED)).toThrow(
      /thresholds\/x\.json: its budgets were measured with the workload synthetic, this run's is sharedPrefix:groups=4.*LLM_BENCH_WORKLOAD.*LLM_BENCH_THRESHOLDS.*-u/,
    );
    // an empty file fits any run
    expect(() => checkThresholdsWorkload({ cells: {}, prefill: {} }, 'f.json', SHARED)).not.toThrow();
  });

  test("loading for a workload run whose row differs from the file's: the workload is the reason given, not the keys", () => {
    const text = formatThresholds(updateThresholds(sglangResult()).file);
    // a file workload has one row, 0: none of the synthetic file's cells is in its matrix
    const keys = { cellKeys: ['0/1', '0/8'], prefillKeys: [], workload: 'file:wl/plain.jsonl' };
    expect(() => parseThresholds(text, 'thresholds/x.json', keys)).toThrow(/its budgets were measured with the workload synthetic, this run's is file:wl\/plain\.jsonl/);
    // the same matrix with its own workload: the keys are weighed as before
    expect(() => parseThresholds(text, 'thresholds/x.json', { ...keys, workload: 'synthetic' })).toThrow(/not a cell of the current matrix/);
  });

  test('-u writes the workload and replaces budgets of another workload; the file reads back', () => {
    const base = sglangResult();
    const synthetic = updateThresholds(base).file;
    const run = sglangResult();
    run.info.run.workload = { kind: 'sharedPrefix', text: SHARED };
    // the workload run measured only one cell; the synthetic budgets of the others must not stay
    const one = run.cells[0]!;
    run.cells = [one];
    run.info.run.contexts = [one.context];
    run.info.run.concurrency = [one.concurrency];
    const { file, moves } = updateThresholds(run, synthetic);
    expect(file.workload).toBe(SHARED);
    expect(Object.keys(file.cells)).toEqual([`${one.contextLabel}/${one.concurrency}`]);
    expect(file.prefill).toEqual(updateThresholds(run, undefined).file.prefill);
    expect(moves).toContain(`cell budgets were for the workload synthetic; rewritten for ${SHARED} (a budget this run does not measure is not written again)`);
    const text = formatThresholds(file);
    const back = parseThresholds(text, 'f.json');
    expect(back.workload).toBe(SHARED);
    expect(() => checkThresholdsWorkload(back, 'f.json', SHARED)).not.toThrow();
    expect(() => checkThresholdsWorkload(back, 'f.json', 'synthetic')).toThrow(/measured with the workload sharedPrefix/);
    // capacity and rate budgets of the other workload go too, and the line names each kind
    const withCapacity = { ...synthetic, slo: 'perRequest>=20', capacity: { '8K': { min: 20 } }, rateCapacity: { '8K': { min: 2.5 } } };
    const all = updateThresholds(run, withCapacity);
    expect(all.moves).toContain(`cell, capacity, rateCapacity budgets were for the workload synthetic; rewritten for ${SHARED} (a budget this run does not measure is not written again)`);
    expect(all.file.capacity).toBeUndefined();
    expect(all.file.rateCapacity).toBeUndefined();
  });
});
