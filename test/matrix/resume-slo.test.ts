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
