/**
 * How the sim's handlers read a request body and answer: JSON, text, an empty 200, or an error in
 * the personality's shape (personality.ts). Every route handler (routes-*.ts) answers through these.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderChat, type ChatMessage } from './chat-template.js';
import { RAW_RESPONSES } from './completion.js';
import { errorBody, errorStatus } from './personality.js';
import type { SimPersonality } from './profiles.js';
import { RequestError } from './request-body.js';
import type { TokenVocab } from './tokenizer.js';

const MAX_BODY_BYTES = 64 * 1024 * 1024;

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}

/** 200 with a text body; the default content type is Prometheus' text format */
export function sendText(res: ServerResponse, text: string, contentType = 'text/plain; version=0.0.4; charset=utf-8'): void {
  res.writeHead(200, { 'content-type': contentType });
  res.end(text);
}

/** 200 with no body */
export function sendEmpty(res: ServerResponse): void {
  res.writeHead(200);
  res.end();
}

/**
 * An error in the personality's shape and status (TGI: 400 → 422). A response already under way
 * can only end: a raw HTTP/1.0 stream closes its socket, a started one ends as it is.
 */
export function sendError(
  personality: SimPersonality,
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  param: string | null = null,
  details: Record<string, unknown> = {},
): void {
  if (RAW_RESPONSES.has(res)) {
    // an HTTP/1.0 stream already began on the socket: all that is left is the close
    res.socket?.destroySoon();
    return;
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  const shown = errorStatus(personality, status);
  res.writeHead(shown, { 'content-type': 'application/json' });
  res.end(errorBody(personality, shown, message, type, param, details));
}

/** The request body as a JSON object ({} when empty); over 64 MiB is 413, anything but an object is 400. */
export function readBody(personality: SimPersonality, req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size > MAX_BODY_BYTES) reject(new RequestError(413, `request body over ${MAX_BODY_BYTES} bytes`));
      else parts.push(b);
    });
    req.on('end', () => {
      if (size === 0) return resolve({});
      let v: unknown;
      try {
        v = JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
      } catch (e) {
        // llama.cpp (nlohmann::json) answers 500 server_error with the parser's message
        if (personality === 'llamacpp') return reject(new RequestError(500, `[json.exception.parse_error.101] parse error: ${(e as Error).message}`));
        return reject(new RequestError(400, 'request body must be a JSON object'));
      }
      if (!v || typeof v !== 'object' || Array.isArray(v)) return reject(new RequestError(400, 'request body must be a JSON object'));
      resolve(v as Record<string, unknown>);
    });
    req.on('error', reject);
  });
}

/** The tokens of a vLLM / SGLang tokenize body: `messages` rendered by the chat template, or `prompt`. */
export function tokenizeBody(vocab: TokenVocab, body: Record<string, unknown>): { ids: number[]; pieces: string[] } {
  if (Array.isArray(body.messages)) {
    return vocab.tokenize(renderChat(body.messages as ChatMessage[], body.add_generation_prompt !== false));
  }
  if (typeof body.prompt === 'string') return vocab.tokenize(body.prompt);
  throw new RequestError(400, 'tokenize needs "prompt" (string) or "messages" (array)', 'prompt');
}

/** Detokenize bodies carry `tokens`, an array of ids. */
export function detokenizeIds(body: Record<string, unknown>): number[] {
  if (!Array.isArray(body.tokens)) throw new RequestError(400, 'detokenize needs "tokens" (array of ids)', 'tokens');
  return body.tokens as number[];
}
