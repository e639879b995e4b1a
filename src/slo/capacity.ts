/**
 * Capacity at the SLO for one context row (pure): the largest concurrency whose cell meets the
 * SLO, below the first that does not. The matrix columns give a first bracket; the search then
 * bisects between the last passing and the first failing concurrency with adaptive cells until
 * the gap is at most the resolution (one request, or 5 % of the passing concurrency, whichever is
 * larger), and confirms the answer with one final measured cell. That is at most
 * ⌈log2(gap)⌉ + 1 cells per row.
 *
 * Rows whose every column meets the SLO report "at least the largest column": the tool does not
 * measure beyond the matrix the user asked for.
 *
 * This file is the search procedure; the row's record (its capacity, binding constraint, goodput)
 * is decided in judge/capacity-row.ts, and its words are text/capacity-line.ts.
 */
import type { Goodput, SloVerdict } from '../shapes/result.js';

/** One concurrency judged against the SLO. */
export interface Judged {
  concurrency: number;
  verdict: SloVerdict;
  adaptive: boolean;
  /** false for a cell that was not run (Over capacity: decided by the plan, at no cost) */
  measured?: boolean;
  goodput?: Goodput;
}

/** The search stops when hi − lo is at most this: max(1, ⌈5 % of lo⌉). */
export function resolutionAt(lo: number): number {
  return Math.max(1, Math.ceil(0.05 * lo));
}

/**
 * The bracket of judged concurrencies: `lo` the largest one meeting the SLO below the first that
 * does not (0 when even the smallest fails), `hi` that first failing one (undefined when all meet).
 * A column above the first failure that meets again does not raise the capacity: a load the server
 * cannot hold at hi is not held at a higher one (it would be noise, or a different regime).
 */
export function bracket(judged: readonly Judged[]): { lo: number; hi?: number; loJudged?: Judged; hiJudged?: Judged } {
  return bracketBy(judged, (j) => j.concurrency);
}

/** The bracket rule over any ordered load (a concurrency, an open-loop rate: slo/rate-capacity.ts). */
export function bracketBy<J extends { verdict: SloVerdict }>(judged: readonly J[], at: (j: J) => number): { lo: number; hi?: number; loJudged?: J; hiJudged?: J } {
  const sorted = [...judged].sort((a, b) => at(a) - at(b));
  let lo = 0;
  let loJudged: J | undefined;
  for (const j of sorted) {
    if (!j.verdict.meets) return { lo, hi: at(j), ...(loJudged ? { loJudged } : {}), hiJudged: j };
    lo = at(j);
    loJudged = j;
  }
  return { lo, ...(loJudged ? { loJudged } : {}) };
}

/** The next concurrency the search measures, or undefined when the bracket is within the resolution (or open). */
export function nextProbe(judged: readonly Judged[]): number | undefined {
  const { lo, hi } = bracket(judged);
  if (hi === undefined || hi - lo <= resolutionAt(lo)) return undefined;
  return Math.floor((lo + hi) / 2);
}

/** The most cells the search may add for a bracket: ⌈log2(hi − lo)⌉ bisection steps + 1 confirmation. */
export function maxSearchCells(lo: number, hi: number): number {
  return Math.ceil(Math.log2(Math.max(1, hi - lo))) + 1;
}

/** a search never adds more than this many cells per row (its bisection needs ⌈log2(gap)⌉ + 1) */
export const MAX_SEARCH_CELLS = 40;

export interface SearchInput {
  /** the row's columns, judged */
  columns: readonly Judged[];
  /** one cell at this concurrency, judged: measured, or Over capacity from the plan (not run) */
  probe(concurrency: number, why: 'kv-bound' | 'bisection' | 'confirmation'): Promise<Judged>;
  /** true when this many requests at once would not fit the KV cache (the plan's rule; nothing run) */
  overCapacity?(concurrency: number): boolean;
}

export interface SearchOutcome {
  /** the columns and every cell the search added, in the order judged */
  judged: Judged[];
  /** the final cell at the capacity (absent when nothing was bracketed, or the capacity is 0) */
  confirmation?: Judged;
}

/**
 * The search: where the KV cache ends inside the columns' bracket, the first concurrency that would
 * not fit (found by halving over the plan, nothing measured) bounds it from above; then bisection
 * while the gap is over the resolution; then the answer measured once more.
 */
export async function searchCapacity(input: SearchInput): Promise<SearchOutcome> {
  const judged: Judged[] = [...input.columns];
  const { lo, hi } = bracket(judged);
  if (input.overCapacity && hi !== undefined && hi - lo >= 2 && input.overCapacity(hi - 1)) {
    let a = lo + 1;
    let b = hi - 1;
    while (a < b) {
      const mid = Math.floor((a + b) / 2);
      if (input.overCapacity(mid)) b = mid;
      else a = mid + 1;
    }
    judged.push(await input.probe(a, 'kv-bound'));
  }
  let added = 0;
  for (let probe = nextProbe(judged); probe !== undefined && added < MAX_SEARCH_CELLS; probe = nextProbe(judged)) {
    judged.push(await input.probe(probe, 'bisection'));
    added++;
  }
  const end = bracket(judged);
  if (end.hi === undefined || end.lo < 1) return { judged };
  return { judged, confirmation: await input.probe(end.lo, 'confirmation') };
}
