import { describe, expect, test } from 'vitest';
import { prefixCacheFigures, prefixFromCounters, prefixFromProcessed, prefixFromUsage, type PrefixCacheInput } from '../../src/metrics/prefix-cache.js';
import type { MetricsSample, ServerRequestTimings } from '../../src/shapes/engine.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';

/** a finished request whose first token came at `firstMs` */
function req(id: string, firstMs: number | undefined, usage: { prompt?: number; cached?: number } = {}): RequestTimeline {
  const t: RequestTimeline = { id, sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'usage', reasoningTokens: 0 };
  if (firstMs !== undefined) t.firstTokenMs = firstMs;
  if (usage.prompt !== undefined) t.promptTokens = usage.prompt;
  if (usage.cached !== undefined) t.cachedTokens = usage.cached;
  return t;
}

const base = (over: Partial<PrefixCacheInput>): PrefixCacheInput => ({ samples: [], timelines: [], windowStartMs: 1000, windowEndMs: 3000, ...over });

describe('server counters (vLLM hits/queries, SGLang cached/prompt)', () => {
  const samples: MetricsSample[] = [
    { atMs: 1010, cachedTokensTotal: 1000, prefixQueriedTokensTotal: 4000 },
    { atMs: 1500, cachedTokensTotal: 1600, prefixQueriedTokensTotal: 5000 },
    { atMs: 2990, cachedTokensTotal: 4000, prefixQueriedTokensTotal: 8000 },
  ];

  test('the growth between the first and the last sample', () => {
    expect(prefixFromCounters(samples)).toEqual({ hitRate: 0.75, hitTokens: 3000, queriedTokens: 4000, source: 'server-counters' });
  });

  test('samples without the pair are skipped; fewer than two that carry it say nothing', () => {
    const mixed: MetricsSample[] = [{ atMs: 1000, running: 2 }, ...samples, { atMs: 2995, cachedTokensTotal: 9999 }];
    expect(prefixFromCounters(mixed)?.hitTokens).toBe(3000);
    expect(prefixFromCounters([samples[0]!])).toBeUndefined();
    expect(prefixFromCounters([{ atMs: 1, cachedTokensTotal: 1 }, { atMs: 2, cachedTokensTotal: 5 }])).toBeUndefined();
  });

  test('a counter that goes down inside the window (a restart) is a reset, not a negative rate', () => {
    const reset: MetricsSample[] = [samples[0]!, { atMs: 1500, cachedTokensTotal: 10, prefixQueriedTokensTotal: 20 }, samples[2]!];
    expect(prefixFromCounters(reset)).toBeUndefined();
    // even when the last value is above the first: the span is broken
    const dip: MetricsSample[] = [samples[0]!, { atMs: 1500, cachedTokensTotal: 1600, prefixQueriedTokensTotal: 3000 }, samples[2]!];
    expect(prefixFromCounters(dip)).toBeUndefined();
  });

  test('nothing queried, or more hits than queries, says nothing', () => {
    expect(prefixFromCounters([samples[0]!, { ...samples[0]!, atMs: 2000 }])).toBeUndefined();
    expect(prefixFromCounters([samples[0]!, { atMs: 2000, cachedTokensTotal: 3000, prefixQueriedTokensTotal: 5000 }])).toBeUndefined();
  });

  test('a cold cache is a rate of 0, not undefined', () => {
    expect(prefixFromCounters([{ atMs: 1, cachedTokensTotal: 0, prefixQueriedTokensTotal: 0 }, { atMs: 2, cachedTokensTotal: 0, prefixQueriedTokensTotal: 800 }])?.hitRate).toBe(0);
  });

  test('preferred over the requests\' usage', () => {
    const timelines = [req('a', 1200, { prompt: 100, cached: 0 })];
    expect(prefixCacheFigures(base({ samples, timelines }))?.source).toBe('server-counters');
  });
});

