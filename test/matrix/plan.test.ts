import { describe, expect, test } from 'vitest';
import { planMatrix } from '../../src/matrix/plan.js';
import { SIM_REFERENCE_MATRICES } from '../../src/config/resolve.js';
import { SIM_PROFILES } from '../../src/sim/index.js';

/** Over-capacity cells of the reference SGLang H200 page (shared/reference). */
const SGLANG_OVER = ['8K/128', '16K/128', '32K/64', '32K/128', '64K/32', '64K/64', '64K/128', '123K/16', '123K/32', '123K/64', '123K/128'];

describe('planMatrix', () => {
  test('the sglang-h200 profile capacity marks exactly the reference page Over capacity cells', () => {
    const m = { ...SIM_REFERENCE_MATRICES['sglang-h200']!, windowS: 30 };
    const p = SIM_PROFILES['sglang-h200']!;
    const plan = planMatrix(m, { kvCapacityTokens: p.kvCapacityTokens, maxRunningRequests: p.maxRunningRequests });
    expect(plan.cells.filter((c) => c.overCapacity).map((c) => c.key)).toEqual(SGLANG_OVER);
    expect(plan.cells).toHaveLength(40);
    expect(plan.prefill.map((r) => r.key)).toEqual(['8K', '16K', '32K', '64K', '123K', '128K']);
  });

  test('the vllm-arc-b65x4 profile runs every cell, like its page', () => {
    const m = { ...SIM_REFERENCE_MATRICES['vllm-arc-b65x4']!, windowS: 30 };
    const p = SIM_PROFILES['vllm-arc-b65x4']!;
    const plan = planMatrix(m, { kvCapacityTokens: p.kvCapacityTokens, maxRunningRequests: p.maxRunningRequests });
    expect(plan.cells.filter((c) => c.overCapacity)).toEqual([]);
    expect(plan.cells.map((c) => c.key).slice(0, 5)).toEqual(['0/1', '0/2', '0/4', '0/8', '0/16']);
  });

  test('the evidence carries the numbers; unknown capacity runs every cell', () => {
    const m = { contexts: [8192], concurrency: [2, 3], prefill: [], windowS: 1, maxOutputTokens: 4096 };
    const plan = planMatrix(m, { kvCapacityTokens: 2 * (8192 + 4096) });
    expect(plan.cells[0]!.overCapacity).toBeUndefined(); // equal is not over
    expect(plan.cells[1]!.overCapacity).toEqual({ requiredTokens: 3 * 12288, kvCapacityTokens: 24576, requestTokens: 12288 });
    expect(planMatrix(m, {}).cells.every((c) => !c.overCapacity)).toBe(true);
  });
});
