/**
 * Byte-level Server-Sent Events parser (the `data` field only).
 *
 * Feed it the response body in chunks of any split, down to one byte at a time. It follows the
 * WHATWG event-stream rules where they matter here:
 * - line ends are CR, LF or CRLF; a CR at the end of one chunk followed by an LF at the start of
 *   the next is ONE line end;
 * - lines starting with `:` are comments; fields other than `data` (event, id, retry, unknown)
 *   are ignored;
 * - `data:value` and `data: value` are the same (one leading space is dropped); a line `data`
 *   without a colon is a data line with an empty value;
 * - several data lines of one event are joined with `\n`;
 * - a blank line dispatches the event; an event without data lines dispatches nothing.
 * Departures, on purpose:
 * - trailing whitespace of the event's data is stripped (TRT-LLM writes `data: {...} \n\n`);
 * - `end()` dispatches an event whose data lines were complete but whose blank line never came
 *   (a server closing right after `data: [DONE]\n`); an incomplete last line is discarded.
 * - a leading byte-order mark is not stripped (no LLM server sends one).
 *
 * Allocation: complete lines inside one chunk are decoded straight from the chunk (one string per
 * data line); only a line split across chunks is copied, and it is joined once when it completes.
 * Line ends are found with native `indexOf` whose results are reused, so a batched chunk is scanned
 * once.
 *
 * An event larger than `maxEventBytes` (default 16 MiB) makes `push` throw a ClientError with code
 * `protocol`; the parser then ignores all further input.
 */
import { ClientError } from './errors.js';

export const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const D = 0x64;
const A = 0x61;
const T = 0x74;

export interface SseParserOptions {
  /** bytes one event may hold (its lines, without line ends) before it is a protocol error; default 16 MiB */
  maxEventBytes?: number;
}

export class SseParser {
  private readonly onData: (data: string) => void;
  private readonly maxEventBytes: number;
  /** pieces of a line that is not complete yet (copies) */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** data of the event being built; undefined while it has no data line */
  private data: string | undefined = undefined;
  private dataBytes = 0;
  /** the previous chunk ended with CR: an LF at the start of the next one is part of that line end */
  private skipLf = false;
  private failed = false;

  constructor(onData: (data: string) => void, options: SseParserOptions = {}) {
    const max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (!Number.isInteger(max) || max <= 0) {
      throw new ClientError(
        'invalid-option',
        `SseParser maxEventBytes must be a positive integer (got ${String(max)}); omit it for the 16 MiB default`,
      );
    }
    this.onData = onData;
    this.maxEventBytes = max;
  }

  /** Parse the next bytes of the stream; `onData` is called synchronously for each complete event. */
  push(chunk: Uint8Array): void {
    if (this.failed) return;
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const len = buf.length;
    if (len === 0) return;
    let pos = 0;
    if (this.skipLf) {
      this.skipLf = false;
      if (buf[0] === LF) pos = 1;
    }
    // -2: not searched yet; -1: none left in this chunk
    let nextLf = -2;
    let nextCr = -2;
    while (pos < len) {
      if (nextLf !== -1 && nextLf < pos) nextLf = buf.indexOf(LF, pos);
      if (nextCr !== -1 && nextCr < pos) nextCr = buf.indexOf(CR, pos);
      let eol: number;
      if (nextLf === -1) {
        if (nextCr === -1) break;
        eol = nextCr;
      } else {
        eol = nextCr === -1 || nextLf < nextCr ? nextLf : nextCr;
      }
      if (this.pendingBytes > 0) {
        this.appendPending(buf, pos, eol);
        const line = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
        this.pending = [];
        this.pendingBytes = 0;
        this.line(line, 0, line.length);
      } else {
        this.line(buf, pos, eol);
      }
      if (buf[eol] === CR) {
        if (eol + 1 < len) {
          pos = buf[eol + 1] === LF ? eol + 2 : eol + 1;
        } else {
          this.skipLf = true;
          pos = len;
        }
      } else {
        pos = eol + 1;
      }
    }
    if (pos < len) this.appendPending(buf, pos, len);
  }

  /**
   * The stream ended. An event whose data lines were complete is dispatched even without its
   * blank line; an incomplete last line is discarded. The parser can be reused afterwards.
   */
  end(): void {
    if (this.failed) return;
    this.pending = [];
    this.pendingBytes = 0;
    this.skipLf = false;
    this.dispatch();
  }

  private appendPending(buf: Buffer, start: number, end: number): void {
    if (end <= start) return;
    this.pendingBytes += end - start;
    this.checkSize(); // throws when over the limit
    // copy: the caller may reuse its buffer
    this.pending.push(Buffer.from(buf.subarray(start, end)));
  }

  private checkSize(): void {
    if (this.pendingBytes + this.dataBytes > this.maxEventBytes) {
      this.failed = true;
      this.pending = [];
      this.pendingBytes = 0;
      this.data = undefined;
      this.dataBytes = 0;
      throw new ClientError(
        'protocol',
        `SSE event exceeds ${this.maxEventBytes} bytes without a blank line; the stream is malformed or not SSE`,
      );
    }
  }

  /** One complete line, bytes [start, end) of buf, without its line end. */
  private line(buf: Buffer, start: number, end: number): void {
    const n = end - start;
    if (n === 0) {
      this.dispatch();
      return;
    }
    if (buf[start] === COLON) return; // comment
    if (n < 4 || buf[start] !== D || buf[start + 1] !== A || buf[start + 2] !== T || buf[start + 3] !== A) return;
    let value: string;
    if (n === 4) {
      value = '';
    } else {
      if (buf[start + 4] !== COLON) return; // a field like "database:" is not data
      let vs = start + 5;
      if (vs < end && buf[vs] === SPACE) vs++;
      value = vs < end ? buf.toString('utf8', vs, end) : '';
    }
    this.dataBytes += n;
    this.checkSize();
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
  }

  private dispatch(): void {
    const data = this.data;
    if (data === undefined) return;
    this.data = undefined;
    this.dataBytes = 0;
    this.onData(stripTrailingWhitespace(data));
  }
}

function stripTrailingWhitespace(s: string): string {
  const last = s.charCodeAt(s.length - 1);
  // fast path: most payloads end with '}' or ']'
  if (last === 0x7d || last === 0x5d || s.length === 0) return s;
  return s.trimEnd();
}
