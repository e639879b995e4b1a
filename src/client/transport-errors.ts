/**
 * What a transport failure of a streamed request was (classifyTransportError → ClientErrorCode),
 * and the few errors the stream tells apart: a reset that undici reports as a complete body, an
 * error of the client's own making, and the client's own abort of a request it has ended.
 */
import type { ClientErrorCode } from '../shapes/timeline.js';
import { ClientError } from './errors.js';

/**
 * The error a socket was destroyed with, when the response "ended" because the connection was
 * reset (undici then ends a close-delimited body as if it were complete). Known only where the
 * send was recorded (recordSentHeaders); without it a reset there reads as a clean close.
 */
export function resetError(socket: { errored?: Error | null } | undefined): Error | undefined {
  const err = socket?.errored;
  return err !== null && err !== undefined ? err : undefined;
}

/** undici errors of our own making (a destroyed or closed dispatcher, an abort): never resent */
export function clientCaused(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_DESTROYED' || code === 'UND_ERR_CLOSED' || code === 'UND_ERR_ABORTED';
}

/** the reason the client aborts a request it has already ended; never reported */
export class RequestDone extends Error {
  constructor() {
    super('request ended by the client');
    this.name = 'RequestDone';
  }
}

const CONNECT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/** Map an undici / system error to a ClientErrorCode and a message. */
export function classifyTransportError(err: unknown): { code: ClientErrorCode; message: string } {
  const code = (err as { code?: unknown } | null)?.code;
  const message = errorText(err);
  if (err instanceof ClientError && err.code !== 'invalid-option') return { code: err.code, message };
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return { code: 'headers-timeout', message };
  if (code === 'UND_ERR_BODY_TIMEOUT') return { code: 'stall', message };
  if (typeof code === 'string' && CONNECT_CODES.has(code)) return { code: 'connect', message };
  if (code === 'UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE' || code === 'HPE_INVALID_CONSTANT' || code === 'UND_ERR_INFO') {
    return { code: 'protocol', message };
  }
  return { code: 'socket', message };
}

export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}
