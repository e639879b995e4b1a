/**
 * The byte scan of a stream chunk (engines/openai-scan.ts over client/json-scan.ts) against the
 * reading it replaces, JSON.parse then decodeOpenAIChunk: wherever the scan answers, it must give
 * the same DecodedChunk field for field; wherever the text is not JSON, it must not answer. Checked
 * on the engines' recorded chunks, on every data line of the real llama.cpp transcripts, on the
 * tricky cases one at a time, and on 20,000 chunks mutated byte by byte (seeded).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { JsonFieldScanner, MAX_DEPTH, NUMBER, OBJECT, ScanPlan, STRING } from '../../src/client/json-scan.js';
import { ShapeMemo } from '../../src/client/json-shapes.js';
import { getAdapter } from '../../src/engines/detect.js';
import { decodeLlamacppChunk, scanLlamacppChunk } from '../../src/engines/llamacpp.js';
import { decodeOpenAIChunk } from '../../src/engines/openai.js';
import { scanOpenAIChunk } from '../../src/engines/openai-scan.js';
import { mulberry32 } from '../../src/random.js';
import { ENGINE_KINDS, type DecodedChunk } from '../../src/shapes/engine.js';
import { dataEvents, loadTranscript, parseHttpResponse, sseEvents } from '../helpers/transcript.js';

const fixtures = JSON.parse(readFileSync(new URL('../fixtures/engines/chunks.json', import.meta.url), 'utf8')) as Record<string, { payload: unknown }>;

/** an adapter's two readings: the decoder of a parsed payload, and the scan of its bytes */
interface Readings {
  decode: (payload: unknown) => DecodedChunk;
  scan: (bytes: Uint8Array, start: number, end: number, wantText: boolean) => DecodedChunk | undefined;
}
const OPENAI: Readings = { decode: decodeOpenAIChunk, scan: scanOpenAIChunk };
const LLAMACPP: Readings = { decode: decodeLlamacppChunk, scan: scanLlamacppChunk };

/** what the client did before the scan: the line's text, JSON.parse, the decoder ('throws' when JSON.parse does) */
function slow(bytes: Buffer, r = OPENAI): DecodedChunk | 'throws' {
  try {
    return r.decode(JSON.parse(bytes.toString('utf8')));
  } catch {
    return 'throws';
  }
}

function fast(bytes: Buffer, wantText = true, r = OPENAI): DecodedChunk | undefined {
  // inside a larger buffer, as a socket read holds it
  const padded = Buffer.concat([Buffer.from('data: '), bytes, Buffer.from('\n\n')]);
  return r.scan(padded, 6, 6 + bytes.length, wantText);
}

/** the scan's answer equals the slow reading, or it did not answer; returns whether it answered */
function agree(text: string | Buffer, r = OPENAI): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  const f = fast(bytes, true, r);
  if (f === undefined) return false;
  const s = slow(bytes, r);
  expect(s, `the scan read ${JSON.stringify(bytes.toString('utf8'))}, which JSON.parse refuses`).not.toBe('throws');
  expect(f, bytes.toString('utf8')).toStrictEqual(s);
  return true;
}

