/**
 * Extremes and appends whose cost does not depend on a call's argument count.
 *
 * `Math.max(...values)`, `Math.min(...values)` and `out.push(...items)` pass one call argument per
 * element, and V8 throws `RangeError: Maximum call stack size exceeded` somewhere past 100,000 of
 * them: a 30 s cell of a GPU server holds millions of token events. These loop instead, and the
 * house check (scripts/house/sizes.ts, rule `spread-argument`) refuses a spread call argument in
 * src/ and reporters/.
 */

/** The largest value, `-Infinity` when there is none and `NaN` when one is `NaN` (as `Math.max`). */
export function maxOf(values: Iterable<number>): number {
  let top = -Infinity;
  for (const v of values) {
    if (Number.isNaN(v)) return NaN;
    // +0 above -0, as Math.max has it
    if (v > top || (v === 0 && top === 0 && Object.is(top, -0))) top = v;
  }
  return top;
}

/** The smallest value, `Infinity` when there is none and `NaN` when one is `NaN` (as `Math.min`). */
export function minOf(values: Iterable<number>): number {
  let bottom = Infinity;
  for (const v of values) {
    if (Number.isNaN(v)) return NaN;
    // -0 below +0, as Math.min has it
    if (v < bottom || (v === 0 && bottom === 0 && Object.is(v, -0))) bottom = v;
  }
  return bottom;
}

/** Appends every item to `out`, in order, and returns `out`. */
export function appendAll<T>(out: T[], items: Iterable<T>): T[] {
  for (const item of items) out.push(item);
  return out;
}
