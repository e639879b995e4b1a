/** DecodedChunk.text: what a local tokenizer counts (content, reasoning, tool calls, completions text). */
import { describe, expect, it } from 'vitest';
import { decodeOpenAIChunk } from '../../src/engines/openai.js';
import { decodeLlamacppChunk } from '../../src/engines/llamacpp.js';

describe('DecodedChunk.text', () => {
  it('carries content, reasoning, tool-call name and arguments, and completions text', () => {
    expect(decodeOpenAIChunk({ choices: [{ delta: { content: 'Hello ' } }] })).toMatchObject({ hasText: true, reasoning: false, text: 'Hello ' });
    expect(decodeOpenAIChunk({ choices: [{ delta: { reasoning_content: 'hmm ' } }] })).toMatchObject({ reasoning: true, text: 'hmm ' });
    expect(decodeOpenAIChunk({ choices: [{ delta: { reasoning: 'so ' } }] })).toMatchObject({ reasoning: true, text: 'so ' });
    expect(
      decodeOpenAIChunk({ choices: [{ delta: { tool_calls: [{ index: 0, function: { name: 'get', arguments: '{"a":' } }, { index: 1, function: { arguments: '1}' } }] } }] }),
    ).toMatchObject({ hasText: true, text: 'get{"a":1}' });
    expect(decodeOpenAIChunk({ choices: [{ text: 'abc' }] })).toMatchObject({ hasText: true, text: 'abc' });
    expect(decodeLlamacppChunk({ choices: [{ delta: { content: 'x' } }], timings: { predicted_n: 1 } })).toMatchObject({ text: 'x' });
    expect(decodeOpenAIChunk({ choices: [{ delta: { role: 'assistant' } }] }).text).toBeUndefined();
  });
});