/** a vLLM token chunk; `content` as written in the JSON, quotes and escapes included */
const vllmToken = (n: number, content = '"tok "'): string =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1795994958,"model":"m","choices":[{"index":0,"delta":{"content":${content}},"logprobs":null,"finish_reason":null}],` +
  `"usage":{"prompt_tokens":4,"total_tokens":${4 + n},"completion_tokens":${n},"prompt_tokens_details":{"cached_tokens":0}}}`;

describe('scanOpenAIChunk: the same DecodedChunk as JSON.parse + decodeOpenAIChunk', () => {
  it.each([
    ['OpenAI', OPENAI],
    ['llama.cpp', LLAMACPP],
  ] as const)('every recorded engine chunk (compact and pretty-printed), %s reading: equal, and the token chunks are read by the scan', (_n, r) => {
    let read = 0;
    for (const [name, { payload }] of Object.entries(fixtures)) {
      for (const text of [JSON.stringify(payload), JSON.stringify(payload, null, 2)]) {
        if (agree(text, r)) read++;
        else expect(['vllm-midstream-error', 'sglang-queue-full-error', 'sglang-abort', 'llamacpp-tool-calls', 'tgi-midstream-error', 'tgi-flat-error', 'not-an-object', 'null', 'array'], name).toContain(name);
      }
    }
    expect(read).toBeGreaterThanOrEqual(30);
  });

  it('every data line of the real llama.cpp b4748 transcripts (timings on every chunk): equal, every one read by the scan', () => {
    let events = 0;
    let read = 0;
    for (const name of ['a-chat-stream', 'b-chat-stream-twice-one-socket', 'c-completions-stream', 'e-chat-stream-1k-prompt']) {
      let wire = dataEvents(loadTranscript(name).events);
      for (;;) {
        const res = parseHttpResponse(wire);
        if (res === undefined) break;
        for (const e of sseEvents(res.body)) {
          if (e.data === '[DONE]') continue;
          events++;
          if (agree(e.data, LLAMACPP)) read++;
          else expect.fail(`${name}: not read by the scan: ${e.data}`);
          // the generic reading of the same chunk ignores the timings
          expect(agree(e.data, OPENAI)).toBe(true);
        }
        if (res.rest.length === 0) break;
        wire = [{ atMs: 0, bytes: res.rest }];
      }
    }
    expect(events).toBeGreaterThan(20);
    expect(read).toBe(events);
  });

  it('a vLLM token chunk with continuous usage: read, text only when asked', () => {
    const bytes = Buffer.from(vllmToken(7, '"héllo\\n \\"x\\""'));
    expect(agree(bytes)).toBe(true);
    expect(fast(bytes, false)).toStrictEqual({ hasText: true, reasoning: false, usage: { promptTokens: 4, completionTokens: 7, cachedTokens: 0 } });
    expect(fast(bytes, true)?.text).toBe('héllo\n "x"');
  });

  it.each([
    ['escapes and unicode in the text', vllmToken(3, '"a\\u00e9\\ud83d\\ude00\\t\\/b\\\\"')],
    ['a lone surrogate escape', vllmToken(3, '"\\ud800x"')],
    ['multi-byte UTF-8 in the text', vllmToken(3, '"日本語 😀"')],
    ['invalid UTF-8 is U+FFFD as the decoder makes it', Buffer.concat([Buffer.from('{"choices":[{"delta":{"content":"a'), Buffer.from([0xe2, 0x28]), Buffer.from('"}}]}')])],
    ['finish reasons', '{"choices":[{"delta":{},"finish_reason":"stop"}]}'],
    ['finish reason "null" and ""', '{"choices":[{"delta":{"content":"x"},"finish_reason":"null"}]}'],
    ['finish reason "" ', '{"choices":[{"delta":{"content":"x"},"finish_reason":""}]}'],
    ['finish reason null spelled with an escape', '{"choices":[{"delta":{"content":"x"},"finish_reason":"nu\\u006cl"}]}'],
    ['completions text', '{"choices":[{"text":" a","index":0,"finish_reason":null}]}'],
    ['content and text together', '{"choices":[{"delta":{"content":"a"},"text":"b"}]}'],
    ['reasoning_content', '{"choices":[{"delta":{"reasoning_content":"hm","content":null}}]}'],
    ['reasoning', '{"choices":[{"delta":{"reasoning":"hm","content":""}}]}'],
    ['empty tool_calls', '{"choices":[{"delta":{"tool_calls":[]}}]}'],
    ['token ids on the choice', '{"choices":[{"delta":{"content":"a"},"token_ids":[1,2,[3],{"a":4}]}]}'],
    ['token ids at the root', '{"choices":[{"delta":{"content":"a"}}],"token_ids":[]}'],
    ['token ids not an array', '{"choices":[{"delta":{"content":"a"},"token_ids":5}],"token_ids":[1]}'],
    ['usage-only final chunk', '{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":30,"total_tokens":42}}'],
    ['numbers of every form', '{"usage":{"prompt_tokens":-0,"completion_tokens":1.5e3,"prompt_tokens_details":{"cached_tokens":12345678901234567890}}}'],
    ['a number out of range is no count', '{"usage":{"prompt_tokens":1e400,"completion_tokens":3}}'],
    ['usage fields of other types', '{"usage":{"prompt_tokens":null,"completion_tokens":true,"prompt_tokens_details":[{"cached_tokens":3}]}}'],
    ['null usage and details', '{"usage":{"prompt_tokens_details":null,"completion_tokens":2},"x":{"usage":{"completion_tokens":9}}}'],
    ['choices not an array', '{"choices":{"0":{"delta":{"content":"a"}}}}'],
    ['choices[0] not an object', '{"choices":["a",{"delta":{"content":"b"}}]}'],
    ['only the first choice counts', '{"choices":[{"delta":{}},{"delta":{"content":"b"}}]}'],
    ['whitespace everywhere', ' { "choices" : [ { "delta" : { "content" : "a" } } ] , "usage" : { "completion_tokens" : 4 } } '],
    ['error null', '{"error":null,"choices":[{"delta":{"content":"a"}}]}'],
    ['a planned key with an escape', '{"choices":[{"delta":{"con\\u0074ent":"a"}}],"usage":{"completion\\u005ftokens":2}}'],
    ['unplanned keys with escapes', '{"i\\u0064":"x","choices":[{"delta":{"content":"a","r\\u006fle":"assistant"}}]}'],
    ['llama.cpp timings, ignored by the generic reading', '{"choices":[{"delta":{},"finish_reason":"stop"}],"timings":{"predicted_n":3}}'],
    ['deep unplanned nesting', `{"x":${'['.repeat(40)}${']'.repeat(40)},"choices":[{"delta":{"content":"a"}}]}`],
  ])('%s: equal', (_name, text) => {
    expect(agree(text)).toBe(true);
  });

  it.each([
    ['timings without usage: usage from them', '{"choices":[{"delta":{"content":"a"}}],"timings":{"prompt_n":5,"cache_n":2,"prompt_ms":11.5,"predicted_n":3,"predicted_ms":0.0,"predicted_per_second":null}}'],
    ['timings and usage: usage kept', '{"choices":[],"usage":{"completion_tokens":4},"timings":{"predicted_n":3,"cache_n":-1}}'],
    ['timings of no readable field', '{"choices":[{"delta":{"content":"a"}}],"timings":{"x":1,"predicted_n":null}}'],
    ['timings not an object', '{"choices":[{"delta":{"content":"a"}}],"timings":[1]}'],
  ])('llama.cpp reading, %s: equal', (_name, text) => {
    expect(agree(text, LLAMACPP)).toBe(true);
  });

  it('llama.cpp reading, a timing sent as a string: left to the decoder', () => {
    const text = Buffer.from('{"choices":[],"timings":{"predicted_n":"3"}}');
    expect(fast(text, true, LLAMACPP)).toBeUndefined();
    expect(slow(text, LLAMACPP)).toMatchObject({ serverTimings: { predictedN: 3 } });
  });

  it.each([
    ['an error object', '{"error":{"message":"boom","code":500}}'],
    ['tool-call deltas', '{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}'],
    ['a count sent as a string', '{"usage":{"completion_tokens":"3"}}'],
    ['a planned key twice, once with an escape', '{"usage":{"completion_tokens":1,"completion\\u005ftokens":2}}'],
    ['a planned key twice', '{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{}}]}'],
    ['not an object', '"text"'],
    ['an array', '[{"choices":[]}]'],
    ['nesting over the limit', `{"x":${'['.repeat(MAX_DEPTH + 1)}${']'.repeat(MAX_DEPTH + 1)}}`],
  ])('%s: left to the decoder (no answer), which still reads it', (_name, text) => {
    expect(fast(Buffer.from(text))).toBeUndefined();
    expect(slow(Buffer.from(text))).not.toBe('throws');
  });

  it.each([
    ['a trailing comma', '{"choices":[],}'],
    ['a missing colon', '{"choices" []}'],
    ['single quotes', "{'usage':{}}"],
    ['a raw control character in a string', '{"choices":[{"delta":{"content":"a\tb"}}]}'],
    ['a bad escape', '{"choices":[{"delta":{"content":"a\\xb"}}]}'],
    ['a short \\u escape', '{"choices":[{"delta":{"content":"a\\u12"}}]}'],
    ['a leading zero', '{"usage":{"completion_tokens":01}}'],
    ['a bare minus', '{"usage":{"completion_tokens":-}}'],
    ['a fraction without digits', '{"usage":{"completion_tokens":1.}}'],
    ['an exponent without digits', '{"usage":{"completion_tokens":1e+}}'],
    ['NaN', '{"usage":{"completion_tokens":NaN}}'],
    ['a truncated literal', '{"error":nul}'],
    ['an unclosed object', '{"choices":[{"delta":{"content":"a"}}]'],
    ['trailing garbage', '{"choices":[]} x'],
    ['two values', '{} {}'],
    ['a byte-order mark', '\ufeff{"choices":[]}'],
    ['a non-ASCII byte outside strings', '{"choices":[]\u00a0}'],
    ['empty', ''],
  ])('%s: no answer, as JSON.parse throws', (_name, text) => {
    expect(slow(Buffer.from(text))).toBe('throws');
    expect(fast(Buffer.from(text))).toBeUndefined();
  });

  it('20,000 chunks mutated byte by byte (seeded): wherever the scan answers, JSON.parse + the decoder agree', () => {
    const rand = mulberry32(24);
    const seeds = [
      ...Object.values(fixtures).map((f) => JSON.stringify(f.payload)),
      vllmToken(12, '"a \\"quoted\\" \\\\ word"'),
      '{"choices":[{"delta":{"reasoning_content":"hm"},"finish_reason":"length","token_ids":[1,2]}],"usage":{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":0}}}',
      '{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"ód"}}],"object":"chat.completion.chunk","timings":{"prompt_n":5,"prompt_ms":11.791,"predicted_n":2,"predicted_ms":3.026,"predicted_per_second":660.9385327164574}}',
    ];
    const alphabet = Buffer.from('{}[]":,\\ 0123456789-+.eEtrufalsn\tu"abc\u00e9');
    let answered = 0;
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const bytes = Buffer.from(seeds[Math.floor(rand() * seeds.length)]!);
      const edits = 1 + Math.floor(rand() * 3);
      let b: Buffer = bytes;
      for (let k = 0; k < edits; k++) {
        const at = Math.floor(rand() * (b.length + 1));
        const byte = alphabet[Math.floor(rand() * alphabet.length)]!;
        const op = rand();
        if (op < 0.4) b = Buffer.concat([b.subarray(0, at), Buffer.from([byte]), b.subarray(at)]);
        else if (op < 0.7) b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
        else if (at < b.length) b = Buffer.concat([b.subarray(0, at), Buffer.from([byte]), b.subarray(at + 1)]);
      }
      const r = i % 2 === 0 ? OPENAI : LLAMACPP;
      if (agree(b, r)) answered++;
      else if (slow(b, r) === 'throws') refused++;
    }
    // both kinds were exercised many times
    expect(answered).toBeGreaterThan(2_000);
    expect(refused).toBeGreaterThan(5_000);
  });
});

describe('the shape memo (a chunk read by comparing bytes with one read before)', () => {
  it('10,000 chunks whose values alone change, validly or not, after their shape was learned: the same answers as the decoder, most by the memo', () => {
    const rand = mulberry32(7);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)]!;
    // value tokens, valid (strings with escapes and multi-byte text, numbers of every form) and not
    const STRINGS = ['"a"', '""', '"null"', '"stop"', '"nu\\u006cl"', '"\\ud83d\\ude00"', '"x\\"y"', '"日本"', '"\\u0000"', '"3"'];
    const NUMBERS = ['0', '-0', '12', '1.5e3', '1e400', '-7', '12345678901234567890'];
    const OTHERS = ['null', 'true', '[]', '{}', '[1,2]'];
    const BAD = ['01', '1.', '-', '"a\tb"', '"\\x"', '"abc', 'nul', '"\\u12"', '1e', '.5'];
    const seeds = [
      ...Object.values(fixtures).map((f) => JSON.stringify(f.payload)),
      vllmToken(12),
      '{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"ód"}}],"object":"chat.completion.chunk","timings":{"prompt_n":5,"prompt_ms":11.791,"predicted_n":2,"predicted_ms":3.026,"predicted_per_second":null}}',
    ];
    const value = /(?<=[:[,]\s*)("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|null|true|false)(?=\s*[,}\]])/g;
    let tries = 0;
    let hits = 0;
    const match = ShapeMemo.prototype.match;
    ShapeMemo.prototype.match = function (this: ShapeMemo, ...a: Parameters<typeof match>) {
      tries++;
      const hit = match.apply(this, a);
      if (hit) hits++;
      return hit;
    };
    try {
      let answered = 0;
      for (let i = 0; i < 10_000; i++) {
        // each seed 20 times in a row, so its shape stays among the memo's four
        const seed = seeds[Math.floor(i / 20) % seeds.length]!;
        const r = i % 2 === 0 ? OPENAI : LLAMACPP;
        agree(seed, r); // its shape is learned (where the scan reads it)
        // a value becomes another of its kind (the same shape), mostly; now and then another kind or a bad token
        const other = (v: string): string => {
          const x = rand();
          if (x < 0.8) return v.startsWith('"') ? pick(STRINGS) : /^-?\d/.test(v) ? pick(NUMBERS) : v;
          return x < 0.9 ? pick(OTHERS) : pick(BAD);
        };
        const variant = seed.replace(value, (v) => (rand() < 0.3 ? other(v) : v));
        if (agree(variant, r)) answered++;
        else if (slow(Buffer.from(variant), r) !== 'throws') expect(fast(Buffer.from(variant), true, r), variant).toBeUndefined();
      }
      expect(answered).toBeGreaterThan(4_000);
      // the memo answered most of the scans it was asked (a full walk learns each new shape)
      expect(hits / tries).toBeGreaterThan(0.7);
    } finally {
      ShapeMemo.prototype.match = match;
    }
  });
  it('the shape matched last is compared first: a stream\'s role chunk, learned first, is not tried before each token chunk', () => {
    const plan = new ScanPlan([['choices', 0, 'delta', 'content'], ['usage', 'completion_tokens']]);
    const scanner = new JsonFieldScanner(plan);
    const role = Buffer.from('{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}');
    const compared: Buffer[] = [];
    const proto = ShapeMemo.prototype as unknown as { matches(shape: { bytes: Buffer }, ...rest: unknown[]): boolean };
    const matches = proto.matches;
    proto.matches = function (this: unknown, shape: { bytes: Buffer }, ...rest: unknown[]) {
      compared.push(shape.bytes);
      return matches.call(this, shape, ...rest);
    };
    try {
      expect(scanner.scan(role, 0, role.length)).toBe(true); // learned: the first shape
      for (let n = 1; n <= 5; n++) {
        const token = Buffer.from(vllmToken(n));
        compared.length = 0;
        expect(scanner.scan(token, 0, token.length)).toBe(true);
        expect(scanner.number(plan.slotOf(['usage', 'completion_tokens']))).toBe(n);
        // the first token chunk is learned after failing the role's shape; the second finds its
        // shape second and moves it to the front; from the third on it is the only one compared
        if (n === 1) expect(compared.map((b) => b.equals(role))).toEqual([true]);
        else if (n === 2) expect(compared.map((b) => b.equals(role))).toEqual([true, false]);
        else expect(compared.map((b) => b.equals(role))).toEqual([false]);
      }
      // the role's shape is still kept, and still read by the memo
      compared.length = 0;
      expect(scanner.scan(role, 0, role.length)).toBe(true);
      expect(compared.length).toBe(2);
    } finally {
      proto.matches = matches;
    }
  });
});

describe("every adapter's two readings agree", () => {
  it.each(ENGINE_KINDS)('%s: scanChunk gives what decodeChunk gives, wherever it answers (an adapter that overrides one must override both)', (kind) => {
    const adapter = getAdapter(kind);
    if (adapter.scanChunk === undefined) return;
    const r: Readings = { decode: (p) => adapter.decodeChunk(p), scan: (b, s, e, w) => adapter.scanChunk!(b, s, e, w) };
    let read = 0;
    const texts = Object.values(fixtures).map((f) => JSON.stringify(f.payload));
    for (const name of ['a-chat-stream', 'c-completions-stream']) {
      for (const e of sseEvents(parseHttpResponse(dataEvents(loadTranscript(name).events))!.body)) if (e.data !== '[DONE]') texts.push(e.data);
    }
    for (const text of texts) if (agree(text, r)) read++;
    expect(read).toBeGreaterThan(texts.length / 2);
  });
});

describe('JsonFieldScanner', () => {
  it('notes planned fields with their type, bytes and element count; a rescan forgets the last', () => {
    const plan = new ScanPlan([['a', 'b'], ['list', 0, 'x'], ['list']]);
    const s = new JsonFieldScanner(plan);
    const text = Buffer.from('{"a":{"b":"hi"},"list":[{"x":12},2,3]}');
    expect(s.scan(text, 0, text.length)).toBe(true);
    expect(s.type(plan.slotOf(['a']))).toBe(OBJECT);
    expect(s.type(plan.slotOf(['a', 'b']))).toBe(STRING);
    expect(s.text(plan.slotOf(['a', 'b']))).toBe('hi');
    expect(s.count(plan.slotOf(['list']))).toBe(3);
    expect(s.type(plan.slotOf(['list', 0, 'x']))).toBe(NUMBER);
    expect(s.number(plan.slotOf(['list', 0, 'x']))).toBe(12);
    const other = Buffer.from('{"list":[]}');
    expect(s.scan(other, 0, other.length)).toBe(true);
    expect(s.type(plan.slotOf(['a', 'b']))).toBe(0);
    expect(() => plan.slotOf(['nope'])).toThrow(/not a planned path/);
  });
});
