import { describe, expect, it } from 'vitest';
import type { RequestTimeline, TokenSource } from '../../src/shapes/timeline.js';
import { usageDisagreement } from '../../src/metrics/usage-check.js';
import { maxTokensIgnored } from '../../src/metrics/length-check.js';

function req(counted: number[], usage: number | undefined, source: TokenSource = 'local-tokenizer'): RequestTimeline {
  return {
    id: 'r',
    sendMs: 0,
    chunkMs: counted.map((_, i) => i + 1),
    chunkTokens: counted,
    tokenSource: source,
    reasoningTokens: 0,
    ...(usage !== undefined ? { completionTokens: usage } : {}),
    end: { kind: 'done', atMs: 100 },
  };
}

describe('usageDisagreement', () => {
  it('usage twice the streamed tokens is flagged, with an example', () => {
    const d = usageDisagreement([req([2, 2, 2, 2], 16), req([3, 3], 12), req([4], 4)]);
    expect(d).toEqual({ requests: 2, of: 3, constant: false, example: { usage: 16, counted: 8 } });
  });

  it('within max(2, 2 %) agrees; no usage, continuous usage and unfinished requests are not checked', () => {
    expect(usageDisagreement([req([50, 50], 102), req([5], 7)])).toBeUndefined();
    expect(usageDisagreement([req([5], undefined)])).toBeUndefined();
    expect(usageDisagreement([req([5], 50, 'usage')])).toBeUndefined();
    const aborted = { ...req([5], 50), end: { kind: 'aborted' as const, atMs: 1 } };
    expect(usageDisagreement([aborted])).toBeUndefined();
  });

  it('constant usage over different streamed lengths is flagged as constant', () => {
    const d = usageDisagreement([req([40], 100), req([100], 100), req([70], 100)]);
    expect(d).toMatchObject({ constant: true, of: 3, requests: 2 });
    // the same usage where the lengths are the same too (a forced length) is not constant usage
    expect(usageDisagreement([req([100], 100), req([100], 100)])).toBeUndefined();
  });

  it('chunks without a tokenizer: usage above the chunk count is fine (several tokens per chunk), below it is not', () => {
    expect(usageDisagreement([req([1, 1, 1, 1], 12, 'chunks')])).toBeUndefined();
    expect(usageDisagreement([req(Array(20).fill(1) as number[], 10, 'chunks')])).toMatchObject({ requests: 1, example: { usage: 10, counted: 20 } });
  });
});

describe('maxTokensIgnored (a server that streams past max_tokens, issue 60)', () => {
  const asked = (t: RequestTimeline, n: number): RequestTimeline => ({ ...t, askedMaxTokens: n });
  it('requests that streamed more than they asked for are counted, the furthest past its cap the example', () => {
    const m = maxTokensIgnored([asked(req(Array(871).fill(1), undefined, 'usage'), 64), asked(req(Array(64).fill(1), undefined, 'usage'), 64), asked(req(Array(100).fill(1), undefined, 'chunks'), 64)]);
    expect(m).toEqual({ requests: 2, of: 3, example: { tokens: 871, asked: 64 } });
  });

  it('at the cap is no overrun; a local tokenizer gets its few tokens of slack; a larger final usage counts; no cap, no check', () => {
    expect(maxTokensIgnored([asked(req(Array(64).fill(1), undefined, 'usage'), 64)])).toBeUndefined();
    expect(maxTokensIgnored([asked(req([33, 33], undefined, 'local-tokenizer'), 64)])).toBeUndefined();
    expect(maxTokensIgnored([asked(req([40, 40], undefined, 'local-tokenizer'), 64)])?.requests).toBe(1);
    expect(maxTokensIgnored([asked(req([10], 200, 'chunks'), 64)])).toEqual({ requests: 1, of: 1, example: { tokens: 200, asked: 64 } });
    expect(maxTokensIgnored([req(Array(871).fill(1), undefined, 'usage')])).toBeUndefined();
  });
});
