import { describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/errors.js';
import { SseParser, type SseEndDispatch, type SseEndReport, type SseParserOptions } from '../../src/client/sse.js';

/**
 * How the events reach the caller: 'text' (onData only), 'bytes' (onDataBytes takes every event
 * it is offered, decoded here), 'decline' (onDataBytes declines each one: its text comes to onData).
 * Every case below runs in all three and must give the same events.
 */
type Mode = 'text' | 'bytes' | 'decline';
const MODES: readonly Mode[] = ['text', 'bytes', 'decline'];

function withMode(mode: Mode, out: string[], options: { maxEventBytes?: number } = {}): SseParserOptions {
  if (mode === 'text') return options;
  return {
    ...options,
    onDataBytes: (b, s, e) => {
      if (mode === 'decline') return false;
      out.push(b.toString('utf8', s, e));
      return true;
    },
  };
}

function parseIn(pieces: Uint8Array[], options?: { maxEventBytes?: number }, mode: Mode = 'text'): string[] {
  const out: string[] = [];
  const p = new SseParser((d) => out.push(d), withMode(mode, out, options));
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

/** every split strategy, in every mode, must give the same events */
function expectEvents(stream: string, expected: string[]): void {
  for (const mode of MODES) {
    expect(parseIn(whole(stream), undefined, mode)).toEqual(expected);
    expect(parseIn(bytewise(stream), undefined, mode)).toEqual(expected);
    for (let seed = 1; seed <= 40; seed++) expect(parseIn(randomSplits(stream, seed), undefined, mode)).toEqual(expected);
  }
}

/** the events (with what a dispatch by end() was told) and end()'s report, for one split */
function parseToEnd(pieces: Uint8Array[], how: 'clean' | 'error', mode: Mode = 'text'): { events: Array<[string, SseEndDispatch?]>; report: SseEndReport } {
  const events: Array<[string, SseEndDispatch?]> = [];
  const p = new SseParser(
    (d, atEnd) => events.push(atEnd === undefined ? [d] : [d, atEnd]),
    mode === 'text' ? {} : { onDataBytes: (b, s, e) => (mode === 'bytes' ? events.push([b.toString('utf8', s, e)]) > 0 : false) },
  );
  for (const piece of pieces) p.push(piece);
  const report = p.end(how);
  return { events, report };
}

/** every split strategy, down to one byte at a time, gives the same events and the same end report */
function expectEnd(stream: string, how: 'clean' | 'error', expected: { events: Array<[string, SseEndDispatch?]>; report: SseEndReport }): void {
  for (const mode of MODES) {
    expect(parseToEnd(whole(stream), how, mode)).toEqual(expected);
    expect(parseToEnd(bytewise(stream), how, mode)).toEqual(expected);
    for (let seed = 1; seed <= 40; seed++) expect(parseToEnd(randomSplits(stream, seed), how, mode)).toEqual(expected);
  }
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

  it('at a clean end(), dispatches complete data lines without their blank line, and a last line without its line end', () => {
    expect(parseIn(whole('data: [DONE]\n'))).toEqual(['[DONE]']);
    // the parser does not judge the payload: a cut-off JSON line is the stream layer's to refuse
    expect(parseIn(whole('data: a\n\ndata: {"trunc'))).toEqual(['a', '{"trunc']);
  });

  it('dispatches an unterminated last `data: [DONE]` at a clean end, telling onData and the report', () => {
    expectEnd('data: {"a":1}\n\ndata: [DONE]', 'clean', {
      events: [['{"a":1}'], ['[DONE]', { unterminatedLine: true }]],
      report: { dispatched: true, unterminatedLine: true, discardedBytes: 0 },
    });
    // the whole body is that one line
    expectEnd('data: [DONE]', 'clean', {
      events: [['[DONE]', { unterminatedLine: true }]],
      report: { dispatched: true, unterminatedLine: true, discardedBytes: 0 },
    });
  });

  it('dispatches an unterminated last `data: {json}` at a clean end', () => {
    const json = '{"choices":[{"delta":{"content":"héllo"},"finish_reason":"length"}]}';
    expectEnd(`data: {"i":0}\n\ndata: ${json}`, 'clean', {
      events: [['{"i":0}'], [json, { unterminatedLine: true }]],
      report: { dispatched: true, unterminatedLine: true, discardedBytes: 0 },
    });
    // no space after the colon, and a bare `data` line as the unterminated last one
    expectEnd('data:{"x":1}', 'clean', { events: [['{"x":1}', { unterminatedLine: true }]], report: { dispatched: true, unterminatedLine: true, discardedBytes: 0 } });
    // (`a\n` + empty value; the trailing whitespace is stripped as for any event)
    expectEnd('data: a\ndata', 'clean', { events: [['a', { unterminatedLine: true }]], report: { dispatched: true, unterminatedLine: true, discardedBytes: 0 } });
  });

  it('CRLF and CR variants of the last event at a clean end', () => {
    const crlfUnterminated = { events: [['x'], ['[DONE]', { unterminatedLine: true }]] as Array<[string, SseEndDispatch?]>, report: { dispatched: true, unterminatedLine: true, discardedBytes: 0 } };
    expectEnd('data: x\r\n\r\ndata: [DONE]', 'clean', crlfUnterminated);
    expectEnd('data: x\r\rdata: [DONE]', 'clean', crlfUnterminated);
    // the line end came, the blank line did not: dispatched, the line was terminated
    const terminated = { events: [['x'], ['[DONE]', { unterminatedLine: false }]] as Array<[string, SseEndDispatch?]>, report: { dispatched: true, unterminatedLine: false, discardedBytes: 0 } };
    expectEnd('data: x\r\n\r\ndata: [DONE]\r\n', 'clean', terminated);
    expectEnd('data: x\r\n\r\ndata: [DONE]\r', 'clean', terminated);
    expectEnd('data: x\n\ndata: [DONE]\n', 'clean', terminated);
    // two data lines of one event, CRLF between them, the second unterminated
    expectEnd('data: a\r\ndata: b', 'clean', { events: [['a\nb', { unterminatedLine: true }]], report: { dispatched: true, unterminatedLine: true, discardedBytes: 0 } });
    // a complete event then nothing: end() has nothing to do
    expectEnd('data: x\r\n\r\n', 'clean', { events: [['x']], report: { dispatched: false, unterminatedLine: false, discardedBytes: 0 } });
  });

  it('an unterminated last comment or other field is dropped at a clean end, and dispatches nothing by itself', () => {
    expectEnd(': keep-alive', 'clean', { events: [], report: { dispatched: false, unterminatedLine: false, discardedBytes: 12 } });
    // the event's data line was complete; the comment after it is no data
    expectEnd('data: a\n: pi', 'clean', { events: [['a', { unterminatedLine: false }]], report: { dispatched: true, unterminatedLine: false, discardedBytes: 4 } });
    expectEnd('data: a\r\nevent: x', 'clean', { events: [['a', { unterminatedLine: false }]], report: { dispatched: true, unterminatedLine: false, discardedBytes: 8 } });
  });

  it('an error end dispatches nothing pending: neither the unterminated last line nor an event without its blank line', () => {
    expectEnd('data: {"a":1}\n\ndata: [DONE]', 'error', { events: [['{"a":1}']], report: { dispatched: false, unterminatedLine: false, discardedBytes: 12 } });
    expectEnd('data: {"a":1}\r\n\r\ndata: [DONE]\r\n', 'error', { events: [['{"a":1}']], report: { dispatched: false, unterminatedLine: false, discardedBytes: 12 } });
    expectEnd('data: {"a":1}\n\ndata: x\ndata: {"tr', 'error', { events: [['{"a":1}']], report: { dispatched: false, unterminatedLine: false, discardedBytes: 7 + 10 } });
    // and the parser is reusable after it
    const out: string[] = [];
    const p = new SseParser((d) => out.push(d));
    p.push(enc('data: lost'));
    p.end('error');
    p.push(enc('data: kept\n\n'));
    expect(out).toEqual(['kept']);
  });

  it('the cap holds for an unterminated last line: push throws, and end() then dispatches nothing', () => {
    const seen: string[] = [];
    const p = new SseParser((d) => seen.push(d), { maxEventBytes: 50 });
    p.push(enc('data: a\n'));
    expect(() => p.push(enc('data: 0123456789012345678901234567890123456789'))).toThrow(/exceeds 50 bytes/);
    expect(p.end()).toEqual({ dispatched: false, unterminatedLine: false, discardedBytes: 0 });
    expect(seen).toEqual([]);
    // just under the cap, the same last line is dispatched
    const q = parseToEnd([enc('data: a\n'), enc('data: 01234567890123456789012345678901234')], 'clean');
    expect(q.events).toEqual([['a\n01234567890123456789012345678901234', { unterminatedLine: true }]]);
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

  it("onDataBytes is offered only a one-line event ending in } or ] (`[DONE]` too: the sink declines it) whose blank line came in the same push; the rest go to onData as text", () => {
    const seen: string[] = [];
    const p = new SseParser((d) => seen.push(`text:${d}`), { onDataBytes: (b, s, e) => seen.push(`bytes:${b.toString('utf8', s, e)}`) > 0 });
    p.push(enc('data: {"a":1}\n\ndata: [1]\r\n\r\ndata: [DONE]\n\ndata: {"b":2} \n\ndata: {"c"\ndata: :3}\n\n: note\ndata:{"d":4}\n'));
    // the blank line of {"d":4} comes in the next push: by then the first chunk may be reused
    p.push(enc('\ndata: {"e":5}\n\ndata: {"f":6}'));
    p.end();
    expect(seen).toEqual(['bytes:{"a":1}', 'bytes:[1]', 'bytes:[DONE]', 'text:{"b":2}', 'text:{"c"\n:3}', 'text:{"d":4}', 'bytes:{"e":5}', 'text:{"f":6}']);
  });

  it('an event still open when push returns keeps its text, not a view of the caller\'s buffer (which may be reused)', () => {
    const seen: string[] = [];
    const p = new SseParser((d) => seen.push(d), { onDataBytes: () => false });
    const chunk = Buffer.from('data: {"x":"first"}\n');
    p.push(chunk);
    chunk.fill(0x41); // the transport reuses its buffer for the next read
    p.push(Buffer.from('\n'));
    expect(seen).toEqual(['{"x":"first"}']);
  });
});
