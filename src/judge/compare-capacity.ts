/**
 * Capacity at the SLO, baseline against new, per context row (pure). Used by the in-run gate
 * (LLM_BENCH_BASELINE, in each row's capacity test) and by `llm-speed-matrix compare`.
 *
 * The rule (b = baseline capacity, x = new capacity, in users):
 *   allowed   = max(tolerance.absolute, tolerance.relative × b, the baseline search's resolution)
 *   regressed when b − x > allowed; improved when x − b > allowed; else within noise.
 * The resolution term: the search stops once passing and failing concurrencies are that close,
 * so two runs of one server may answer up to a resolution apart.
 * A row whose every column met the SLO has only a lower bound ("≥ 64"): a new capacity below
 * that bound by more than allowed is a regression; a new lower bound is only reported, since the
 * new matrix's largest column (not the server) set it. Capacities measured at different SLOs
 * are not compared.
 *
 * The highest open-loop rate at the SLO (compareRateCapacityRow) follows the same rule in
 * requests/s: allowed = max(tolerance.relative × b, the baseline search's resolution);
 * the capacity tolerance's absolute floor is in users and does not apply to a rate.
 */
import type { CapacityRow, RateCapacityRow, SpeedMatrixResult } from '../shapes/result.js';
import { bindingText, CAPACITY_NOT_FOUND, capacityNotFound, capacityRpsText, capacityUsersText, formatRps, notFoundReason } from '../text/capacity-line.js';
import { wholeOrTenths } from '../text/format.js';
import type { FigureTolerance } from '../thresholds/tolerances.js';

export type CapacityVerdict = 'improved' | 'regressed' | 'within-noise' | 'not-comparable';

export interface CapacityDelta {
  contextLabel: string;
  context: number;
  base?: CapacityRow;
  next?: CapacityRow;
  /** users the capacity may drop before it is a regression */
  allowed?: number;
  verdict: CapacityVerdict;
  fails: boolean;
  /** why it fails, or why it is not comparable */
  message?: string;
}

const users = capacityUsersText;

/** One row's capacity, baseline against new. */
export function compareCapacityRow(base: CapacityRow | undefined, next: CapacityRow | undefined, tolerance: FigureTolerance): CapacityDelta {
  const some = (next ?? base)!;
  const out: CapacityDelta = { contextLabel: some.contextLabel, context: some.context, verdict: 'not-comparable', fails: false };
  if (base) out.base = base;
  if (next) out.next = next;
  if (!base || !next) {
    out.message = base ? 'not searched in the new run' : 'not in the baseline';
    return out;
  }
  if (notFoundEither(out, base, next, users, 'concurrency')) return out;
  const allowed = Math.max(tolerance.absolute, tolerance.relative * base.capacity, base.resolution);
  out.allowed = allowed;
  const drop = base.capacity - next.capacity;
  if (next.atLeast && drop > 0) {
    // the new matrix stops below the old capacity: the server was not pushed that far
    out.message = `the new matrix's largest column (${next.capacity}) is below the baseline's capacity ${users(base)}; add a larger column to compare`;
    return out;
  }
  if (drop > allowed) {
    out.verdict = 'regressed';
    out.fails = true;
    const binds = next.binding ? `; binds: ${bindingText(next.binding, next.bindingConcurrency)}` : '';
    out.message = `capacity ${next.contextLabel}: ${next.capacity} users vs baseline ${users(base)} (−${drop}, allowed −${wholeOrTenths(allowed)})${binds}`;
  } else if (-drop > allowed && !base.atLeast) {
    out.verdict = 'improved';
  } else {
    out.verdict = 'within-noise';
  }
  return out;
}

/**
 * A capacity not found (capacityNotFound) on either side is not compared: its 0 is no measurement
 * of the server. Where the new run's is not found and the baseline had one, the gate still fails,
 * saying why; a baseline's not found fails nothing. True when it decided `out`.
 */
function notFoundEither<R extends CapacityRow | RateCapacityRow>(
  out: { verdict: CapacityVerdict; fails: boolean; message?: string },
  base: R,
  next: R,
  shown: (row: R) => string,
  axis: 'concurrency' | 'rate',
): boolean {
  const what = axis === 'rate' ? 'rate capacity' : 'capacity';
  if (capacityNotFound(next)) {
    out.fails = base.capacity > 0;
    out.message = `${what} ${next.contextLabel}: ${CAPACITY_NOT_FOUND} vs baseline ${shown(base)}: ${notFoundReason(next, axis)}`;
    return true;
  }
  if (capacityNotFound(base)) {
    out.message = `${what} ${base.contextLabel}: ${CAPACITY_NOT_FOUND} in the baseline: ${notFoundReason(base, axis)}`;
    return true;
  }
  return false;
}

