/**
 * Drain barrier (METHOD.md 5.1): before a cell, wait until the server is idle (running = waiting = 0
 * where metrics exist). Without metrics (the server answered no scrape when the run opened), the
 * previous cell having awaited all of its requests is the barrier. Bounded by a timeout that marks
 * the cell.
 */
import { monoMs } from '../clock.js';
import { scrapeMetrics, sleep, type LoadSession } from './session.js';

export interface DrainOutcome {
  timedOut: boolean;
  waitedMs: number;
  /** false when the server has no metrics to check */
  checked: boolean;
  last?: { running?: number; waiting?: number };
}

export async function waitForIdle(session: LoadSession, timeoutMs: number, signal?: AbortSignal): Promise<DrainOutcome> {
  const start = monoMs();
  let checked = false;
  let last: DrainOutcome['last'];
  while (!signal?.aborted) {
    const s = await scrapeMetrics(session);
    if (s !== undefined && (s.running !== undefined || s.waiting !== undefined)) {
      checked = true;
      last = { running: s.running, waiting: s.waiting };
      if ((s.running ?? 0) === 0 && (s.waiting ?? 0) === 0) return { timedOut: false, waitedMs: monoMs() - start, checked, last };
    } else if (!session.hasMetrics) {
      // a server without metrics: the previous cell having awaited all its requests is the barrier
      return { timedOut: false, waitedMs: monoMs() - start, checked, last };
    }
    // busy, or a failed scrape of a server that has metrics (not proof of idle): keep waiting; a
    // barrier whose scrapes all fail times out and marks the cell
    if (monoMs() - start >= timeoutMs) return { timedOut: true, waitedMs: monoMs() - start, checked, last };
    await sleep(100, signal);
  }
  return { timedOut: false, waitedMs: monoMs() - start, checked, last };
}
