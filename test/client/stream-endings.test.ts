/**
 * How streams end on the wire (issue 18 item 1), against a raw `net` server on 127.0.0.1 that
 * writes the response bytes itself: an HTTP/1.0 `200 OK` with no Content-Length and no chunked
 * encoding, so the body ends when the server closes (FIN). Also a chunked HTTP/1.1 body, and
 * resets. The decoder is the generic adapter's own (decodeOpenAIChunk), so `"finish_reason":"null"`
 * is read as the adapters read it.
 */
import net from 'node:net';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamRequest, type StreamRequestOptions } from '../../src/client/stream.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { decodeOpenAIChunk } from '../../src/engines/openai.js';
import { sleep } from './helpers.js';

/** what the server writes after reading a request: pieces, each after `gapMs`, then FIN or a reset */
interface Script {
  head: string;
  pieces: string[];
  gapMs?: number;
  close: 'end' | 'reset';
}

let server: net.Server;
let origin = '';
const scripts = new Map<string, Script>();
const sockets = new Set<net.Socket>();

/** reads one whole request (head and Content-Length body: unread bytes at a close would make it a reset), then plays its script */
function serve(socket: net.Socket): void {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
  socket.on('error', () => undefined);
  let buf = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    buf = Buffer.concat([buf, chunk]);
    const headEnd = buf.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const head = buf.subarray(0, headEnd).toString('latin1');
    const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    if (buf.length < headEnd + 4 + length) return;
    socket.off('data', onData);
    const id = /x-request-id:\s*(\S+)/i.exec(head)?.[1] ?? '';
    void play(socket, scripts.get(id.replace(/-\d+$/, '')));
  };
  socket.on('data', onData);
}

async function play(socket: net.Socket, script: Script | undefined): Promise<void> {
  if (!script) {
    socket.end('HTTP/1.0 404 Not Found\r\n\r\n');
    return;
  }
  socket.write(script.head);
  for (const piece of script.pieces) {
    await sleep(script.gapMs ?? 5);
    if (socket.destroyed) return;
    socket.write(piece);
  }
  await sleep(script.gapMs ?? 5);
  if (script.close === 'reset') socket.resetAndDestroy();
  else socket.end();
}

beforeAll(async () => {
  server = net.createServer(serve);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

const HTTP10 = 'HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n';
const HTTP11_CHUNKED = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';
/** one HTTP/1.1 chunk of a chunked body */
const chunked = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;

/** one chat chunk's JSON */
const chunk = (content: string, finish: unknown = null): string =>
  JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: finish }] });
const event = (json: string): string => `data: ${json}\n\n`;

let n = 0;
async function run(name: string, script: Script, extra: Partial<StreamRequestOptions> = {}): Promise<RequestTimeline> {
  scripts.set(name, script);
  // a fresh client per request: an HTTP/1.0 answer leaves no connection to reuse
  const client = new Client(origin);
  try {
    return await streamRequest({
      id: `${name}-${++n}`,
      dispatcher: client,
      origin,
      path: '/v1/chat/completions',
      body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      decode: decodeOpenAIChunk,
      endsWithDone: true,
      timeouts: { headersMs: 5_000, stallMs: 5_000 },
      ...extra,
    });
  } finally {
    await client.destroy();
  }
}

/** three text chunks with `"finish_reason":"null"` strings, as the bare server sends them */
const nullStrings = [event(chunk('He', 'null')), event(chunk('llo', 'null')), event(chunk(' world', 'null'))];