/** Every row of both results (their union), or a reason when the two were judged against different SLOs. */
export function compareCapacity(
  base: SpeedMatrixResult,
  next: SpeedMatrixResult,
  tolerance: FigureTolerance,
): { rows: CapacityDelta[]; note?: string } {
  const baseRows = base.capacity?.rows ?? [];
  const nextRows = next.capacity?.rows ?? [];
  if (baseRows.length === 0 && nextRows.length === 0) return { rows: [] };
  const a = base.info.run.slo?.text;
  const b = next.info.run.slo?.text;
  if (a !== b) {
    return { rows: [], note: `capacity not compared: the baseline's SLO is ${a ?? 'none'}, the new run's ${b ?? 'none'}` };
  }
  const byContext = (rows: readonly CapacityRow[]) => new Map(rows.map((r) => [r.context, r]));
  const baseMap = byContext(baseRows);
  const nextMap = byContext(nextRows);
  const contexts = [...new Set([...baseMap.keys(), ...nextMap.keys()])].sort((x, y) => x - y);
  return { rows: contexts.map((c) => compareCapacityRow(baseMap.get(c), nextMap.get(c), tolerance)) };
}

export interface RateCapacityDelta {
  contextLabel: string;
  context: number;
  base?: RateCapacityRow;
  next?: RateCapacityRow;
  /** requests/s the rate capacity may drop before it is a regression */
  allowed?: number;
  verdict: CapacityVerdict;
  fails: boolean;
  message?: string;
}

const rps = capacityRpsText;

/** One context's highest rate at the SLO, baseline against new (the rule in this file's header). */
export function compareRateCapacityRow(base: RateCapacityRow | undefined, next: RateCapacityRow | undefined, tolerance: FigureTolerance): RateCapacityDelta {
  const some = (next ?? base)!;
  const out: RateCapacityDelta = { contextLabel: some.contextLabel, context: some.context, verdict: 'not-comparable', fails: false };
  if (base) out.base = base;
  if (next) out.next = next;
  if (!base || !next) {
    out.message = base ? 'not searched in the new run' : 'not in the baseline';
    return out;
  }
  if (notFoundEither(out, base, next, rps, 'rate')) return out;
  const allowed = Math.max(tolerance.relative * base.capacity, base.resolution);
  out.allowed = allowed;
  const drop = base.capacity - next.capacity;
  if (next.atLeast && drop > 0) {
    out.message = `the new run's highest rate (${formatRps(next.capacity)}) is below the baseline's rate capacity ${rps(base)}; add a higher rate to compare`;
    return out;
  }
  if (drop > allowed) {
    out.verdict = 'regressed';
    out.fails = true;
    const binds = next.binding ? `; binds: ${bindingText(next.binding)}${next.bindingRate !== undefined ? ` at ${formatRps(next.bindingRate)}` : ''}` : '';
    out.message = `rate capacity ${next.contextLabel}: the highest rate at the SLO is ${formatRps(next.capacity)} vs baseline ${rps(base)} (−${formatRps(drop)}, allowed −${formatRps(allowed)})${binds}`;
  } else if (-drop > allowed && !base.atLeast) {
    out.verdict = 'improved';
  } else {
    out.verdict = 'within-noise';
  }
  return out;
}

/** Every context of both results (their union), or a reason when they were judged at different SLOs. */
export function compareRateCapacity(base: SpeedMatrixResult, next: SpeedMatrixResult, tolerance: FigureTolerance): { rows: RateCapacityDelta[]; note?: string } {
  const baseRows = base.rateCapacity?.rows ?? [];
  const nextRows = next.rateCapacity?.rows ?? [];
  if (baseRows.length === 0 && nextRows.length === 0) return { rows: [] };
  const a = base.info.run.slo?.text;
  const b = next.info.run.slo?.text;
  if (a !== b) return { rows: [], note: `rate capacity not compared: the baseline's SLO is ${a ?? 'none'}, the new run's ${b ?? 'none'}` };
  const baseMap = new Map(baseRows.map((r) => [r.context, r]));
  const nextMap = new Map(nextRows.map((r) => [r.context, r]));
  const contexts = [...new Set([...baseMap.keys(), ...nextMap.keys()])].sort((x, y) => x - y);
  return { rows: contexts.map((c) => compareRateCapacityRow(baseMap.get(c), nextMap.get(c), tolerance)) };
}
