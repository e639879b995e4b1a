/**
 * The one clock of the project: milliseconds from the system-wide monotonic clock
 * (CLOCK_MONOTONIC through process.hrtime). The same value in every thread and every process on
 * one machine, so the embedded simulator's ground truth (in a worker thread or another process)
 * and the client's timestamps can be compared directly.
 */
export function monoMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
