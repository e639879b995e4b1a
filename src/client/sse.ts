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
 * - at a clean end of the body (`end()`, or `end('clean')`: the response ended normally, e.g. a
 *   close-delimited HTTP/1.0 body whose server closed the connection), the last event is
 *   dispatched even though its blank line never came, and so is its last line when that line has
 *   no line end either: a server that ends with `data: [DONE]` and closes (curl and most Python
 *   clients read that stream as complete). The spec tells browsers to drop both. `onData` is then
 *   told so (its second argument), and `end()` returns what it did (SseEndReport);
 * - at an error end (`end('error')`: the transport failed) nothing pending is dispatched: the
 *   incomplete line and the event without its blank line are discarded, as the spec says;
 * - a leading byte-order mark is not stripped (no LLM server sends one).
 *
 * Allocation: complete lines inside one chunk are decoded straight from the chunk (one string per
 * data line); only a line split across chunks is copied, and it is joined once when it completes.
 * With `onDataBytes`, an event of one data line that ends with `}` or `]` and whose blank line is in
 * the same push is first offered as bytes, with no string at all (issue 24: the client's scan
 * of a token chunk); where that returns false, the event's text goes to `onData` as before.
 * Line ends are found with native `indexOf` whose results are reused, so a batched chunk is scanned
 * once.
 *
 * An event larger than `maxEventBytes` (default 16 MiB) makes `push` throw a ClientError with code
 * `protocol`; the parser then ignores all further input.
 *
 * Hand-written, measured against eventsource-parser 3.1.1 (docs/libraries.md, perf/libraries.ts;
 * its 4.x needs Node 22.12): it follows the browser's rules where this parser departs on purpose
 * (it drops the last event of a clean end and keeps trailing whitespace: 8 of the 17 byte cases of
 * test/client/sse.test.ts differ), holds a CR that ends a socket read until the next one (a later
 * arrival time), cannot report how the stream ended (`unterminatedLine`), and costs 2.2–2.6× the
 * CPU per event on one core (404 vs 153–182 ns), +12–25 % per event with JSON.parse at 1,024 streams.
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

/** How an event dispatched by `end()` ended; passed to `onData` as its second argument. */
export interface SseEndDispatch {
  /** its last data line had no line end (the body stopped right after its bytes) */
  unterminatedLine: boolean;
}

/** What `end()` did. */
export interface SseEndReport {
  /** an event without its blank line was dispatched (clean end only) */
  dispatched: boolean;
  /** …and its last data line had no line end either */
  unterminatedLine: boolean;
  /** bytes of an incomplete last line and of an undispatched event's data lines that were dropped */
  discardedBytes: number;
}

export interface SseParserOptions {
  /** bytes one event may hold (its lines, without line ends) before it is a protocol error; default 16 MiB */
  maxEventBytes?: number;
  /**
   * offered an event's data as bytes [start, end) of `bytes` (valid during the call only) before its
   * text is made; true: taken, `onData` is not called for it. Only for an event of one data line
   * ending in `}` or `]` (no trailing whitespace to strip) dispatched by its blank line in one push.
   */
  onDataBytes?: (bytes: Buffer, start: number, end: number) => boolean;
}

export class SseParser {
  private readonly onData: (data: string, atEnd?: SseEndDispatch) => void;
  private readonly maxEventBytes: number;
  private readonly onDataBytes: ((bytes: Buffer, start: number, end: number) => boolean) | undefined;
  /** the event's one data line, not decoded yet: bytes [lazyStart, lazyEnd) of lazyBuf (this push's chunk, or a joined copy) */
  private lazyBuf: Buffer | undefined = undefined;
  private lazyStart = 0;
  private lazyEnd = 0;
  /** pieces of a line that is not complete yet (copies) */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** data of the event being built; undefined while it has no data line */
  private data: string | undefined = undefined;
  private dataBytes = 0;
  /** the previous chunk ended with CR: an LF at the start of the next one is part of that line end */
  private skipLf = false;
  private failed = false;

  /**
   * `onData(data, atEnd)`: `atEnd` is undefined for an event ended by its blank line, and set for
   * the one a clean `end()` dispatches.
   */
  constructor(onData: (data: string, atEnd?: SseEndDispatch) => void, options: SseParserOptions = {}) {
    const max = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    if (!Number.isInteger(max) || max <= 0) {
      throw new ClientError(
        'invalid-option',
        `SseParser maxEventBytes must be a positive integer (got ${String(max)}); omit it for the 16 MiB default`,
      );
    }
    this.onData = onData;
    this.maxEventBytes = max;
    this.onDataBytes = options.onDataBytes;
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
    // the caller may reuse its buffer: an event still open keeps its text, not a view
    if (this.lazyBuf !== undefined) this.decodeLazy();
  }

