/** The words of a capacity row (concurrency or open-loop rate): one line per row, and the text of its binding constraint. */
import type { CapacityRow, RateCapacityRow, SloMiss } from '../shapes/result.js';

/** One line: "8K: 47 users (binds: TTFT p90 2,340 ms > 2,000 ms at 48)". */
export function describeCapacity(row: CapacityRow): string {
  const users = (n: number) => `${n} user${n === 1 ? '' : 's'}`;
  if (capacityNotFound(row)) return `${row.contextLabel}: ${CAPACITY_NOT_FOUND}: ${notFoundReason(row, 'concurrency')}`;
  if (row.atLeast) return `${row.contextLabel}: ≥ ${users(row.capacity)} (every column met the SLO; the largest is ${row.capacity})`;
  const binds = row.binding ? ` (binds: ${bindingText(row.binding, row.bindingConcurrency)})` : '';
  const unconfirmed = row.confirmation && !row.confirmation.meets ? `; unconfirmed: the final cell at ${row.confirmation.concurrency} ${confirmationMiss(row.confirmation.binding)}` : '';
  return `${row.contextLabel}: ${users(row.capacity)}${binds}${unconfirmed}`;
}

/**
 * Why the confirming cell did not hold: "missed TTFT p90 2,100 ms > 2,000 ms", or, where it had no
 * figures to judge (Client-limited, not run), "could not be judged (…)" rather than a miss.
 */
function confirmationMiss(miss: SloMiss | undefined): string {
  if (miss === undefined) return 'missed the SLO';
  if (unjudged(miss)) return `could not be judged (${miss.detail})`;
  return `missed ${bindingText(miss)}`;
}

/** What pages write for a capacity that was not found (capacityNotFound); the JSON keeps its 0. */
export const CAPACITY_NOT_FOUND = 'not found';

/**
 * No capacity was found: the search's lowest cell had no figures to judge (Client-limited, not
 * run), so its 0 is no measurement of the server, which may meet the SLO there. A capacity above 0
 * bound by such a cell is still one: every cell below it met the SLO.
 */
export function capacityNotFound(row: { capacity: number; binding?: SloMiss | undefined }): boolean {
  return row.capacity === 0 && unjudged(row.binding);
}

/** "the lowest rate searched could not be judged (8K@2/s is Client-limited: …)" */
export function notFoundReason(row: { binding?: SloMiss | undefined }, axis: 'concurrency' | 'rate'): string {
  return `the lowest ${axis} searched could not be judged (${row.binding?.detail ?? 'no figures'})`;
}

/** A capacity in users as the tables write it: "47", "≥ 64", "not found". */
export function capacityUsersText(row: CapacityRow): string {
  return capacityNotFound(row) ? CAPACITY_NOT_FOUND : `${row.atLeast ? '≥ ' : ''}${row.capacity}`;
}

/** A highest rate at the SLO as the tables write it: "11.2 req/s", "≥ 20 req/s", "not found". */
export function capacityRpsText(row: RateCapacityRow): string {
  return capacityNotFound(row) ? CAPACITY_NOT_FOUND : `${row.atLeast ? '≥ ' : ''}${formatRps(row.capacity)}`;
}

/** A miss that is no judgement: its cell had no figures to judge (Client-limited, not run). A confirming cell's leaves the capacity confirmed neither way; a binding's leaves it unmeasured (capacityNotFound at 0). */
export function unjudged(miss: SloMiss | undefined): miss is SloMiss & { constraint: 'unmeasured' } {
  return miss?.constraint === 'unmeasured';
}

/** "TTFT p90 2,340 ms > 2,000 ms at 48", or "KV capacity: 10 would not fit …". */
export function bindingText(miss: SloMiss, at?: number): string {
  if (miss.constraint === 'kvCapacity') return `KV capacity: ${miss.detail}`;
  return `${miss.detail}${at !== undefined ? ` at ${at}` : ''}`;
}

/** A rate in requests/s to 3 significant digits: "11.2 req/s", "0.5 req/s". */
export function formatRps(x: number): string {
  return `${x === 0 ? 0 : Number(x.toPrecision(3))} req/s`;
}

/**
 * One line of a rate capacity row: "8K: 11.2 req/s (binds: TTFT p90 2,340 ms > 2,000 ms at
 * 12.4 req/s)", with the at-least and unconfirmed forms of describeCapacity.
 */
export function describeRateCapacity(row: RateCapacityRow): string {
  if (capacityNotFound(row)) return `${row.contextLabel}: ${CAPACITY_NOT_FOUND}: ${notFoundReason(row, 'rate')}`;
  if (row.atLeast) return `${row.contextLabel}: ≥ ${formatRps(row.capacity)} (every rate met the SLO; the highest is ${formatRps(row.capacity)})`;
  const binds = row.binding ? ` (binds: ${bindingText(row.binding)}${row.bindingRate !== undefined ? ` at ${formatRps(row.bindingRate)}` : ''})` : '';
  const unconfirmed = row.confirmation && !row.confirmation.meets ? `; unconfirmed: the final cell at ${formatRps(row.confirmation.rate)} ${confirmationMiss(row.confirmation.binding)}` : '';
  return `${row.contextLabel}: ${formatRps(row.capacity)}${binds}${unconfirmed}`;
}
