/**
 * Wire transcripts of a real server (test/fixtures/llamacpp-b4748/, recorded by
 * scripts/real-llamacpp/record-transcripts.ts): the exact request bytes written on one raw TCP
 * connection and every socket event that came back, each with its offset from the moment the first
 * request was written. This module holds the format and a small, independent reading of it (HTTP/1.1
 * response framing, chunked decoding, SSE events with the arrival offset of the read that completed
 * each one), so tests can compare the streaming client with what the wire said.
 */
import { readFileSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';

export const TRANSCRIPT_FORMAT = 'llm-speed-matrix/wire-transcript@1';

/** One request written on the connection. */
export interface TranscriptRequest {
  /** offset of the write from the first request's write (0 for the first) */
  writtenAtMs: number;
  method: string;
  path: string;
  /** the request head exactly as written (request line and headers, CRLFs included) */
  head: string;
  /** headers as written, in order (no secrets were sent) */
  headers: Array<[string, string]>;
  /** the body exactly as written, unless it was elided (see bodyElided) */
  body?: string;
  /** a long prompt is not stored: the body with the prompt replaced by `<prompt>`, and how to rebuild it */
  bodyElided?: { template: string; prompt: { unit: string; repeat: number; chars: number } };
  /** byte length and sha256 (hex) of the body as written */
  bodyBytes: number;
  bodySha256: string;
}

/** One socket event on the recorder's connection, at `atMs` from the first request's write. */
export type WireEvent =
  | { atMs: number; kind: 'data'; base64: string }
  /** the server's FIN: it will write no more */
  | { atMs: number; kind: 'end' }
  /** a socket error (ECONNRESET = the server reset the connection) */
  | { atMs: number; kind: 'error'; code: string; message: string }
  /** the recorder closed its side itself (the server had not closed it after waitForCloseMs) */
  | { atMs: number; kind: 'client-close'; reason: string }
  /** the socket is fully closed */
  | { atMs: number; kind: 'close'; hadError: boolean };

export interface Transcript {
  format: typeof TRANSCRIPT_FORMAT;
  name: string;
  description: string;
  recordedAt: string;
  recordedWith: string;
  server: {
    url: string;
    /** GET /props build_info, as the server reports it */
    buildInfo: string | undefined;
    /** the build it was said to be (the binary's own build_info may not know it) */
    build: string;
    totalSlots: number | undefined;
    nCtxPerSlot: number | undefined;
    model: string | undefined;
    flags: string;
  };
  requests: TranscriptRequest[];
  events: WireEvent[];
  /** what the recorder saw, for people (the tests derive everything from `events` themselves) */
  summary: Record<string, unknown>;
}

export const FIXTURE_DIR = fileURLToPath(new URL('../fixtures/llamacpp-b4748/', import.meta.url));

export function loadTranscript(name: string): Transcript {
  const t = JSON.parse(readFileSync(`${FIXTURE_DIR}${name}.json`, 'utf8')) as Transcript;
  if (t.format !== TRANSCRIPT_FORMAT) throw new Error(`${name}: not a wire transcript (format ${String(t.format)})`);
  return t;
}

/** The data events' bytes, with their offsets. */
export function dataEvents(events: readonly WireEvent[]): Array<{ atMs: number; bytes: Buffer }> {
  const out: Array<{ atMs: number; bytes: Buffer }> = [];
  for (const e of events) if (e.kind === 'data') out.push({ atMs: e.atMs, bytes: Buffer.from(e.base64, 'base64') });
  return out;
}

/** A body byte range with the offset of the read it arrived in. */
export interface BodyPiece {
  atMs: number;
  bytes: Buffer;
}

export interface ParsedResponse {
  statusLine: string;
  status: number;
  /** header names lower-cased, in order */
  headers: Array<[string, string]>;
  /** offset of the read that completed the head */
  headAtMs: number;
  /** the (de-chunked) body, by arrival */
  body: BodyPiece[];
  /** the body's end was seen (terminating chunk, or content-length reached) */
  complete: boolean;
  /** offset of the read that completed it */
  completeAtMs?: number;
  chunked: boolean;
  /** bytes of the wire after this response (another response, or nothing) */
  rest: Buffer;
}

export function header(res: Pick<ParsedResponse, 'headers'>, name: string): string | undefined {
  const n = name.toLowerCase();
  return res.headers.find(([k]) => k === n)?.[1];
}

/**
 * Read the first HTTP/1.1 response off a sequence of socket reads. Returns undefined until its head
 * is complete. Handles `Transfer-Encoding: chunked` (extensions and trailers ignored) and
 * `Content-Length`; a body with neither runs to the end of the wire (`complete` false).
 */
export function parseHttpResponse(reads: ReadonlyArray<{ atMs: number; bytes: Buffer }>): ParsedResponse | undefined {
  // one buffer, and the offset of the read each byte came in
  const all = Buffer.concat(reads.map((r) => r.bytes));
  const ends: number[] = [];
  let acc = 0;
  for (const r of reads) {
    acc += r.bytes.length;
    ends.push(acc);
  }
  const atOf = (byteIndex: number): number => {
    for (let i = 0; i < ends.length; i++) if (byteIndex < ends[i]!) return reads[i]!.atMs;
    return reads[reads.length - 1]?.atMs ?? 0;
  };
  /** body bytes [from, to) split at read boundaries */
  const pieces = (from: number, to: number, into: BodyPiece[]): void => {
    let start = from;
    for (let i = 0; i < ends.length && start < to; i++) {
      if (ends[i]! <= start) continue;
      const stop = Math.min(ends[i]!, to);
      into.push({ atMs: reads[i]!.atMs, bytes: all.subarray(start, stop) });
      start = stop;
    }
  };

  const headEnd = all.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const lines = all.subarray(0, headEnd).toString('latin1').split('\r\n');
  const statusLine = lines[0] ?? '';
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!m) throw new Error(`not an HTTP/1.x status line: ${JSON.stringify(statusLine)}`);
  const headers: Array<[string, string]> = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  const res: ParsedResponse = {
    statusLine,
    status: Number(m[1]),
    headers,
    headAtMs: atOf(headEnd + 3),
    body: [],
    complete: false,
    chunked: /\bchunked\b/i.test(header({ headers }, 'transfer-encoding') ?? ''),
    rest: Buffer.alloc(0),
  };
  let pos = headEnd + 4;
  if (res.chunked) {
    for (;;) {
      const lineEnd = all.indexOf('\r\n', pos);
      if (lineEnd < 0) break;
      const size = Number.parseInt(all.subarray(pos, lineEnd).toString('latin1').split(';')[0]!.trim(), 16);
      if (!Number.isFinite(size)) throw new Error(`bad chunk size line at byte ${pos}`);
      if (size === 0) {
        // trailers, then an empty line
        const trailerEnd = all.indexOf('\r\n', lineEnd + 2) === lineEnd + 2 ? lineEnd + 4 : all.indexOf('\r\n\r\n', lineEnd + 2) + 4;
        if (trailerEnd < 4 || trailerEnd > all.length) break;
        res.complete = true;
        res.completeAtMs = atOf(trailerEnd - 1);
        res.rest = all.subarray(trailerEnd);
        break;
      }
      const dataStart = lineEnd + 2;
      const dataEnd = dataStart + size;
      pieces(dataStart, Math.min(dataEnd, all.length), res.body);
      if (dataEnd + 2 > all.length) break;
      pos = dataEnd + 2;
    }
  } else {
    const len = header(res, 'content-length');
    const n = len !== undefined ? Number(len) : undefined;
    const stop = n !== undefined ? Math.min(pos + n, all.length) : all.length;
    pieces(pos, stop, res.body);
    if (n !== undefined && pos + n <= all.length) {
      res.complete = true;
      res.completeAtMs = n > 0 ? atOf(pos + n - 1) : res.headAtMs;
      res.rest = all.subarray(pos + n);
    }
  }
  return res;
}

/** One SSE event's data, with the offset of the read that completed it. */
export interface SseAt {
  atMs: number;
  data: string;
}

/** SSE events (data lines joined by \n) of a body, each at the offset of the read holding its blank line. */
export function sseEvents(body: readonly BodyPiece[]): SseAt[] {
  const out: SseAt[] = [];
  const decoder = new StringDecoder('utf8');
  let buf = '';
  let data: string[] = [];
  for (const p of body) {
    buf += decoder.write(p.bytes);
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line === '') {
        if (data.length > 0) out.push({ atMs: p.atMs, data: data.join('\n') });
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  }
  return out;
}