  /**
   * The stream ended; the parser can be reused afterwards.
   * - `'clean'` (default): the body ended normally. An incomplete last line is taken as complete
   *   (a `data:` line joins the event; a comment or other field is ignored), and an event with data
   *   lines is dispatched without its blank line, `onData` getting `atEnd`.
   * - `'error'`: the transport failed. Nothing pending is dispatched.
   * (The size cap was checked as the bytes came: `push` has thrown for an event over it.)
   */
  end(how: 'clean' | 'error' = 'clean'): SseEndReport {
    const report: SseEndReport = { dispatched: false, unterminatedLine: false, discardedBytes: 0 };
    if (this.failed) return report;
    if (this.lazyBuf !== undefined) this.decodeLazy();
    const pending = this.pendingBytes > 0 ? (this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes)) : undefined;
    this.pending = [];
    this.pendingBytes = 0;
    this.skipLf = false;
    if (how === 'error') {
      report.discardedBytes = (pending?.length ?? 0) + this.dataBytes;
      this.data = undefined;
      this.dataBytes = 0;
      return report;
    }
    let unterminated = false;
    if (pending !== undefined) {
      const before = this.dataBytes;
      this.line(pending, 0, pending.length); // within the cap: push counted these bytes already
      if (this.lazyBuf !== undefined) this.decodeLazy();
      unterminated = this.dataBytes > before;
      if (!unterminated) report.discardedBytes = pending.length;
    }
    if (this.data === undefined) return report;
    report.dispatched = true;
    report.unterminatedLine = unterminated;
    this.dispatch({ unterminatedLine: unterminated });
    return report;
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
      this.lazyBuf = undefined;
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
    let vs = start + 4;
    if (n > 4) {
      if (buf[start + 4] !== COLON) return; // a field like "database:" is not data
      vs = start + 5;
      if (vs < end && buf[vs] === SPACE) vs++;
    }
    this.dataBytes += n;
    this.checkSize();
    if (this.onDataBytes !== undefined && this.data === undefined && this.lazyBuf === undefined) {
      // the event's first data line: kept as bytes until the event is dispatched or the push ends
      this.lazyBuf = buf;
      this.lazyStart = vs;
      this.lazyEnd = end;
      return;
    }
    if (this.lazyBuf !== undefined) this.decodeLazy();
    const value = vs < end ? utf8(buf, vs, end) : '';
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
  }

  /** the event's data line kept as bytes becomes its text */
  private decodeLazy(): void {
    const buf = this.lazyBuf!;
    this.lazyBuf = undefined;
    this.data = this.lazyStart < this.lazyEnd ? utf8(buf, this.lazyStart, this.lazyEnd) : '';
  }

  private dispatch(atEnd?: SseEndDispatch): void {
    const lazy = this.lazyBuf;
    if (lazy !== undefined) {
      const last = this.lazyEnd > this.lazyStart ? lazy[this.lazyEnd - 1] : undefined;
      if (atEnd === undefined && (last === 0x7d || last === 0x5d)) {
        this.lazyBuf = undefined;
        this.dataBytes = 0;
        if (this.onDataBytes!(lazy, this.lazyStart, this.lazyEnd)) return;
        this.onData(utf8(lazy, this.lazyStart, this.lazyEnd));
        return;
      }
      this.decodeLazy();
    }
    const data = this.data;
    if (data === undefined) return;
    this.data = undefined;
    this.dataBytes = 0;
    if (atEnd === undefined) this.onData(stripTrailingWhitespace(data));
    else this.onData(stripTrailingWhitespace(data), atEnd);
  }
}

/**
 * The UTF-8 text of bytes [start, end) of buf: Buffer's own utf8Slice, which toString('utf8', …)
 * calls after normalising its arguments (half the cost of a short line); invalid bytes become
 * U+FFFD either way.
 */
function utf8(buf: Buffer, start: number, end: number): string {
  return (buf as Buffer & { utf8Slice(start: number, end: number): string }).utf8Slice(start, end);
}

function stripTrailingWhitespace(s: string): string {
  const last = s.charCodeAt(s.length - 1);
  // fast path: most payloads end with '}' or ']'
  if (last === 0x7d || last === 0x5d || s.length === 0) return s;
  return s.trimEnd();
}
