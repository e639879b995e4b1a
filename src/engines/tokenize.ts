/** Shared pieces of the engines' tokenize calls. */
import { parseErrorBody } from './errors.js';
import { redactKey, type HttpResult } from './http.js';
import type { HttpTarget } from './types.js';

/** The setup error for a tokenize call that gave no count. */
export function tokenizeError(target: HttpTarget, path: string, res: HttpResult): Error {
  const detail = res.status >= 200 && res.status < 300 ? 'answered without a numeric `count`' : `answered HTTP ${res.status}: ${parseErrorBody(res.status, res.text).message}`;
  return new Error(
    redactKey(
      `tokenize: POST ${target.baseUrl}${path} ${detail}. Prompt calibration needs the server's tokenizer; ` +
        'check the server is healthy, or calibrate without it (estimated mode).',
      target.apiKey,
    ),
  );
}
