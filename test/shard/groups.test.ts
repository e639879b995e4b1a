import { describe, expect, test } from 'vitest';
import { selectRowGroup, groupContexts } from '../../src/matrix/groups.js';
import { planMatrix } from '../../src/matrix/plan.js';

const K = 1024;
const matrix = (contexts: number[], prefill: number[]) => ({ contexts, concurrency: [1, 4], prefill, windowS: 1, maxOutputTokens: 64 });

describe('row groups', () => {
  test('every row lands in exactly one group, for any number of groups', () => {
    const plan = planMatrix(matrix([0, 8 * K, 16 * K, 32 * K, 64 * K], [8 * K, 32 * K, 123 * K, 128 * K]), {});
    for (const of of [1, 2, 3, 4, 7]) {
      const groups = Array.from({ length: of }, (_, i) => selectRowGroup(plan, { index: i + 1, of }));
      expect(groups.flatMap((g) => g.cells.map((c) => c.key)).sort()).toEqual(plan.cells.map((c) => c.key).sort());
      expect(groups.flatMap((g) => g.prefill.map((p) => p.key)).sort()).toEqual(plan.prefill.map((p) => p.key).sort());
    }
  });

  test('group g takes every n-th decode row, its prefill rows, and the extra prefill rows after the decode rows', () => {
    const plan = planMatrix(matrix([0, 8 * K, 16 * K, 32 * K, 64 * K], [8 * K, 32 * K, 123 * K, 128 * K]), {});
    // decode rows 0, 8K, 16K, 32K, 64K → groups 1, 2, 3, 4, 1; extra prefill 123K, 128K → groups (5+0)%4+1 = 2, (5+1)%4+1 = 3
    expect([...groupContexts(plan, { index: 1, of: 4 })].sort((a, b) => a - b)).toEqual([0, 64 * K]);
    expect([...groupContexts(plan, { index: 2, of: 4 })].sort((a, b) => a - b)).toEqual([8 * K, 123 * K]);
    expect([...groupContexts(plan, { index: 3, of: 4 })].sort((a, b) => a - b)).toEqual([16 * K, 128 * K]);
    const g4 = selectRowGroup(plan, { index: 4, of: 4 });
    expect(g4.cells.map((c) => c.key)).toEqual(['32K/1', '32K/4']);
    expect(g4.prefill.map((p) => p.key)).toEqual(['32K']);
  });

  test('more groups than rows leaves groups empty; a bad group is a clear error', () => {
    const plan = planMatrix(matrix([0, K], []), {});
    expect(selectRowGroup(plan, { index: 4, of: 4 })).toEqual({ prefill: [], cells: [] });
    expect(() => selectRowGroup(plan, { index: 0, of: 4 })).toThrow('index runs from 1 to of');
    expect(() => selectRowGroup(plan, { index: 5, of: 4 })).toThrow('{ index: 5, of: 4 } is not a row group');
  });
});
