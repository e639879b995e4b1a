/** How a cell's completed streams ended (a complete `data: [DONE]`, or otherwise). Pure. */
import type { RequestTimeline } from '../shapes/timeline.js';

/** Completed requests of a cell by how their streams ended (StreamEnding). */
export interface StreamEndings {
  /** ended by `data: [DONE]` as a complete event, or by the engine's final chunk */
  done: number;
  /** no [DONE]: the body ended cleanly after a chunk with a real finish reason */
  closeAfterFinish: number;
  /** `data: [DONE]` without its blank line, dispatched when the body ended */
  unterminatedLast: number;
}

/**
 * Completed requests (end kind 'done', ended inside the window, as completedRequests counts them)
 * by ending: 'done' and 'final-chunk' (and a timeline without an ending) count as done.
 */
export function streamEndings(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number): StreamEndings {
  const out: StreamEndings = { done: 0, closeAfterFinish: 0, unterminatedLast: 0 };
  for (const t of timelines) {
    if (t.end?.kind !== 'done' || t.end.atMs < windowStartMs || t.end.atMs > windowEndMs) continue;
    if (t.ending === 'close-after-finish') out.closeAfterFinish++;
    else if (t.ending === 'unterminated-last') out.unterminatedLast++;
    else out.done++;
  }
  return out;
}
