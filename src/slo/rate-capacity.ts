/**
 * The highest open-loop rate that meets the SLO for one context (pure): the search of
 * slo/capacity.ts over rates instead of concurrencies. The configured rates give a first bracket
 * (`bracketBy`: lo the highest rate meeting the SLO below the first that does not, hi that first
 * failing rate); the search then bisects between them with adaptive rate cells until
 * hi − lo ≤ 5 % of lo, and confirms the answer with one final measured cell at lo.
 *
 * Rates are real numbers, so the resolution is relative, and each midpoint is rounded to 3
 * significant digits (11.2 req/s, not 11.2187…): a probe names a rate a person can read and
 * repeat. A halving of a gap of g/lo needs ⌈log2(g / (0.05 lo))⌉ probes: from a configured step of
 * 2× (g = lo) that is 5, and the search stops after MAX_RATE_PROBES whatever the gap, so a context
 * costs at most 6 bisection cells and 1 confirmation.
 *
 * Contexts whose every rate meets the SLO report "at least the highest rate"; a context whose
 * lowest rate fails reports 0 and searches nothing below it (a rate has no smallest step to stop
 * at, and the user's lowest rate already says the server cannot serve this context at the SLO).
 */
import type { Goodput, SloVerdict } from '../shapes/result.js';
import { bracketBy } from './capacity.js';

/** One rate judged against the SLO. */
export interface RateJudged {
  rate: number;
  verdict: SloVerdict;
  adaptive: boolean;
  /** false for a rate that was not measured (Over capacity by Little's law, no result) */
  measured?: boolean;
  goodput?: Goodput;
}

/** The search stops when hi − lo is at most this share of lo. */
export const RATE_RESOLUTION = 0.05;

/** bisection cells per context at most (the confirmation comes on top) */
export const MAX_RATE_PROBES = 6;

/** The resolution at a passing rate lo: 5 % of it, requests/s. */
export function rateResolutionAt(lo: number): number {
  return RATE_RESOLUTION * lo;
}

/** The bracket of judged rates (slo/capacity.ts `bracketBy`). */
export function rateBracket(judged: readonly RateJudged[]): { lo: number; hi?: number; loJudged?: RateJudged; hiJudged?: RateJudged } {
  return bracketBy(judged, (j) => j.rate);
}

/** x to 3 significant digits. */
export function threeDigits(x: number): number {
  return Number(x.toPrecision(3));
}

/**
 * The next rate the search measures, or undefined when the bracket is within the resolution, open
 * (every rate met), at 0 (the lowest rate failed), or too narrow for a 3-digit midpoint between.
 */
export function nextRateProbe(judged: readonly RateJudged[]): number | undefined {
  const { lo, hi } = rateBracket(judged);
  if (hi === undefined || !(lo > 0) || hi - lo <= rateResolutionAt(lo)) return undefined;
  const mid = threeDigits((lo + hi) / 2);
  return mid > lo && mid < hi ? mid : undefined;
}

export interface RateSearchInput {
  /** the context's configured rates, judged */
  columns: readonly RateJudged[];
  /** one adaptive rate cell at this rate, measured and judged */
  probe(rate: number, why: 'bisection' | 'confirmation'): Promise<RateJudged>;
}

export interface RateSearchOutcome {
  /** the configured rates and every cell the bisection added, in the order judged */
  judged: RateJudged[];
  /** the final cell at the capacity (absent when nothing was bracketed, or the capacity is 0) */
  confirmation?: RateJudged;
}

/** The search: bisection while the gap is over the resolution, then the answer measured once more. */
export async function searchRateCapacity(input: RateSearchInput): Promise<RateSearchOutcome> {
  const judged: RateJudged[] = [...input.columns];
  let added = 0;
  for (let probe = nextRateProbe(judged); probe !== undefined && added < MAX_RATE_PROBES; probe = nextRateProbe(judged)) {
    judged.push(await input.probe(probe, 'bisection'));
    added++;
  }
  const end = rateBracket(judged);
  if (end.hi === undefined || !(end.lo > 0)) return { judged };
  return { judged, confirmation: await input.probe(end.lo, 'confirmation') };
}
