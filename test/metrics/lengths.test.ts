import { describe, expect, it } from 'vitest';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { lengthSummary, sentLengths } from '../../src/metrics/lengths.js';

function req(id: string, sendMs: number, endMs: number, tokens: number[], prompt?: number, kind: 'done' | 'aborted' = 'done'): RequestTimeline {
  return {
    id,
    sendMs,
    chunkMs: tokens.map((_, i) => sendMs + i + 1),
    chunkTokens: tokens,
    tokenSource: 'usage',
    reasoningTokens: 0,
    ...(prompt !== undefined ? { promptTokens: prompt } : {}),
    end: { kind, atMs: endMs },
  };
}

describe('lengthSummary', () => {
  it('mean, population sd, min, type-7 median and p90, max', () => {
    expect(lengthSummary([4, 1, 3, 2])).toEqual({ requests: 4, mean: 2.5, sd: Math.sqrt(1.25), min: 1, p50: 2.5, p90: 3.7, max: 4 });
    expect(lengthSummary([])).toBeUndefined();
  });
});

describe('sentLengths', () => {
  it('counts the requests sent in the window and done by its end; usage first, the planned count where there is none', () => {
    const planned = new Map([['b', 70], ['c', 80]]);
    const got = sentLengths(
      [
        req('a', 10, 50, [2, 2, 1], 100),
        req('b', 20, 60, [4], undefined),
        req('c', 5, 40, [9], 90), // sent before the window opened
        req('d', 30, 120, [3], 100), // done after it closed
        req('e', 30, 60, [3], 100, 'aborted'),
        req('f', 30, 60, [1, 1], undefined), // no count at all: output only
      ],
      10,
      100,
      (id) => planned.get(id),
    );
    expect(got).toEqual({ input: [100, 70], output: [5, 4, 2] });
  });
});
