/**
 * A rate sweep's rates (matrix.rates 'sweep'), this project's reading of GuideLLM's sweep: two
 * anchors from the decode cells the run already measured for the context, nothing extra,
 * - the synchronous rate: the completed requests/s of the decode cell at concurrency 1 (one
 *   request at a time: the rate a server serves with no queue at all);
 * - the throughput limit: the highest completed requests/s over the context's decode cells (the
 *   most the closed loop got through);
 * then N rates spread evenly from the first to the second, both included, each rounded to 3
 * significant digits (a rate a person can read; rounding may merge neighbours on a narrow span).
 */
import type { CellFigures } from '../shapes/result.js';
import { maxOf } from '../extent.js';

/** completed requests per second of a decode cell */
export function completedPerS(f: Pick<CellFigures, 'completedRequests' | 'measuredForS'>): number | undefined {
  return f.measuredForS > 0 && f.completedRequests > 0 ? f.completedRequests / f.measuredForS : undefined;
}

export type SweepAnchors = { synchronous: number; limit: number } | { error: string };

/**
 * The anchors from a context's decode cells (concurrency and figures; cells without figures were
 * not measured). An error says which is missing.
 */
export function sweepAnchors(cells: readonly { concurrency: number; figures?: Pick<CellFigures, 'completedRequests' | 'measuredForS'> }[]): SweepAnchors {
  const single = cells.find((c) => c.concurrency === 1);
  const synchronous = single?.figures ? completedPerS(single.figures) : undefined;
  if (synchronous === undefined) return { error: 'the decode cell at concurrency 1 completed no request in this run, so the sweep has no synchronous rate' };
  const rates = cells.map((c) => (c.figures ? completedPerS(c.figures) : undefined)).filter((r): r is number => r !== undefined);
  return { synchronous, limit: maxOf([synchronous, ...rates]) };
}

/** N rates from `from` to `to` (both included), evenly spaced, to 3 significant digits. */
export function spreadRates(from: number, to: number, points: number): number[] {
  if (!(from > 0) || !(to >= from) || !Number.isInteger(points) || points < 2) throw new Error(`spreadRates: needs 0 < from ≤ to and points ≥ 2 (got ${from}, ${to}, ${points})`);
  return Array.from({ length: points }, (_, i) => Number((from + ((to - from) * i) / (points - 1)).toPrecision(3)));
}
