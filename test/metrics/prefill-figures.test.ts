import { describe, expect, it } from 'vitest';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { prefillFigures } from '../../src/metrics/prefill-figures.js';
import { TokenCounter } from '../../src/client/token-count.js';
import { decodeOpenAIChunk } from '../../src/engines/openai.js';

describe('prefillFigures', () => {
  const base = (over: Partial<RequestTimeline> = {}): RequestTimeline => ({
    id: 'p',
    sendMs: 1000,
    firstTokenMs: 1500,
    chunkMs: [1500],
    chunkTokens: [1],
    tokenSource: 'chunks',
    reasoningTokens: 0,
    promptTokens: 8192,
    end: { kind: 'done', atMs: 1501 },
    ...over,
  });
  it('prompt tokens / TTFT', () => {
    expect(prefillFigures(base())).toEqual({ promptTokens: 8192, ttftMs: 500, promptTokensPerSecond: 16384 });
    expect(prefillFigures(base({ sentHeadersMs: 1100 }), 'sent-headers')!.ttftMs).toBe(400);
  });
  it('is undefined without usage, first token, or when the request failed', () => {
    expect(prefillFigures(base({ promptTokens: undefined }))).toBeUndefined();
    expect(prefillFigures(base({ firstTokenMs: undefined }))).toBeUndefined();
    expect(prefillFigures(base({ end: { kind: 'error', atMs: 2000, code: 'no-done', message: 'x' } }))).toBeUndefined();
    expect(prefillFigures(base({ firstTokenMs: 1000 }))).toBeUndefined();
  });
});

describe('prefill of a reasoning model: the only token is swallowed by the reasoning parser', () => {
  const timeline = (): RequestTimeline => ({
    id: 'p',
    sendMs: 1000,
    chunkMs: [],
    chunkTokens: [],
    tokenSource: 'chunks',
    reasoningTokens: 0,
  });

  it('TTFT falls back to the first chunk whose usage reports a generated token', () => {
    const t = timeline();
    const counter = new TokenCounter(t);
    // role chunk, then an empty delta that finishes the request with its usage (continuous usage on)
    counter.add(decodeOpenAIChunk({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }], usage: { prompt_tokens: 8192, completion_tokens: 0 } }), 1500);
    counter.add(decodeOpenAIChunk({ choices: [{ index: 0, delta: {}, finish_reason: 'length' }], usage: { prompt_tokens: 8192, completion_tokens: 1 } }), 1800);
    t.end = { kind: 'done', atMs: 1801 };
    expect(t.firstTokenMs).toBeUndefined();
    expect(t.firstOutputMs).toBe(1800);
    expect(prefillFigures(t)).toEqual({ promptTokens: 8192, ttftMs: 800, promptTokensPerSecond: 8192 / 0.8 });
  });

  it('a text chunk still wins when there is one', () => {
    const t = timeline();
    const counter = new TokenCounter(t);
    counter.add(decodeOpenAIChunk({ choices: [{ index: 0, delta: { content: 'Hi' } }] }), 1300);
    counter.add(decodeOpenAIChunk({ choices: [], usage: { prompt_tokens: 100, completion_tokens: 1 } }), 1400);
    t.end = { kind: 'done', atMs: 1401 };
    expect(prefillFigures(t)?.ttftMs).toBe(300);
  });
});


