/**
 * Prefill row (METHOD.md run sequence 4): one streamed request with max_tokens = 1 and a prompt
 * whose prefix is unique to this run and context, so the prefill is cold. When the same context is
 * also a decode row, this request warms that row's prompt cache.
 */
import type { RequestTimeline } from '../client/types.js';
import { streamRequest } from '../client/stream.js';
import { createWorkerDispatchers } from '../client/pool.js';
import { requestHeaders, type LoadSession } from './session.js';

export async function runSingleRequest(
  session: LoadSession,
  id: string,
  prompt: string,
  maxTokens: number,
  signal?: AbortSignal,
): Promise<RequestTimeline> {
  const pool = createWorkerDispatchers(session.target.baseUrl, 1, { connectTimeoutMs: session.timeouts.headersMs });
  try {
    const req = session.adapter.buildStreamRequest({
      model: session.model,
      endpoint: session.endpoint,
      prompt,
      maxTokens,
      forceLength: true,
    });
    return await streamRequest({
      id,
      dispatcher: pool.clients[0]!,
      origin: session.target.baseUrl,
      path: req.path,
      headers: requestHeaders(session),
      body: req.body,
      decode: (p) => session.adapter.decodeChunk(p),
      endsWithDone: session.adapter.endsWithDone,
      signal,
      timeouts: session.timeouts,
    });
  } finally {
    await pool.destroyAll();
  }
}

export function runPrefillRequest(session: LoadSession, context: number, prompt: string, signal?: AbortSignal) {
  return runSingleRequest(session, `${session.runId}-prefill-${context}`, prompt, 1, signal);
}
