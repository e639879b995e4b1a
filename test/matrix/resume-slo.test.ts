/**
 * LLM_BENCH_RESUME and the SLO: a kept cell's goodput and verdict were judged against the partial
 * run's SLO, so a run at another SLO (or with one where there was none) cannot continue it.
 */
import { describe, expect, test } from 'vitest';
import { resumeDifferences } from '../../src/matrix/resume.js';
import { parseSloText } from '../../src/slo/slo.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

describe('resumeDifferences: the SLO', () => {
  const at = (slo?: string) => {
    const info = sglangResult().info;
    if (slo) info.run.slo = parseSloText(slo);
    return info;
  };

  test('the same SLO, or none on both sides: nothing differs', () => {
    expect(resumeDifferences(at('perRequest>=20'), at('perRequest>=20'))).toEqual([]);
    expect(resumeDifferences(at(), at())).toEqual([]);
  });

  test('another SLO, or one where there was none, is named', () => {
    expect(resumeDifferences(at('perRequest>=20'), at('perRequest>=30'))).toEqual(['SLO (LLM_BENCH_SLO): the partial run perRequest>=20, this run perRequest>=30']);
    expect(resumeDifferences(at(), at('ttftP90<=500'))).toEqual(['SLO (LLM_BENCH_SLO): the partial run none, this run ttftP90<=500']);
  });
});

describe('loadResume: which cells are kept', () => {
  test('a cell with failed requests (a server that died mid-cell) is measured again, as a failed prefill row is', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadResume } = await import('../../src/matrix/resume.js');
    const partial = sglangResult();
    const crashed = partial.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 16)!;
    crashed.status = 'errors';
    crashed.statuses = ['errors'];
    const path = join(mkdtempSync(join(tmpdir(), 'lsm-resume-')), 'speed-matrix.json');
    writeFileSync(path, JSON.stringify(partial));
    const resume = loadResume(path, sglangResult().info);
    expect(resume.cells.has('8K/16')).toBe(false);
    expect(resume.cells.has('8K/8')).toBe(true);
    expect(resume.cells.has('8K/128')).toBe(false); // over capacity: planned afresh
  });
});
