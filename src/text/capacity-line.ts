/** The words of a capacity row: one line per row, and the text of its binding constraint. */
import type { CapacityRow, SloMiss } from '../shapes/result.js';

/** One line: "8K: 47 users (binds: TTFT p90 2,340 ms > 2,000 ms at 48)". */
export function describeCapacity(row: CapacityRow): string {
  const users = (n: number) => `${n} user${n === 1 ? '' : 's'}`;
  if (row.atLeast) return `${row.contextLabel}: ≥ ${users(row.capacity)} (every column met the SLO; the largest is ${row.capacity})`;
  const binds = row.binding ? ` (binds: ${bindingText(row.binding, row.bindingConcurrency)})` : '';
  const unconfirmed = row.confirmation && !row.confirmation.meets ? `; unconfirmed: the final cell at ${row.confirmation.concurrency} missed ${row.confirmation.binding?.detail ?? 'the SLO'}` : '';
  return `${row.contextLabel}: ${users(row.capacity)}${binds}${unconfirmed}`;
}

/** "TTFT p90 2,340 ms > 2,000 ms at 48", or "KV capacity: 10 would not fit …". */
export function bindingText(miss: SloMiss, at?: number): string {
  if (miss.constraint === 'kvCapacity') return `KV capacity: ${miss.detail}`;
  return `${miss.detail}${at !== undefined ? ` at ${at}` : ''}`;
}
