/**
 * Error bodies of the engines, normalised (ENGINES.md §7.2):
 * - nested OpenAI `{error:{message,type,param,code}}` (vLLM, newer SGLang, Ollama with code:null)
 * - flat `{object:'error',message,type,param,code}` (older vLLM/SGLang, TRT-LLM)
 * - llama.cpp `{error:{code,message,type}}` (same reader as nested)
 * - TGI `{error:'…',error_type:'…'}`, and TGI mid-stream `{error:{message,http_status_code}}`
 * - an HTML page (a proxy's 502): its title, not the page;
 * - anything else: the text itself (trimmed, shortened).
 */
import { summarizeHtml } from '../client/error-body.js';
import { asRecord, asString } from './http.js';

export interface ParsedErrorBody {
  message: string;
  type?: string;
  code?: string | number;
  param?: string;
}

/** Longest message kept from a non-JSON body. */
export const MAX_ERROR_TEXT_CHARS = 500;

function codeOf(value: unknown): string | number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  return asString(value);
}

function fromObject(obj: Record<string, unknown>): ParsedErrorBody | undefined {
  const message = asString(obj.message) ?? asString(obj.detail) ?? asString(obj.msg);
  if (message === undefined) return undefined;
  const out: ParsedErrorBody = { message };
  const type = asString(obj.type) ?? asString(obj.error_type);
  if (type !== undefined) out.type = type;
  const code = codeOf(obj.code) ?? codeOf(obj.http_status_code);
  if (code !== undefined) out.code = code;
  const param = asString(obj.param);
  if (param !== undefined) out.param = param;
  return out;
}

/** Interpret an already-parsed JSON error value; undefined when it has no recognisable message. */
export function parseErrorJson(json: unknown): ParsedErrorBody | undefined {
  const root = asRecord(json);
  if (!root) return undefined;
  const nested = asRecord(root.error);
  if (nested) return fromObject(nested);
  if (typeof root.error === 'string' && root.error !== '') {
    // TGI: {error, error_type}
    const out: ParsedErrorBody = { message: root.error };
    const type = asString(root.error_type) ?? asString(root.type);
    if (type !== undefined) out.type = type;
    const code = codeOf(root.code);
    if (code !== undefined) out.code = code;
    return out;
  }
  // flat {object:'error', message, …} or FastAPI {detail:'…'}
  return fromObject(root);
}

/** Normalise an HTTP error body of any engine; never throws. */
export function parseErrorBody(status: number, bodyText: string): ParsedErrorBody {
  const text = bodyText.trim();
  if (text.startsWith('{')) {
    try {
      const parsed = parseErrorJson(JSON.parse(text));
      if (parsed) return parsed;
    } catch {
      // fall through to text
    }
  }
  if (text === '') return { message: `HTTP ${status} with an empty body` };
  const html = summarizeHtml(text);
  if (html !== undefined) return { message: `HTTP ${status}: ${html}` };
  const short = text.length > MAX_ERROR_TEXT_CHARS ? `${text.slice(0, MAX_ERROR_TEXT_CHARS)}…` : text;
  return { message: short };
}
