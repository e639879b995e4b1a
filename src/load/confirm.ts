/**
 * Engine detection confirms its choice (issue 18 item 4). A server may answer several APIs (a
 * llama.cpp-derived server that also answers Ollama's `/api/tags`, a gateway that relays its
 * upstream's `owned_by`), so the adapter detection picked is tried with one short streamed request,
 * shaped exactly as the run will shape its requests (the adapter's buildStreamRequest and
 * decodeChunk, our streaming client). When it fails, the generic OpenAI-compatible adapter is
 * tried the same way and used instead, and the detection carries a note saying so.
 *
 * Rules:
 * - Only detected adapters are confirmed: an engine the user set is the user's choice, and a
 *   failure then is the warm-up's to report. The generic adapter, when detection already fell to
 *   it, has nothing to fall back to: the warm-up reports its failure.
 * - One request of `CONFIRM_MAX_TOKENS` tokens per adapter tried, before the warm-up: never inside
 *   a measured cell.
 * - Confirmed: a 2xx event stream with at least one decoded chunk that carries text or a real
 *   finish reason, and no error event. Its end may be `[DONE]` or the close (`no-done`): how a
 *   stream may end is the client's rule (src/client), not this one's.
 * - A failure that is about the request or the stream (HTTP 400/404/405/413/415/422/501, a
 *   malformed stream, no chunk of this API) is the adapter's: the generic adapter is tried. Any
 *   other (5xx, 429, timeouts, resets) may be the server's bad moment: the detected adapter is
 *   tried once more first, so a server that fails some requests is not taken for another API.
 * - When the generic adapter fails too, the detected one is kept (the failure is not the
 *   adapter's) and the note says both failed; the warm-up then stops the run with the server's
 *   own error.
 * - openRun does not confirm the embedded simulator it started itself: its personality is known,
 *   and its fault plan counts every request (faultFreeRequests covers the warm-up).
 */
import { createWorkerDispatchers } from '../client/pool.js';
import { streamRequest } from '../client/stream.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import { getAdapter, type EngineDetection } from '../engines/detect.js';
import { refusesKey } from '../engines/http.js';
import { probeModels } from '../engines/openai.js';
import type { EndpointKind, EngineAdapter, HttpTarget } from '../shapes/engine.js';
import { redactSecrets, redactValues } from '../redact.js';

/** output tokens of a confirmation request: enough for a text chunk and a finish */
export const CONFIRM_MAX_TOKENS = 2;
const CONFIRM_PROMPT = 'Say hello.';

export interface ConfirmOptions {
  /** the configured model; else the first id of `/v1/models` */
  model?: string;
  endpoint: EndpointKind;
  timeouts: { headersMs: number; stallMs: number };
  /** X-Request-Id of the confirmation requests (`-<kind>` is appended) */
  requestId: string;
}

export interface AdapterConfirmation {
  ok: boolean;
  /** the failure is about this adapter's request or the stream's format (not the server's bad moment) */
  shape?: boolean;
  /** why it failed, e.g. "HTTP 400: Unrecognized request argument supplied: ignore_eos" */
  reason?: string;
  timeline?: RequestTimeline;
}

/** HTTP statuses that refuse the request itself (its fields, path or body), not the server's state. */
const SHAPE_STATUSES = new Set([400, 404, 405, 413, 415, 422, 501]);

