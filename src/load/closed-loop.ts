/**
 * One closed-loop worker of a sustained-decode cell (METHOD.md run sequence 5): it sends its next
 * request the moment the previous one ends, backing off after a failure. The same loop runs on
 * the cell's own thread (cell.ts) and in a client thread (stream-thread-main.ts); what the gate and
 * the window read of it goes through the hooks.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import type { WorkloadRequest } from '../shapes/workload.js';
import { sleep } from './session.js';
import type { CellSend } from './worker-state.js';

export interface WorkerLoop {
  cellTag: string;
  send: CellSend;
  /** the cell's abort: every request and backoff sleep listens on it */
  signal: AbortSignal;
  /** no new requests (the window has closed) */
  stopping(): boolean;
  /** worker w's next request; undefined: the worker stops */
  next(w: number): WorkloadRequest | undefined | Promise<WorkloadRequest | undefined>;
  /** request `id` of worker w is about to be sent */
  onSent(w: number, id: string): void;
  /** worker w's request has its first token (a worker that streams again is not failing) */
  onFirstToken(w: number): void;
  /** worker w's request ended; `failingInARow` is its count of failures in a row after it */
  onEnded(w: number, timeline: RequestTimeline, failingInARow: number): void;
}

/** Backoff after a failed request, so a server answering 500 at once is not hammered. */
export function backoffMs(consecutiveFailures: number): number {
  return Math.min(1000, 50 * 2 ** Math.min(consecutiveFailures - 1, 5));
}

/** The longest Retry-After a worker waits out; the window's close ends any wait sooner (the cell's abort). */
export const RATE_LIMIT_MAX_WAIT_MS = 60_000;

/**
 * How long a worker waits before its next request after request `t` failed (the n-th in a row): a
 * rate-limited one (429) its Retry-After, never less than the backoff (a `Retry-After: 0` or a date
 * already past must not make a hot loop), at most RATE_LIMIT_MAX_WAIT_MS; any other failure the backoff.
 */
export function waitAfterFailureMs(t: RequestTimeline, consecutiveFailures: number): number {
  const backoff = backoffMs(consecutiveFailures);
  if (t.end?.kind !== 'error' || t.end.code !== 'rate-limited') return backoff;
  return Math.min(RATE_LIMIT_MAX_WAIT_MS, Math.max(backoff, t.end.retryAfterMs ?? 0));
}

/** Worker w: sends its next request the moment the previous one ends, backing off after a failure. */
export async function runClosedLoopWorker(w: number, loop: WorkerLoop): Promise<void> {
  let seq = 0;
  let failures = 0;
  const onFirstToken = (): void => loop.onFirstToken(w);
  while (!loop.stopping() && !loop.signal.aborted) {
    const request = await loop.next(w);
    if (request === undefined || loop.stopping() || loop.signal.aborted) break;
    const id = `${loop.cellTag}-w${w}-r${seq}`;
    loop.onSent(w, id);
    const t = await loop.send(id, request, w, loop.signal, onFirstToken);
    seq++;
    // back off after a failure, and after a "successful" answer with no tokens, so a server
    // that answers at once cannot turn a worker into a hot loop
    const failed = t.end?.kind === 'error' || t.chunkMs.length === 0;
    failures = failed ? failures + 1 : 0;
    loop.onEnded(w, t, failures);
    if (failed && !loop.stopping()) await sleep(waitAfterFailureMs(t, failures), loop.signal);
  }
}
