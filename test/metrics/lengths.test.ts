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
  it('input over the requests sent in the window (usage first, the planned count where there is none); output over those done', () => {
    const planned = (t: RequestTimeline, n: number): RequestTimeline => ({ ...t, plannedPromptTokens: n });
    const got = sentLengths(
      [
        req('a', 10, 50, [2, 2, 1], 100),
        planned(req('b', 20, 60, [4], undefined), 70),
        req('c', 5, 40, [9], 90), // sent before the window opened: neither
        req('d', 30, 120, [3], 110), // done after it closed: its input, not its output
        planned(req('e', 30, 100, [3], undefined, 'aborted'), 80), // cut at the end: its planned input only
        req('f', 30, 60, [1, 1], undefined), // no count at all: output only
        req('g', 100, 150, [1], 100), // sent as the window closed: neither
      ],
      10,
      100,
    );
    expect(got).toEqual({ input: [100, 70, 110, 80], output: [5, 4, 2] });
  });
  it('output is the max_tokens each request sent in the window asked for, done or not', () => {
    const asked = (t: RequestTimeline, n: number): RequestTimeline => ({ ...t, askedMaxTokens: n });
    const got = sentLengths([asked(req('a', 10, 50, [2, 2, 1], 100), 5), asked(req('b', 20, 90, [4], 80, 'aborted'), 64), asked(req('c', 5, 40, [9], 90), 9)], 10, 100);
    expect(got).toEqual({ input: [100, 80], output: [5, 64] });
  });
});