describe('stream endings on a close-delimited HTTP/1.0 body', () => {
  it('(a) an unterminated last `data: [DONE]` then the close: done, ending unterminated-last', async () => {
    const t = await run('a', { head: HTTP10, pieces: [...nullStrings, event(chunk('', 'length')), 'data: [DONE]'], close: 'end' });
    expect(t.end).toMatchObject({ kind: 'done' });
    expect(t.ending).toBe('unterminated-last');
    expect(t.chunkTokens).toEqual([1, 1, 1]);
    expect(t.end!.atMs).toBeGreaterThanOrEqual(t.chunkMs[2]!);
  });

  it('(a) the same, its last bytes one write each, and with CRLF line ends', async () => {
    const last = 'data: [DONE]'.split('');
    const t = await run('a-bytes', { head: HTTP10, pieces: [...nullStrings, event(chunk('', 'stop')), ...last], gapMs: 2, close: 'end' });
    expect(t.end?.kind).toBe('done');
    expect(t.ending).toBe('unterminated-last');
    const crlf = [...nullStrings, event(chunk('', 'stop'))].map((e) => e.replace(/\n/g, '\r\n'));
    const t2 = await run('a-crlf', { head: HTTP10, pieces: [...crlf, 'data: [DONE]\r\n'], close: 'end' });
    expect(t2.end?.kind).toBe('done');
    expect(t2.ending).toBe('unterminated-last');
    expect(t2.chunkTokens).toEqual([1, 1, 1]);
  });

  it('(a) an unterminated `[DONE]` counts even when no finish reason came before it', async () => {
    const t = await run('a-nofinish', { head: HTTP10, pieces: [...nullStrings, 'data: [DONE]'], close: 'end' });
    expect(t.end?.kind).toBe('done');
    expect(t.ending).toBe('unterminated-last');
  });

  it('(b) a finish chunk then the close, no [DONE]: done, ending close-after-finish', async () => {
    let closing = 0;
    const t = await run('b', { head: HTTP10, pieces: [...nullStrings, event(chunk('!', 'length'))], close: 'end' }, { onConnectionClosing: () => closing++ });
    expect(t.end?.kind).toBe('done');
    // the body ended by the server's close: the worker is told its connection carries no other request
    expect(closing).toBe(1);
    expect(t.ending).toBe('close-after-finish');
    expect(t.chunkTokens).toEqual([1, 1, 1, 1]);
    // the request ended when the server closed, after its last chunk
    expect(t.end!.atMs).toBeGreaterThanOrEqual(t.chunkMs[3]!);
  });

  it('(b) the finish chunk itself unterminated at the close is dispatched and ends the request', async () => {
    const t = await run('b-unterminated', { head: HTTP10, pieces: [...nullStrings, `data: ${chunk('!', 'stop')}`], close: 'end' });
    expect(t.end?.kind).toBe('done');
    expect(t.ending).toBe('close-after-finish');
    expect(t.chunkTokens).toEqual([1, 1, 1, 1]);
  });

  it('(c) the close before any finish reason: error no-done', async () => {
    const t = await run('c', { head: HTTP10, pieces: [event(chunk('a')), event(chunk('b'))], close: 'end' });
    expect(t.end).toMatchObject({ kind: 'error', code: 'no-done' });
    expect(t.end?.kind === 'error' && t.end.message).toMatch(/without data: \[DONE\], and no chunk had a finish_reason/);
    expect(t.ending).toBeUndefined();
    expect(t.chunkTokens).toEqual([1, 1]);
  });

  it('(c) a last line cut off at the close (unparseable): error no-done, not a protocol error', async () => {
    const t = await run('c-cut', { head: HTTP10, pieces: [event(chunk('a')), 'data: {"choices":[{"delta":{"cont'], close: 'end' });
    expect(t.end).toMatchObject({ kind: 'error', code: 'no-done' });
    expect(t.end?.kind === 'error' && t.end.message).toMatch(/middle of its last event/);
  });

  it('(d) `"finish_reason":"null"` on every chunk, then the close without [DONE]: error no-done', async () => {
    const t = await run('d', { head: HTTP10, pieces: nullStrings, close: 'end' });
    expect(t.end).toMatchObject({ kind: 'error', code: 'no-done' });
    expect(t.chunkTokens).toEqual([1, 1, 1]);
    // "" is no finish reason either
    const t2 = await run('d-empty', { head: HTTP10, pieces: [event(chunk('a', '')), event(chunk('b', ''))], close: 'end' });
    expect(t2.end).toMatchObject({ kind: 'error', code: 'no-done' });
  });

  it('a reset is a failure whatever came before: after a finish chunk, and after an unterminated `[DONE]`', async () => {
    const t = await run('reset-finish', { head: HTTP10, pieces: [...nullStrings, event(chunk('', 'length'))], close: 'reset' });
    expect(t.end).toMatchObject({ kind: 'error', code: 'socket' });
    expect(t.ending).toBeUndefined();
    const t2 = await run('reset-done', { head: HTTP10, pieces: [...nullStrings, event(chunk('', 'length')), 'data: [DONE]'], close: 'reset' });
    expect(t2.end).toMatchObject({ kind: 'error', code: 'socket' });
    expect(t2.ending).toBeUndefined();
  });
});

describe('stream endings on a chunked HTTP/1.1 body', () => {
  it('(e) a normal chunked stream with a complete `data: [DONE]` event: ending done', async () => {
    const body = [...nullStrings, event(chunk('', 'stop')), 'data: [DONE]\n\n'].map(chunked);
    const t = await run('e', { head: HTTP11_CHUNKED, pieces: [...body, '0\r\n\r\n'], close: 'end' });
    expect(t.end?.kind).toBe('done');
    expect(t.ending).toBe('done');
    expect(t.chunkTokens).toEqual([1, 1, 1]);
  });

  it('a chunked body that ends normally after the finish chunk, without [DONE]: close-after-finish', async () => {
    const body = [...nullStrings, event(chunk('', 'stop'))].map(chunked);
    const t = await run('e-nodone', { head: HTTP11_CHUNKED, pieces: [...body, '0\r\n\r\n'], close: 'end' });
    expect(t.end?.kind).toBe('done');
    expect(t.ending).toBe('close-after-finish');
  });

  it('a chunked body cut short by the close (no last chunk) after the finish chunk is a failure', async () => {
    const body = [...nullStrings, event(chunk('', 'stop')), 'data: [DONE]'].map(chunked);
    const t = await run('e-cut', { head: HTTP11_CHUNKED, pieces: body, close: 'end' });
    expect(t.end).toMatchObject({ kind: 'error', code: 'socket' });
  });
});