describe('processed tokens (llama.cpp)', () => {
  const timings = new Map<string, ServerRequestTimings>([
    ['a', { promptN: 1, predictedN: 16 }],
    ['b', { promptN: 40, predictedN: 16 }],
    ['c', { promptN: 100, predictedN: 16 }],
    ['early', { promptN: 100 }],
  ]);

  test('per request: prompt tokens sent minus timings.prompt_n, over the requests whose first token is in the window', () => {
    const timelines = [
      req('a', 1100, { prompt: 100 }),
      req('b', 2000, { prompt: 100 }),
      req('c', 3000, { prompt: 100 }),
      // first token before the window opened: not this window's
      req('early', 900, { prompt: 100 }),
      // aborted at the window's end: no final chunk, no timings
      req('cut', 2900, { prompt: 100 }),
    ];
    const f = prefixFromProcessed(base({ timelines, serverTimings: timings }));
    expect(f).toEqual({ hitRate: (99 + 60 + 0) / 300, hitTokens: 159, queriedTokens: 300, source: 'processed-tokens' });
  });

  test('a request whose timings say more processed than sent counts as no hit', () => {
    const f = prefixFromProcessed(base({ timelines: [req('c', 1500, { prompt: 50 })], serverTimings: timings }));
    expect(f).toMatchObject({ hitTokens: 0, queriedTokens: 50, hitRate: 0 });
  });

  const counterSamples: MetricsSample[] = [
    { atMs: 1000, promptTokensProcessedTotal: 5000 },
    { atMs: 2000, promptTokensProcessedTotal: 5100 },
    { atMs: 2900, promptTokensProcessedTotal: 5150 },
  ];

  test('without timings: the prompt tokens of the requests prefilled between the samples minus the processed counter', () => {
    const timelines = [
      req('x', 1000, { prompt: 500 }), // at the first sample: already counted in it
      req('y', 1500, { prompt: 100 }),
      req('z', 2900, { prompt: 100 }),
      req('later', 2950, { prompt: 100 }), // after the last sample
    ];
    expect(prefixFromProcessed(base({ samples: counterSamples, timelines }))).toEqual({ hitRate: 0.25, hitTokens: 50, queriedTokens: 200, source: 'processed-tokens' });
  });

  test('without timings: one request in the span without its usage makes the sum unknown', () => {
    const timelines = [req('y', 1500, { prompt: 100 }), req('cut', 2500)];
    expect(prefixFromProcessed(base({ samples: counterSamples, timelines }))).toBeUndefined();
  });

  test('without timings: a reset processed counter says nothing; more processed than sent is a rate of 0', () => {
    const reset: MetricsSample[] = [counterSamples[0]!, { atMs: 2900, promptTokensProcessedTotal: 10 }];
    expect(prefixFromProcessed(base({ samples: reset, timelines: [req('y', 1500, { prompt: 100 })] }))).toBeUndefined();
    const over = prefixFromProcessed(base({ samples: counterSamples, timelines: [req('y', 1500, { prompt: 100 })] }));
    expect(over).toMatchObject({ hitTokens: 0, queriedTokens: 100, hitRate: 0 });
  });

  test('preferred over usage; second to server counters', () => {
    const timelines = [req('b', 2000, { prompt: 100, cached: 0 })];
    expect(prefixCacheFigures(base({ timelines, serverTimings: timings }))?.source).toBe('processed-tokens');
    expect(prefixCacheFigures(base({ timelines, serverTimings: timings }))?.hitRate).toBeCloseTo(0.6, 12);
    const counters: MetricsSample[] = [
      { atMs: 1000, cachedTokensTotal: 0, prefixQueriedTokensTotal: 0 },
      { atMs: 2000, cachedTokensTotal: 10, prefixQueriedTokensTotal: 100 },
    ];
    expect(prefixCacheFigures(base({ samples: counters, timelines, serverTimings: timings }))?.source).toBe('server-counters');
  });
});

describe('usage (cached_tokens per request)', () => {
  test('Σ cached / Σ prompt over the window\'s requests that carry both', () => {
    const timelines = [
      req('a', 1200, { prompt: 400, cached: 300 }),
      req('b', 2500, { prompt: 400, cached: 100 }),
      req('no-cached', 2500, { prompt: 400 }),
      req('outside', 3100, { prompt: 400, cached: 400 }),
      req('no-token', undefined, { prompt: 400, cached: 400 }),
    ];
    expect(prefixFromUsage(base({ timelines }))).toEqual({ hitRate: 0.5, hitTokens: 400, queriedTokens: 800, source: 'usage' });
  });

  test('cached above prompt is capped at the prompt', () => {
    expect(prefixFromUsage(base({ timelines: [req('a', 1200, { prompt: 100, cached: 120 })] }))?.hitRate).toBe(1);
  });
});

describe('nothing says', () => {
  test('no samples, no timings, no usage: undefined', () => {
    expect(prefixCacheFigures(base({ timelines: [req('a', 1200, { prompt: 100 })], samples: [{ atMs: 1100, running: 1 }] }))).toBeUndefined();
    expect(prefixCacheFigures(base({}))).toBeUndefined();
  });

  test('a reset server counter falls through to the next source', () => {
    const samples: MetricsSample[] = [
      { atMs: 1100, cachedTokensTotal: 900, prefixQueriedTokensTotal: 1000 },
      { atMs: 2900, cachedTokensTotal: 0, prefixQueriedTokensTotal: 100 },
    ];
    const f = prefixCacheFigures(base({ samples, timelines: [req('a', 1200, { prompt: 100, cached: 25 })] }));
    expect(f).toEqual({ hitRate: 0.25, hitTokens: 25, queriedTokens: 100, source: 'usage' });
  });
});
