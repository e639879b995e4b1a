/**
 * Prefill row (METHOD.md run sequence 4): one streamed request with max_tokens = 1 and a prompt
 * whose prefix is unique to this run and context, so the prefill is cold. When the same context is
 * also a decode row, this request warms that row's prompt cache.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import { createWorkerDispatchers } from '../client/pool.js';
import { sendRequest, sleep, type LoadSession } from './session.js';

/**
 * Waiting this long after the warm-up for the server to close its connection lets the run learn
 * that the server closes after every streamed response (client/connections.ts) before any cell.
 */
export const WARMUP_CLOSE_WATCH_MS = 100;

export interface SingleRequestOptions {
  signal?: AbortSignal;
  /** keep the connection up to this long after a done stream, until the run knows whether the server closes it */
  watchCloseMs?: number;
  /** fail the request as `stall` when no chunk comes for this long after its first token */
  stallAfterFirstTokenMs?: number;
}

export async function runSingleRequest(
  session: LoadSession,
  id: string,
  prompt: string,
  maxTokens: number,
  options: SingleRequestOptions = {},
): Promise<RequestTimeline> {
  const pool = createWorkerDispatchers(session.target.baseUrl, 1, { connectTimeoutMs: session.timeouts.headersMs });
  const stall = options.stallAfterFirstTokenMs;
  const watchdog = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, watchdog.signal]) : watchdog.signal;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    if (stall === undefined) return;
    clearTimeout(timer);
    timer = setTimeout(() => watchdog.abort(), stall);
  };
  try {
    const t = await sendRequest(session, {
      id,
      prompt,
      maxTokens,
      dispatcher: pool.clients[0]!,
      signal,
      onFirstToken: arm,
      onChunk: () => {
        if (timer !== undefined) arm();
      },
    });
    if (watchdog.signal.aborted && t.end?.kind === 'aborted') {
      t.end = { kind: 'error', atMs: t.end.atMs, code: 'stall', message: `no token for ${((stall ?? 0) / 1000).toFixed(0)} s after the first: the server accepted the request, then stopped streaming` };
    }
    const policy = session.connections;
    for (let waited = 0; waited < (options.watchCloseMs ?? 0) && t.end?.kind === 'done' && !policy.closesAfterResponse; waited += 10) {
      await sleep(10, options.signal);
    }
    return t;
  } finally {
    clearTimeout(timer);
    await pool.destroyAll();
  }
}

/** `repeat` n ≥ 2 (LLM_BENCH_REPEAT) only changes the request id: `<run>-prefill-<context>-<n>`. */
export function runPrefillRequest(session: LoadSession, context: number, prompt: string, signal?: AbortSignal, repeat = 1) {
  return runSingleRequest(session, `${session.runId}-prefill-${context}${repeat > 1 ? `-${repeat}` : ''}`, prompt, 1, signal ? { signal } : {});
}
