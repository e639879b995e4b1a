/**
 * Drain barrier (METHOD.md 5.1): before a cell, wait until the server is idle (running = waiting = 0
 * where metrics exist). Without metrics (the server answered no scrape when the run opened), the
 * previous cell having awaited all of its requests is the barrier. Bounded by a timeout that marks
 * the cell.
 *
 * A server that is gone is not "busy": when scrapes fail, the barrier asks the server once a second
 * whether it answers at all (`GET /v1/models`). No answer (refused, reset, timed out) or 5xx (a
 * gateway's 502 for a dead upstream) for DEFAULTS.serverDownGiveUpMs (15 s) ends the wait: the
 * cell cannot start (an unreachable HttpCallError, which the cell test stores as Not run), and the
 * session remembers it, so every later cell checks once and stops at once while the server stays
 * down. A progress line every 5 s says what the barrier waits for.
 */
import { monoMs } from '../clock.js';
import { DEFAULTS } from '../config/defaults.js';
import { parseErrorBody } from '../engines/errors.js';
import { HttpCallError, isUnreachable, tryCall } from '../engines/http.js';
import { scrapeMetrics, sleep, type LoadSession } from './session.js';

export interface DrainOutcome {
  timedOut: boolean;
  waitedMs: number;
  /** false when the server has no metrics to check */
  checked: boolean;
  last?: { running?: number; waiting?: number };
}

/** Whether the server answers at all: undefined when it does, else why not (no answer, or 5xx). */
export async function serverDownReason(session: LoadSession): Promise<string | undefined> {
  const res = await tryCall(session.target, 'GET', '/v1/models', undefined, { timeoutMs: 3_000, closeConnection: true });
  if (res === undefined) return 'no answer: connection refused, reset or timed out';
  if (res.status >= 500) return parseErrorBody(res.status, res.text).message;
  return undefined;
}

const DOWN_FIX = 'Check the server (and the gateway in front of it); LLM_BENCH_RESUME=<the speed-matrix.json> measures the cells left once it is back';

function downError(reason: string, forMs: number, since: string): HttpCallError {
  return new HttpCallError(
    `the server has not answered for ${(forMs / 1000).toFixed(0)} s (${reason}; down since ${since}): the cell cannot start. ${DOWN_FIX}`,
    'transport',
  );
}

/**
 * A server found down before this cell (session.serverDown): one check, and the cell cannot start
 * (the down error) while it stays down; forgotten once it answers. Called first by every step of a
 * cell that would otherwise wait for the server (prompt sizing, the pool's connections, the drain
 * barrier), so a run whose server died ends each later cell at once, not after each step's wait.
 */
export async function failIfStillDown(session: LoadSession): Promise<void> {
  if (session.serverDown === undefined) return;
  const reason = await serverDownReason(session);
  if (reason !== undefined) throw downError(reason, Date.now() - session.serverDown.sinceEpochMs, new Date(session.serverDown.sinceEpochMs).toISOString());
  delete session.serverDown;
}

/**
 * After a step gave up waiting for a server that did not answer (an unreachable error at the end of
 * its retry budget, `waitedMs` long): remember the server as down, so later cells stop at once.
 */
export function noteServerDown(session: LoadSession, error: unknown, waitedMs: number): void {
  if (session.serverDown !== undefined || !isUnreachable(error)) return;
  session.serverDown = { sinceEpochMs: Date.now() - waitedMs, reason: (error as Error).message };
}

/**
 * A step of a cell that waits for the server (prompt sizing, the pool's connections): it does not
 * start while a server found down stays down (failIfStillDown), and a step that gives up on a
 * server that did not answer marks it down for the cells after it (noteServerDown).
 */
export async function unlessServerDown<T>(session: LoadSession, step: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  await failIfStillDown(session);
  const started = monoMs();
  try {
    return await step();
  } catch (error) {
    noteServerDown(session, error, monoMs() - started);
    // the first step to give up on the server says what the later cells' down error says: the fix
    // (not a step stopped by the run: its last try's error is not the server's fault)
    if (isUnreachable(error) && signal?.aborted !== true) {
      throw new HttpCallError(`${(error as Error).message}; the server stopped answering, through every retry. ${DOWN_FIX}`, 'transport');
    }
    throw error;
  }
}

export async function waitForIdle(session: LoadSession, timeoutMs: number, signal?: AbortSignal, onProgress?: (line: string) => void): Promise<DrainOutcome> {
  const start = monoMs();
  let checked = false;
  let last: DrainOutcome['last'];
  const giveUpMs = DEFAULTS.serverDownGiveUpMs;
  await failIfStillDown(session);
  let downSinceMs: number | undefined;
  let downSinceEpoch = 0;
  let lastLivenessMs = -Infinity;
  let lastProgressMs = start;
  let downReason = '';
  while (!signal?.aborted) {
    const s = await scrapeMetrics(session);
    if (s !== undefined && (s.running !== undefined || s.waiting !== undefined)) {
      checked = true;
      downSinceMs = undefined;
      last = { running: s.running, waiting: s.waiting };
      if ((s.running ?? 0) === 0 && (s.waiting ?? 0) === 0) return { timedOut: false, waitedMs: monoMs() - start, checked, last };
    } else if (!session.hasMetrics) {
      // a server without metrics: the previous cell having awaited all its requests is the barrier
      return { timedOut: false, waitedMs: monoMs() - start, checked, last };
    } else if (monoMs() - lastLivenessMs >= 1_000) {
      // a failed scrape: is the server there at all?
      lastLivenessMs = monoMs();
      const reason = await serverDownReason(session);
      if (reason === undefined) {
        downSinceMs = undefined;
      } else {
        downReason = reason;
        if (downSinceMs === undefined) {
          downSinceMs = lastLivenessMs;
          downSinceEpoch = Date.now();
        }
        const downFor = monoMs() - downSinceMs;
        if (downFor >= giveUpMs) {
          session.serverDown = { sinceEpochMs: downSinceEpoch, reason };
          throw downError(reason, downFor, new Date(downSinceEpoch).toISOString());
        }
      }
    }
    const now = monoMs();
    if (now - start >= timeoutMs) return { timedOut: true, waitedMs: now - start, checked, last };
    if (onProgress && now - lastProgressMs >= DEFAULTS.drainProgressMs) {
      lastProgressMs = now;
      const waited = `${((now - start) / 1000).toFixed(0)} s`;
      if (downSinceMs !== undefined) {
        onProgress(`drain barrier: the server does not answer (${downReason}) for ${((now - downSinceMs) / 1000).toFixed(0)} s; giving up at ${(giveUpMs / 1000).toFixed(0)} s`);
      } else if (last !== undefined) {
        onProgress(`drain barrier: waiting ${waited} for the server to be idle (running ${last.running ?? '?'}, waiting ${last.waiting ?? '?'}; times out at ${(timeoutMs / 1000).toFixed(0)} s)`);
      } else {
        onProgress(`drain barrier: waiting ${waited}; the server's metrics scrapes fail (times out at ${(timeoutMs / 1000).toFixed(0)} s)`);
      }
    }
    await sleep(100, signal);
  }
  return { timedOut: false, waitedMs: monoMs() - start, checked, last };
}
