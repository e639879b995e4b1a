import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../../src/client/token-count.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import type { DecodedChunk } from '../../src/shapes/engine.js';

function fresh(): RequestTimeline {
  return { id: 't', sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0 };
}
const txt = (extra: Partial<DecodedChunk> = {}): DecodedChunk => ({ hasText: true, reasoning: false, ...extra });
const bare = (extra: Partial<DecodedChunk> = {}): DecodedChunk => ({ hasText: false, reasoning: false, ...extra });

describe('TokenCounter', () => {
  it('vLLM continuous usage: role chunk 0, increases per text chunk, finish and usage chunks add 0', () => {
    const t = fresh();
    const c = new TokenCounter(t);
    expect(c.add(bare({ usage: { promptTokens: 5, completionTokens: 0 } }), 1)).toBe(0);
    expect(c.add(txt({ usage: { completionTokens: 1 } }), 2)).toBe(1);
    expect(c.add(txt({ usage: { completionTokens: 4 } }), 3)).toBe(3);
    expect(c.add(bare({ finishReason: 'length', usage: { completionTokens: 4 } }), 4)).toBe(0);
    expect(c.add(bare({ usage: { promptTokens: 5, completionTokens: 4, cachedTokens: 3 } }), 5)).toBe(0);
    expect(t).toMatchObject({ chunkMs: [2, 3], chunkTokens: [1, 3], tokenSource: 'usage', firstTokenMs: 2, promptTokens: 5, completionTokens: 4, cachedTokens: 3 });
  });

  it('continuous usage: tokens that arrive on a chunk without text still count at its time', () => {
    const t = fresh();
    const c = new TokenCounter(t);
    c.add(txt({ usage: { completionTokens: 2 } }), 1);
    c.add(bare({ usage: { completionTokens: 3 } }), 2);
    expect(t.chunkTokens).toEqual([2, 1]);
    expect(t.firstTokenMs).toBe(1);
  });

  it('continuous usage with a text chunk lacking usage: fallback 1, later increase not double-counted', () => {
    const t = fresh();
    const c = new TokenCounter(t);
    c.add(txt({ usage: { completionTokens: 2 } }), 1);
    c.add(txt(), 2);
    c.add(txt({ usage: { completionTokens: 5 } }), 3);
    expect(t.chunkTokens).toEqual([2, 1, 2]);
    expect(t.tokenSource).toBe('chunks'); // weakest seen
  });

  it('without continuous usage, usage on the last text chunk adds no tokens beyond its own', () => {
    const t = fresh();
    const c = new TokenCounter(t);
    c.add(txt(), 1);
    c.add(txt(), 2);
    c.add(txt({ usage: { promptTokens: 9, completionTokens: 40 } }), 3);
    expect(t.chunkTokens).toEqual([1, 1, 1]);
    expect(t.completionTokens).toBe(40);
    expect(t.tokenSource).toBe('chunks');
  });

  it('per-chunk token counts, including a text-less chunk carrying tokens', () => {
    const t = fresh();
    const c = new TokenCounter(t);
    c.add(txt({ tokenCount: 3 }), 1);
    c.add(bare({ tokenCount: 1 }), 2);
    c.add(bare({ tokenCount: 0 }), 3);
    expect(t.chunkTokens).toEqual([3, 1]);
    expect(t.tokenSource).toBe('chunk-token-ids');
  });

  it('reasoning tokens are counted and tallied', () => {
    const t = fresh();
    const c = new TokenCounter(t);
    c.add(txt({ reasoning: true, tokenCount: 2 }), 1);
    c.add(txt({ reasoning: true }), 2);
    c.add(txt(), 3);
    expect(t.reasoningTokens).toBe(3);
    expect(t.chunkTokens).toEqual([2, 1, 1]);
  });

  it('a role-only chunk is not the first token', () => {
    const t = fresh();
    const c = new TokenCounter(t);
    c.add(bare(), 1);
    expect(t.firstTokenMs).toBeUndefined();
    expect(t.chunkMs).toEqual([]);
  });
});