/** One streamed request through `adapter`; resolves whether it confirms the adapter. Never rejects. */
export async function confirmAdapter(target: HttpTarget, adapter: EngineAdapter, model: string, o: ConfirmOptions): Promise<AdapterConfirmation> {
  const req = adapter.buildStreamRequest({ model, endpoint: o.endpoint, prompt: CONFIRM_PROMPT, maxTokens: CONFIRM_MAX_TOKENS, forceLength: true, requestId: `${o.requestId}-${adapter.kind}` });
  let textOrFinish = 0;
  let errorEvent: string | undefined;
  const pool = createWorkerDispatchers(target.baseUrl, 1, { connectTimeoutMs: o.timeouts.headersMs });
  let t: RequestTimeline;
  try {
    t = await streamRequest({
      id: `${o.requestId}-${adapter.kind}`,
      dispatcher: pool.clients[0]!,
      origin: target.baseUrl,
      path: req.path,
      headers: target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
      body: req.body,
      decode: (p) => {
        const d = adapter.decodeChunk(p);
        // the decoders give no finishReason for null, "null" or "" (engines/openai.ts finishReasonOf)
        if (d.hasText || d.finishReason !== undefined || d.final === true) textOrFinish++;
        if (d.error) errorEvent ??= d.error.message;
        return d;
      },
      endsWithDone: adapter.endsWithDone,
      timeouts: o.timeouts,
    });
  } finally {
    await pool.destroyAll();
  }
  const clean = (s: string): string => redactValues(redactSecrets(s), [target.apiKey]);
  const end = t.end;
  if (errorEvent !== undefined) return { ok: false, shape: false, reason: clean(`error event in the stream: ${errorEvent}`), timeline: t };
  if (end?.kind === 'error' && end.code !== 'no-done') {
    // the client's http-status message already starts with "HTTP <status>"
    const reason = end.code === 'http-status' && /^HTTP \d/.test(end.message) ? end.message : `${end.code === 'http-status' ? `HTTP ${end.httpStatus ?? '?'}` : end.code}: ${end.message}`;
    const shape = end.code === 'protocol' || (end.code === 'http-status' && SHAPE_STATUSES.has(end.httpStatus ?? 0));
    return { ok: false, shape, reason: clean(reason), timeline: t };
  }
  if (textOrFinish === 0) return { ok: false, shape: true, reason: 'the response carried no chunk with text or a finish reason (not an event stream of this API?)', timeline: t };
  return { ok: true, timeline: t };
}

/**
 * Confirm `detection` (detectEngine's answer) with one streamed request; on failure fall back to
 * the generic adapter, confirmed the same way. Returns the detection to use; never rejects for a
 * failed request (only an unreachable server would make `/v1/models` throw, and that is left to
 * the probe that follows, which says how to fix it).
 */
export async function confirmDetection(target: HttpTarget, detection: EngineDetection, o: ConfirmOptions): Promise<EngineDetection> {
  if (detection.kind === 'openai') return detection;
  let model = o.model;
  if (model === undefined || model === '') {
    try {
      model = (await probeModels(target)).model.value;
    } catch {
      return detection; // no model to ask for: the probe reports it
    }
  }
  const detected = getAdapter(detection.kind);
  // a refused key says nothing of the adapter, and is refused again: the warm-up that follows stops on it, with the fix
  const refused = (c: AdapterConfirmation): boolean => c.timeline?.end?.kind === 'error' && refusesKey(c.timeline.end.httpStatus);
  let first = await confirmAdapter(target, detected, model, o);
  if (refused(first)) return detection;
  // a server error may be the server's moment, not the adapter's: once more before looking elsewhere
  if (!first.ok && !first.shape) first = await confirmAdapter(target, detected, model, { ...o, requestId: `${o.requestId}-again` });
  if (first.ok) return detection;
  const generic = await confirmAdapter(target, getAdapter('openai'), model, o);
  const earlier = detection.note ? ` (${detection.note})` : '';
  if (!generic.ok) {
    return {
      ...detection,
      note:
        `detection picked ${detection.kind} (${detection.evidence}), but a streamed request failed through the ${detection.kind} adapter (${first.reason}) ` +
        `and through the generic OpenAI-compatible one (${generic.reason}); keeping ${detection.kind}${earlier}`,
    };
  }
  return {
    kind: 'openai',
    evidence: `${detection.evidence}, not confirmed: a streamed request through the ${detection.kind} adapter failed; the generic adapter's streamed`,
    note:
      `detection picked ${detection.kind} (${detection.evidence}), but a streamed request through the ${detection.kind} adapter failed (${first.reason}); ` +
      `using the generic OpenAI-compatible adapter, whose request streamed (no engine metrics, tokenizer or capacity from ${detection.kind}). ` +
      `Set target.engine or LLM_BENCH_ENGINE to choose${earlier}`,
  };
}
