/**
 * The numbers that made a cell Over capacity, in one phrase (METHOD.md: record them), for the
 * progress lines, the pages and the SLO verdict's detail.
 */
import { formatCount, formatNumber } from './format.js';
import type { CellResult, RateCellResult } from '../shapes/result.js';

/**
 * `4 × 1,304 tokens a request (its prompt and max output) = 5,216 tokens > KV capacity 4,096`, or
 * undefined without the evidence; `maxOutputTokens`, the run's, makes the request when the
 * evidence has none (results written before it was recorded: the row's context + max output).
 */
export function overCapacitySum(cell: Pick<CellResult, 'concurrency' | 'context' | 'evidence'>, maxOutputTokens: number): string | undefined {
  const cap = cell.evidence.capacity;
  if (cap === undefined) return undefined;
  const request = cap.requestTokens ?? cell.context + maxOutputTokens;
  return `${cell.concurrency} × ${formatCount(request)} tokens a request (its prompt and max output) = ${formatCount(cap.requiredTokens)} tokens > KV capacity ${formatCount(cap.kvCapacityTokens)}`;
}

/** overCapacitySum, or where the evidence holds none (a result written before it was recorded), that it would not fit. */
export function overCapacityReason(cell: Pick<CellResult, 'concurrency' | 'context' | 'evidence'>, maxOutputTokens: number): string {
  return overCapacitySum(cell, maxOutputTokens) ?? 'it would not fit in the KV cache';
}

/**
 * A rate cell's: `12.5 in flight × 4,160 tokens a request = 52,000 tokens > KV capacity 40,000`
 * (Little's law puts the rate × one request's service time in flight), or undefined without the evidence.
 */
export function rateOverCapacitySum(cell: Pick<RateCellResult, 'context' | 'evidence'>): string | undefined {
  const o = cell.evidence.overCapacity;
  if (o === undefined) return undefined;
  const request = o.requestTokens !== undefined ? `${formatNumber(o.requestTokens, Number.isInteger(o.requestTokens) ? 0 : 1)} tokens a request` : `(${formatCount(cell.context)} + max output)`;
  return `${formatNumber(o.expectedInFlight, 1)} in flight × ${request} = ${formatCount(o.requiredTokens)} tokens > KV capacity ${formatCount(o.kvCapacityTokens)}`;
}
