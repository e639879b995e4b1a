/**
 * Prefill row (METHOD.md run sequence 4): one streamed request with max_tokens = 1 and a prompt
 * whose prefix is unique to this run and context, so the prefill is cold. When the same context is
 * also a decode row, this request warms that row's prompt cache.
 */
import type { RequestTimeline } from '../client/types.js';
import { createWorkerDispatchers } from '../client/pool.js';
import { sendRequest, type LoadSession } from './session.js';

export async function runSingleRequest(
  session: LoadSession,
  id: string,
  prompt: string,
  maxTokens: number,
  signal?: AbortSignal,
): Promise<RequestTimeline> {
  const pool = createWorkerDispatchers(session.target.baseUrl, 1, { connectTimeoutMs: session.timeouts.headersMs });
  try {
    return await sendRequest(session, { id, prompt, maxTokens, dispatcher: pool.clients[0]!, ...(signal ? { signal } : {}) });
  } finally {
    await pool.destroyAll();
  }
}

/** `repeat` n ≥ 2 (LLM_BENCH_REPEAT) only changes the request id: `<run>-prefill-<context>-<n>`. */
export function runPrefillRequest(session: LoadSession, context: number, prompt: string, signal?: AbortSignal, repeat = 1) {
  return runSingleRequest(session, `${session.runId}-prefill-${context}${repeat > 1 ? `-${repeat}` : ''}`, prompt, 1, signal);
}
