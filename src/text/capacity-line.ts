/** The words of a capacity row (concurrency or open-loop rate): one line per row, and the text of its binding constraint. */
import type { CapacityRow, RateCapacityRow, SloMiss } from '../shapes/result.js';

/** One line: "8K: 47 users (binds: TTFT p90 2,340 ms > 2,000 ms at 48)". */
export function describeCapacity(row: CapacityRow): string {
  const users = (n: number) => `${n} user${n === 1 ? '' : 's'}`;
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
  if (miss.constraint === 'unmeasured') return `could not be judged (${miss.detail})`;
  return `missed ${bindingText(miss)}`;
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
  if (row.atLeast) return `${row.contextLabel}: ≥ ${formatRps(row.capacity)} (every rate met the SLO; the highest is ${formatRps(row.capacity)})`;
  const binds = row.binding ? ` (binds: ${bindingText(row.binding)}${row.bindingRate !== undefined ? ` at ${formatRps(row.bindingRate)}` : ''})` : '';
  const unconfirmed = row.confirmation && !row.confirmation.meets ? `; unconfirmed: the final cell at ${formatRps(row.confirmation.rate)} ${confirmationMiss(row.confirmation.binding)}` : '';
  return `${row.contextLabel}: ${formatRps(row.capacity)}${binds}${unconfirmed}`;
}
