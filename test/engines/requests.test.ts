import { describe, expect, test } from 'vitest';
import { getAdapter } from '../../src/engines/detect.js';
import type { RequestSpec } from '../../src/shapes/engine.js';

const spec = (over: Partial<RequestSpec> = {}): RequestSpec => ({
  model: 'm',
  endpoint: 'chat',
  prompt: 'Hello',
  maxTokens: 128,
  forceLength: true,
  ...over,
});

describe('buildStreamRequest', () => {
  test('generic OpenAI: standard fields only, no ignore_eos even when forced', () => {
    const a = getAdapter('openai');
    expect(a.endsWithDone).toBe(true);
    expect(a.buildStreamRequest(spec())).toEqual({
      path: '/v1/chat/completions',
      body: { model: 'm', max_tokens: 128, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello' }] },
    });
    expect(a.buildStreamRequest(spec({ endpoint: 'completions' }))).toEqual({
      path: '/v1/completions',
      body: { model: 'm', max_tokens: 128, stream: true, stream_options: { include_usage: true }, prompt: 'Hello' },
    });
  });

  test('a workload request\'s messages go to the chat endpoint as given, on every adapter; completions send the prompt text', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'More?' },
    ] as const;
    for (const kind of ['openai', 'vllm', 'sglang', 'llamacpp', 'tgi', 'trtllm', 'ollama'] as const) {
      const a = getAdapter(kind);
      expect(a.buildStreamRequest(spec({ messages: [...messages] })).body.messages, kind).toEqual(messages);
      const completions = a.buildStreamRequest(spec({ endpoint: 'completions', prompt: 'rendered', messages: [...messages] })).body;
      expect(completions.prompt, kind).toBe('rendered');
      expect(completions.messages, kind).toBeUndefined();
    }
  });

  for (const kind of ['vllm', 'sglang'] as const) {
    test(`${kind}: ignore_eos when forced, continuous usage`, () => {
      const a = getAdapter(kind);
      expect(a.kind).toBe(kind);
      const chat = a.buildStreamRequest(spec());
      expect(chat.path).toBe('/v1/chat/completions');
      expect(chat.body).toEqual({
        model: 'm',
        max_tokens: 128,
        stream: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
        ignore_eos: true,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      const comp = a.buildStreamRequest(spec({ endpoint: 'completions', forceLength: false, maxTokens: 1 }));
      expect(comp.path).toBe('/v1/completions');
      expect(comp.body).toEqual({
        model: 'm',
        max_tokens: 1,
        stream: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
        prompt: 'Hello',
      });
    });
  }

  test('every engine kind has an adapter of that kind; an unknown kind names the valid ones', () => {
    for (const kind of ['vllm', 'sglang', 'openai', 'llamacpp', 'tgi', 'trtllm', 'ollama'] as const) {
      expect(getAdapter(kind).kind).toBe(kind);
    }
    expect(() => getAdapter('nope' as never)).toThrow(/unknown; use one of vllm, sglang, openai, llamacpp, tgi, trtllm, ollama/);
  });
});

describe('forcesLength follows what the adapter sends', () => {
  test('ignore_eos senders force the length; the generic adapter, TGI and Ollama do not', () => {
    const forced = Object.fromEntries((['vllm', 'sglang', 'llamacpp', 'trtllm', 'tgi', 'ollama', 'openai'] as const).map((k) => [k, getAdapter(k).forcesLength]));
    expect(forced).toEqual({ vllm: true, sglang: true, llamacpp: true, trtllm: true, tgi: false, ollama: false, openai: false });
  });
});
