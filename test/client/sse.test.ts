import { describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/errors.js';
import { SseParser } from '../../src/client/sse.js';

function parseIn(pieces: Uint8Array[], options?: { maxEventBytes?: number }): string[] {
  const out: string[] = [];
  const p = new SseParser((d) => out.push(d), options);
  for (const piece of pieces) p.push(piece);
  p.end();
  return out;
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

function whole(s: string): Uint8Array[] {
  return [enc(s)];
}
function bytewise(s: string): Uint8Array[] {
  const b = enc(s);
  const out: Uint8Array[] = [];
  for (let i = 0; i < b.length; i++) out.push(b.subarray(i, i + 1));
  return out;
}
/** deterministic pseudo-random splits (LCG) */
function randomSplits(s: string, seed: number): Uint8Array[] {
  const b = enc(s);
  const out: Uint8Array[] = [];
  let x = seed >>> 0;
  let i = 0;
  while (i < b.length) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const n = 1 + (x % 7);
    out.push(b.subarray(i, Math.min(b.length, i + n)));
    i += n;
  }
  return out;
}

/** every split strategy must give the same events */
function expectEvents(stream: string, expected: string[]): void {
  expect(parseIn(whole(stream))).toEqual(expected);
  expect(parseIn(bytewise(stream))).toEqual(expected);
  for (let seed = 1; seed <= 40; seed++) expect(parseIn(randomSplits(stream, seed))).toEqual(expected);
}

describe('SseParser', () => {
  it('parses LF-separated events', () => {
    expectEvents('data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n', ['{"a":1}', '{"a":2}', '[DONE]']);
  });

  it('handles CRLF, CR and mixed line ends', () => {
    expectEvents('data: one\r\n\r\ndata: two\r\rdata: three\n\r\ndata: four\r\n\n', ['one', 'two', 'three', 'four']);
  });

  it('treats a CR at the end of one chunk and an LF at the start of the next as one line end', () => {
    const out: string[] = [];
    const p = new SseParser((d) => out.push(d));
    p.push(enc('data: x\r'));
    p.push(enc('\ndata: y\r'));
    p.push(enc('\n\r'));
    // the lone CR is a blank line already: the event is dispatched at once
    expect(out).toEqual(['x\ny']);
    p.push(enc('\n')); // the LF completing that CRLF is no second blank line
    expect(out).toEqual(['x\ny']);
    p.push(enc('data: z\r'));
    p.push(enc('\r'));
    expect(out).toEqual(['x\ny', 'z']);
  });

  it('an empty chunk between a CR and its LF keeps them one line end', () => {
    const out: string[] = [];
    const p = new SseParser((d) => out.push(d));
    p.push(enc('data: a\r'));
    p.push(new Uint8Array(0));
    p.push(enc('\ndata: b\n\n'));
    // had the LF been a second line end, it would be a blank line dispatching 'a' alone
    expect(out).toEqual(['a\nb']);
  });

  it('ignores comments and fields other than data', () => {
    expectEvents(': keep-alive\n\nevent: message\nid: 7\nretry: 100\ndata: payload\nfoo: bar\ndatabase: no\n\n: ping\n\n', ['payload']);
  });

  it('joins multi-line data with \\n', () => {
    expectEvents('data: line1\ndata: line2\ndata:line3\n\n', ['line1\nline2\nline3']);
  });

  it('accepts data with and without the space, drops only one space', () => {
    expectEvents('data:{"x":1}\n\ndata:  two spaces\n\ndata\n\n', ['{"x":1}', ' two spaces', '']);
  });

  it('strips trailing whitespace of the data (TRT-LLM style)', () => {
    expectEvents('data: {"a":1} \n\ndata: [DONE] \t\n\n', ['{"a":1}', '[DONE]']);
  });

  it('decodes multi-byte UTF-8 split across chunks', () => {
    expectEvents('data: {"t":"héllo 世界 🎉"}\n\n', ['{"t":"héllo 世界 🎉"}']);
  });

  it('dispatches nothing for an event without data lines', () => {
    expectEvents('event: x\n\n\n\n: c\n\n', []);
  });

  it('at end(), dispatches complete data lines without their blank line and drops a partial line', () => {
    expect(parseIn(whole('data: [DONE]\n'))).toEqual(['[DONE]']);
    expect(parseIn(whole('data: a\n\ndata: {"trunc'))).toEqual(['a']);
  });

  it('accepts Uint8Array views with an offset', () => {
    const big = enc('xxxxdata: view\n\nyyyy');
    expect(parseIn([big.subarray(4, big.length - 4)])).toEqual(['view']);
  });

  it('throws a protocol ClientError for an event over the cap, then ignores input', () => {
    const out: string[] = [];
    const p = new SseParser((d) => out.push(d), { maxEventBytes: 64 });
    p.push(enc('data: small\n\n'));
    let err: unknown;
    try {
      for (let i = 0; i < 20; i++) p.push(enc('data: 0123456789\n'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).code).toBe('protocol');
    p.push(enc('\n\ndata: after\n\n'));
    expect(out).toEqual(['small']);
  });

  it('caps a single never-ending line fed byte by byte', () => {
    const p = new SseParser(() => undefined, { maxEventBytes: 100 });
    const b = enc('data: ' + 'z'.repeat(200));
    expect(() => {
      for (let i = 0; i < b.length; i++) p.push(b.subarray(i, i + 1));
    }).toThrow(/exceeds 100 bytes/);
  });

  it('an event exactly at the cap is accepted', () => {
    const line = 'data: ' + 'q'.repeat(94); // 100 bytes
    expect(parseIn(bytewise(`${line}\n\n`), { maxEventBytes: 100 })).toEqual(['q'.repeat(94)]);
  });

  it('rejects an invalid cap', () => {
    expect(() => new SseParser(() => undefined, { maxEventBytes: 0 })).toThrow(/maxEventBytes/);
  });

  it('handles a long batched body with many events', () => {
    const events = Array.from({ length: 500 }, (_, i) => `{"i":${i}}`);
    const body = events.map((e, i) => (i % 3 === 0 ? `data: ${e}\r\n\r\n` : `data: ${e}\n\n`)).join('');
    expectEvents(body, events);
  });
});
