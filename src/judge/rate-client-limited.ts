/**
 * Why a rate cell is Client-limited, as causes: the evidence's own list, or, for a cell judged
 * before the evidence named them, read from its figures (the dispatch delay over its bound,
 * requests the in-flight ceiling held back). Shared by the failure line (judge-rate.ts) and the
 * baseline comparison (compare-rate.ts). Pure.
 */
import type { RateCellEvidence } from '../shapes/result.js';

export type RateClientLimitedCause = NonNullable<NonNullable<RateCellEvidence['clientLimited']>['causes']>[number];

export function rateClientLimitedCauses(c: NonNullable<RateCellEvidence['clientLimited']>): readonly RateClientLimitedCause[] {
  return (
    c.causes ?? [
      ...(c.dispatchDelayP99Ms > c.boundMs ? ['dispatch-delay' as const] : []),
      ...(c.ceilingWaited > 0 || c.unsent > 0 ? ['in-flight-ceiling' as const] : []),
    ]
  );
}
