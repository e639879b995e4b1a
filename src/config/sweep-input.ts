/**
 * The sweep's text, shared by matrix.rates ('sweep', 'sweep:8') and LLM_BENCH_RATES (sweep,
 * sweep:8): the number of rates a sweep spreads per context, 5 unless given, a whole number 2…20
 * (two rates are the two anchors; more than 20 would be a long run for points a page cannot tell
 * apart).
 */
import { decimalNumber } from '../shapes/decimal.js';

export const SWEEP_DEFAULT_POINTS = 5;
export const SWEEP_MAX_POINTS = 20;

/** undefined: not a sweep (a rate list); else its points, or what is wrong with them. */
export function parseSweepText(text: string): { points: number } | { error: string } | undefined {
  const m = /^\s*sweep\s*(?::\s*(.*?)\s*)?$/i.exec(text);
  if (!m) return undefined;
  if (m[1] === undefined) return { points: SWEEP_DEFAULT_POINTS };
  const n = decimalNumber(m[1]);
  if (!Number.isInteger(n) || n < 2 || n > SWEEP_MAX_POINTS) {
    return { error: `"${text.trim()}": a sweep's points are a whole number from 2 to ${SWEEP_MAX_POINTS}, e.g. sweep:8 (sweep alone: ${SWEEP_DEFAULT_POINTS})` };
  }
  return { points: n };
}
