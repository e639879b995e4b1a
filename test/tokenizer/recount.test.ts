/** Output tokens recounted from the streamed text with a local tokenizer: per chunk, exact in total. */
import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../../src/client/token-count.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import type { DecodedChunk } from '../../src/shapes/engine.js';
import { mulberry32 } from '../../src/random.js';
import { countTokens, genPiece } from '../../src/sim/tokenizer.js';
import { simTokenizerJson } from '../../src/sim/tokenizer-json.js';
import { localTokenizerFromJson } from '../../src/tokenizer/local.js';
import { recountChunkTokens } from '../../src/tokenizer/recount.js';

const local = localTokenizerFromJson(simTokenizerJson());
const count = (s: string): number => local.count(s);

/** `n` generated tokens in chunks of 1–5 tokens (the sim's truth: each piece is one token) */
function chunked(n: number, seed: number): { chunks: string[]; truth: number[] } {
  const rnd = mulberry32(seed);
  const chunks: string[] = [];
  const truth: number[] = [];
  for (let i = 0; i < n; ) {
    const k = Math.min(n - i, 1 + Math.floor(rnd() * 5));
    let c = '';
    for (let j = 0; j < k; j++) c += genPiece(seed, i + j);
    chunks.push(c);
    truth.push(k);
    i += k;
  }
  return { chunks, truth };
}

function fresh(): RequestTimeline {
  return { id: 't', sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0 };
}
const txt = (text: string, extra: Partial<DecodedChunk> = {}): DecodedChunk => ({ hasText: true, reasoning: false, text, ...extra });

describe('recountChunkTokens', () => {
  it('multi-token chunks: each chunk gets its true tokens, the sum is the count of the whole text', () => {
    for (const seed of [1, 2, 3]) {
      const { chunks, truth } = chunked(700, seed);
      const got = recountChunkTokens(count, chunks);
      expect(got).toEqual(truth);
      expect(got.reduce((a, b) => a + b, 0)).toBe(countTokens(chunks.join('')));
    }
  });

  it('chunks that split words and specials: the differences of whole-prefix counts (made non-decreasing)', () => {
    const rnd = mulberry32(7);
    const text = 'The quick brownfox jumped\n\n over   the lazydoggerel again and again, <|im_end|> then more.';
    const chunks: string[] = [];
    for (let i = 0; i < text.length; ) {
      const k = 1 + Math.floor(rnd() * 6);
      chunks.push(text.slice(i, i + k));
      i += k;
    }
    const got = recountChunkTokens(count, chunks, 1);
    // whole-prefix counts, each lowered to the smallest later one (a special cut in two counts
    // more pieces than the whole special), then differenced
    const prefix = chunks.map((_, i) => countTokens(chunks.slice(0, i + 1).join('')));
    for (let i = prefix.length - 2; i >= 0; i--) prefix[i] = Math.min(prefix[i]!, prefix[i + 1]!);
    expect(got).toEqual(prefix.map((c, i) => c - (i === 0 ? 0 : prefix[i - 1]!)));
    expect(got.reduce((a, b) => a + b, 0)).toBe(countTokens(text));
  });

  it('a tokenizer whose count can drop as text grows: no chunk below 0, the total kept', () => {
    // a counter that merges "ab" into one token: count("a") = 1, count("a" + "b") = 1
    const merging = (s: string): number => s.replace(/ab/g, 'X').length;
    const got = recountChunkTokens(merging, ['a', 'b', 'a', 'b', 'c'], 1);
    expect(got.every((n) => n >= 0)).toBe(true);
    expect(got.reduce((a, b) => a + b, 0)).toBe(merging('ababc'));
  });
});

describe('TokenCounter with a local tokenizer', () => {
  const recountTokens = (texts: readonly string[]) => recountChunkTokens(count, texts);

  it('no usage, no token ids: chunks recounted from their text, timing stays per chunk', () => {
    const { chunks, truth } = chunked(200, 11);
    const t = fresh();
    const c = new TokenCounter(t, { recountTokens });
    c.add({ hasText: false, reasoning: false }, 0.5); // role chunk
    chunks.forEach((text, i) => c.add(txt(text, i < 3 ? { reasoning: true } : {}), i + 1));
    c.add({ hasText: false, reasoning: false, finishReason: 'length', usage: { completionTokens: 400 } }, chunks.length + 1);
    expect(t.chunkTokens).toEqual(chunks.map(() => 1)); // before the end: one per chunk
    c.complete();
    expect(t.tokenSource).toBe('local-tokenizer');
    expect(t.chunkTokens).toEqual(truth);
    expect(t.chunkMs).toEqual(chunks.map((_, i) => i + 1));
    expect(t.chunkText).toEqual(chunks);
    expect(t.reasoningTokens).toBe(truth[0]! + truth[1]! + truth[2]!);
    expect(t.completionTokens).toBe(400); // the server's usage is kept as reported, not used
  });

  it('continuous usage or token ids: left as they are', () => {
    const t = fresh();
    const c = new TokenCounter(t, { recountTokens });
    c.add(txt('a b c ', { usage: { completionTokens: 3 } }), 1);
    c.add(txt('d e ', { usage: { completionTokens: 5 } }), 2);
    c.complete();
    expect(t).toMatchObject({ tokenSource: 'usage', chunkTokens: [3, 2] });
    const ids = fresh();
    const c2 = new TokenCounter(ids, { recountTokens });
    c2.add(txt('a b c ', { tokenCount: 3 }), 1);
    c2.complete();
    expect(ids).toMatchObject({ tokenSource: 'chunk-token-ids', chunkTokens: [3] });
  });

  it('keepText alone keeps the text and changes no count', () => {
    const t = fresh();
    const c = new TokenCounter(t, { keepText: true });
    c.add(txt('ab cd '), 1);
    c.complete();
    expect(t).toMatchObject({ tokenSource: 'chunks', chunkTokens: [1], chunkText: ['ab cd '] });
    const none = fresh();
    new TokenCounter(none).add(txt('x'), 1);
    expect(none.chunkText).toBeUndefined();
  });
});
