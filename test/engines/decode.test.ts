import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { decodeOpenAIChunk } from '../../src/engines/openai.js';
import { getAdapter } from '../../src/engines/detect.js';
import type { DecodedChunk } from '../../src/shapes/engine.js';

const fixtures = JSON.parse(readFileSync(new URL('../fixtures/engines/chunks.json', import.meta.url), 'utf8')) as Record<
  string,
  { payload: unknown; expected: DecodedChunk }
>;

describe('decodeChunk over engine chunk shapes (ENGINES.md)', () => {
  for (const [name, { payload, expected }] of Object.entries(fixtures)) {
    test(name, () => {
      expect(decodeOpenAIChunk(payload)).toEqual(expected);
    });
  }

  test('every supported adapter decodes the same way', () => {
    for (const kind of ['openai', 'vllm', 'sglang'] as const) {
      const adapter = getAdapter(kind);
      for (const { payload, expected } of Object.values(fixtures)) expect(adapter.decodeChunk(payload)).toEqual(expected);
    }
  });

  test('never throws on hostile input', () => {
    const hostile: unknown[] = [undefined, 0, true, { choices: [null] }, { choices: [{ delta: 5 }] }, { usage: { prompt_tokens: 'x' } }, { error: null }, { error: 42 }];
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    hostile.push(cyclic);
    for (const p of hostile) expect(() => decodeOpenAIChunk(p)).not.toThrow();
    expect(decodeOpenAIChunk({ error: 42 }).error).toEqual({ message: '42' });
  });

  test('usage with numeric strings is read; token_ids at the top level count', () => {
    const d = decodeOpenAIChunk({ choices: [{ delta: { content: 'a' } }], token_ids: [1, 2, 3], usage: { completion_tokens: '5' } });
    expect(d).toEqual({ hasText: true, reasoning: false, text: 'a', tokenCount: 3, usage: { completionTokens: 5 } });
  });

  test('finish_reason null, the string "null" and "" are no finish reason, in every adapter that decodes chunks', () => {
    const chunk = (finish: unknown) => ({ choices: [{ index: 0, delta: { content: 'a' }, finish_reason: finish }] });
    for (const kind of ['openai', 'vllm', 'sglang', 'llamacpp', 'tgi', 'trtllm', 'ollama'] as const) {
      const adapter = getAdapter(kind);
      for (const none of [null, 'null', '', undefined, 0]) expect(adapter.decodeChunk(chunk(none)).finishReason, `${kind} ${JSON.stringify(none)}`).toBeUndefined();
      expect(adapter.decodeChunk(chunk('length')).finishReason, kind).toBe('length');
      expect(adapter.decodeChunk(chunk('stop')).finishReason, kind).toBe('stop');
    }
  });
});
