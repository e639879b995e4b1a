/** Shared pieces of the engines' tokenize calls. */
import { parseErrorBody } from './errors.js';
import { asNumber, asRecord, isOk, postJson, redactTarget, type HttpResult } from './http.js';
import type { HttpTarget } from '../shapes/engine.js';

/** The setup error for a tokenize call that gave no count. */
export function tokenizeError(target: HttpTarget, path: string, res: HttpResult): Error {
  const detail = res.status >= 200 && res.status < 300 ? 'answered without a numeric `count`' : `answered HTTP ${res.status}: ${parseErrorBody(res.status, res.text).message}`;
  return new Error(
    redactTarget(
      `tokenize: POST ${target.baseUrl}${path} ${detail}. Prompt calibration needs the server's tokenizer; ` +
        'check the server is healthy, or calibrate without it (estimated mode).',
      target,
    ),
  );
}

/** The `count` of a tokenize answer (`{count, …}`, vLLM/SGLang/TRT-LLM style); undefined when there is none. */
export function tokenizeCount(res: HttpResult | undefined): number | undefined {
  return isOk(res) ? asNumber(asRecord(res.json)?.count) : undefined;
}

/** POST a tokenize request and return its `count`; a missing count is a setup error (tokenizeError). */
export async function postForTokenCount(target: HttpTarget, path: string, body: unknown): Promise<number> {
  const res = await postJson(target, path, body, { timeoutMs: 60_000 });
  const count = tokenizeCount(res);
  if (count === undefined) throw tokenizeError(target, path, res);
  return count;
}
