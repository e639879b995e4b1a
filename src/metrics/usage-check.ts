/**
 * Usage that disagrees with the streamed tokens (issue 18): a server's final
 * `usage.completion_tokens` is checked against what the stream showed, and never replaces it.
 *
 * For each completed request that reported a final usage while its tokens came from the stream
 * (`tokenSource` other than continuous `usage`):
 * - counted from the text (`local-tokenizer`) or from token ids: a disagreement is a difference of
 *   more than max(USAGE_TOLERANCE_TOKENS, USAGE_TOLERANCE_FRACTION of the counted tokens);
 * - counted from chunks (one per chunk, no local tokenizer): a chunk may carry several tokens, so
 *   usage above the chunk count is no disagreement; usage below it by more than the tolerance is.
 * Constant usage is also flagged: two or more requests report the same usage while their counted
 * lengths differ by more than the tolerance (a server that answers a fixed usage block).
 * Pure; the cell test puts the result in `evidence.usageDisagrees`.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import { maxOf, minOf } from '../extent.js';

export const USAGE_TOLERANCE_TOKENS = 2;
export const USAGE_TOLERANCE_FRACTION = 0.02;

export interface UsageDisagreement {
  /** requests whose usage disagrees */
  requests: number;
  /** requests that reported a final usage */
  of: number;
  /** the same usage over requests of different counted lengths */
  constant: boolean;
  /** the first disagreeing request */
  example: { usage: number; counted: number };
}

export function usageTolerance(counted: number): number {
  return Math.max(USAGE_TOLERANCE_TOKENS, Math.ceil(counted * USAGE_TOLERANCE_FRACTION));
}

function counted(t: RequestTimeline): number {
  let n = 0;
  for (const k of t.chunkTokens) n += k;
  return n;
}

/** undefined when every reported usage agrees (or none was reported). */
export function usageDisagreement(timelines: readonly RequestTimeline[]): UsageDisagreement | undefined {
  const checked: Array<{ usage: number; counted: number; disagrees: boolean }> = [];
  for (const t of timelines) {
    if (t.end?.kind !== 'done' || t.completionTokens === undefined || t.tokenSource === 'usage') continue;
    const c = counted(t);
    if (c === 0) continue;
    const u = t.completionTokens;
    const tol = usageTolerance(c);
    const disagrees = t.tokenSource === 'chunks' ? u < c - tol : Math.abs(u - c) > tol;
    checked.push({ usage: u, counted: c, disagrees });
  }
  if (checked.length === 0) return undefined;
  let constant = false;
  if (checked.length >= 2 && checked.every((x) => x.usage === checked[0]!.usage)) {
    const lengths = checked.map((x) => x.counted);
    const lo = minOf(lengths);
    const hi = maxOf(lengths);
    constant = hi - lo > usageTolerance(lo);
  }
  const bad = checked.filter((x) => x.disagrees || (constant && x.usage !== x.counted));
  if (bad.length === 0) return undefined;
  const first = bad.find((x) => x.disagrees) ?? bad[0]!;
  return { requests: bad.length, of: checked.length, constant, example: { usage: first.usage, counted: first.counted } };
}
