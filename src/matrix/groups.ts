/**
 * Row groups (pure): splitting a matrix over files so `vitest --shard` can spread it over machines
 * (Vitest shards by file). Group g of n (1-based) takes:
 *   - the decode rows (contexts, ascending) at positions g−1, g−1+n, g−1+2n, …, with all their cells;
 *   - the prefill rows of those contexts (each runs before its row's cells, as on one machine);
 *   - the prefill rows that are not decode rows, ascending, the k-th (0-based) going to group
 *     ((number of decode rows + k) mod n) + 1, so they fill the groups after the decode rows.
 * Every row lands in exactly one group, whatever n; a group may be empty.
 */
import { ConfigError } from '../errors.js';
import type { MatrixPlan } from './plan.js';

export interface RowGroup {
  /**
   * Which group this file runs, 1-based (1 … of).
   * @example 2
   */
  index: number;
  /**
   * How many groups the rows are dealt into, a count (the number of row-group files).
   * @example 4
   */
  of: number;
}

export function checkRowGroup(group: RowGroup): void {
  const { index, of } = group;
  if (!Number.isInteger(of) || of < 1 || !Number.isInteger(index) || index < 1 || index > of) {
    throw new ConfigError(
      `defineSpeedMatrix rows: { index: ${index}, of: ${of} } is not a row group; index runs from 1 to of, e.g. { index: 2, of: 4 }`,
    );
  }
}

/** Contexts (decode and prefill) that group `group` runs. */
export function groupContexts(plan: MatrixPlan, group: RowGroup): Set<number> {
  checkRowGroup(group);
  const decode = [...new Set(plan.cells.map((c) => c.context))].sort((a, b) => a - b);
  const mine = new Set(decode.filter((_, j) => j % group.of === group.index - 1));
  const extraPrefill = plan.prefill.map((p) => p.context).filter((c) => !decode.includes(c)).sort((a, b) => a - b);
  extraPrefill.forEach((c, k) => {
    if ((decode.length + k) % group.of === group.index - 1) mine.add(c);
  });
  return mine;
}

/** The part of a plan that group `group` runs (same order as the plan). */
export function selectRowGroup(plan: MatrixPlan, group: RowGroup): MatrixPlan {
  const mine = groupContexts(plan, group);
  return {
    prefill: plan.prefill.filter((p) => mine.has(p.context)),
    cells: plan.cells.filter((c) => mine.has(c.context)),
  };
}
