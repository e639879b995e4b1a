/**
 * A context row's capacity at the SLO, decided from everything the search judged (the columns,
 * its adaptive cells) and its confirmation: the largest concurrency that meets the SLO below the
 * first that does not (slo/capacity.ts `bracket`), the constraint that binds there, its goodput.
 */
import type { CapacityRow, CellResult, Goodput, SloVerdict } from '../shapes/result.js';
import { bracket, resolutionAt, type Judged } from '../slo/capacity.js';

export interface CapacityInput {
  context: number;
  contextLabel: string;
  judged: readonly Judged[];
  /** the final measured cell at the capacity */
  confirmation?: { concurrency: number; verdict: SloVerdict; goodput?: Goodput };
}

/** The row's capacity record from everything judged (columns, adaptive cells) and the confirmation. */
export function capacityRow(input: CapacityInput): CapacityRow {
  const { lo, hi, loJudged, hiJudged } = bracket(input.judged);
  const sorted = [...input.judged].sort((a, b) => a.concurrency - b.concurrency);
  const row: CapacityRow = {
    context: input.context,
    contextLabel: input.contextLabel,
    capacity: lo,
    atLeast: hi === undefined && sorted.length > 0,
    searched: sorted.map((j) => ({ concurrency: j.concurrency, meets: j.verdict.meets, adaptive: j.adaptive })),
    adaptiveCells: sorted.filter((j) => j.adaptive && j.measured !== false).length + (input.confirmation ? 1 : 0),
    resolution: resolutionAt(lo),
  };
  if (hiJudged?.verdict.binding) {
    row.binding = hiJudged.verdict.binding;
    row.bindingConcurrency = hiJudged.concurrency;
  }
  const goodput = input.confirmation?.goodput ?? loJudged?.goodput;
  if (lo > 0 && goodput) row.goodput = goodput;
  if (input.confirmation) {
    const c = input.confirmation;
    row.confirmation = { concurrency: c.concurrency, meets: c.verdict.meets, ...(c.verdict.binding ? { binding: c.verdict.binding } : {}) };
  }
  return row;
}

/** A judged entry from a cell result and its verdict. */
export function judgedOf(cell: CellResult, adaptive: boolean): Judged | undefined {
  if (!cell.slo) return undefined;
  return {
    concurrency: cell.concurrency,
    verdict: cell.slo,
    adaptive,
    ...(cell.status === 'over-capacity' ? { measured: false } : {}),
    ...(cell.goodput ? { goodput: cell.goodput } : {}),
  };
}
