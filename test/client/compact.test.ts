import { describe, expect, test } from 'vitest';
import { compactTimeline } from '../../src/client/compact.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { requestTimeBetweenTokensMs, tokensInWindow } from '../../src/metrics/request.js';

const timeline = (ms: number[], tokens: number[]): RequestTimeline => ({
  id: 'r',
  sendMs: 1,
  chunkMs: ms,
  chunkTokens: tokens,
  chunkText: tokens.map(() => 'word '),
  tokenSource: 'chunks',
  reasoningTokens: 0,
});

describe('a finished timeline in little memory', () => {
  test('typed arrays of the exact values, the text dropped, the figures unchanged', () => {
    const ms = [1000.123456789, 1010.5, 1020.25, 1031.000001];
    const t = timeline([...ms], [1, 2, 1, 3]);
    const tbt = requestTimeBetweenTokensMs(t, 0, 2000);
    compactTimeline(t);
    expect(t.chunkMs).toBeInstanceOf(Float64Array);
    expect(t.chunkTokens).toBeInstanceOf(Uint16Array);
    expect(Array.from(t.chunkMs)).toEqual(ms);
    expect(Array.from(t.chunkTokens)).toEqual([1, 2, 1, 3]);
    expect(t.chunkText).toBeUndefined();
    expect(requestTimeBetweenTokensMs(t, 0, 2000)).toBe(tbt);
    expect(tokensInWindow(t, 0, 2000)).toBe(7);
    // a second compaction changes nothing
    expect(Array.from(compactTimeline(t).chunkMs)).toEqual(ms);
  });

  test('a chunk of more than 65,535 tokens keeps its count (Uint32Array)', () => {
    const t = compactTimeline(timeline([1, 2], [70_000, 1]));
    expect(t.chunkTokens).toBeInstanceOf(Uint32Array);
    expect(Array.from(t.chunkTokens)).toEqual([70_000, 1]);
  });
});
