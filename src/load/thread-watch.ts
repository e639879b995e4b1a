/**
 * Tells a stuck client thread (issue 24): each thread says 'alive' every THREAD_ALIVE_EVERY_MS
 * (thread-messages.ts) from its clock check to its end, and one the cell's thread has heard
 * nothing from for `limitMs` has its event loop blocked (a loop that never yields, a deadlock).
 * A tick that comes late by half the limit or more is the cell's own thread stalled (a paused VM,
 * a long collection): the threads' messages are then still queued behind it, so that tick blames
 * no thread.
 */
import { monoMs } from '../clock.js';
import { THREAD_ALIVE_EVERY_MS } from './thread-messages.js';

/** what the watch reads of each thread */
export interface Heard {
  /** when its last message came (monoMs) */
  heardMs: number;
  /** it has ended or said it is done: nothing more is owed */
  quiet: boolean;
}

/** Checks `threads()` until the returned stop is called; `onSilent(k)` for the first thread silent over `limitMs`. */
export function watchForSilence(threads: () => readonly Heard[], limitMs: number, onSilent: (k: number) => void): () => void {
  const everyMs = Math.min(THREAD_ALIVE_EVERY_MS, limitMs / 2);
  let lastTick = monoMs();
  const timer = setInterval(() => {
    const now = monoMs();
    const late = now - lastTick - everyMs;
    lastTick = now;
    if (late >= limitMs / 2) return;
    const silent = threads().findIndex((t) => !t.quiet && now - t.heardMs > limitMs);
    if (silent >= 0) onSilent(silent);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
