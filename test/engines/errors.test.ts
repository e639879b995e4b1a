import { describe, expect, test } from 'vitest';
import { parseErrorBody, MAX_ERROR_TEXT_CHARS } from '../../src/engines/errors.js';

describe('parseErrorBody (ENGINES.md §7.2)', () => {
  test('nested OpenAI (vLLM)', () => {
    const body = JSON.stringify({
      error: { message: "This model's maximum context length is 4096 tokens.", type: 'BadRequestError', param: 'input_tokens', code: 400 },
    });
    expect(parseErrorBody(400, body)).toEqual({
      message: "This model's maximum context length is 4096 tokens.",
      type: 'BadRequestError',
      param: 'input_tokens',
      code: 400,
    });
  });
  test('flat object:error (older vLLM/SGLang, TRT-LLM)', () => {
    const body = JSON.stringify({ object: 'error', message: 'The request queue is full.', type: 'ServiceUnavailable', param: null, code: 503 });
    expect(parseErrorBody(503, body)).toEqual({ message: 'The request queue is full.', type: 'ServiceUnavailable', code: 503 });
  });
  test('llama.cpp', () => {
    const body = JSON.stringify({ error: { code: 400, message: 'the request exceeds the available context size', type: 'exceed_context_size_error', n_prompt_tokens: 5000, n_ctx: 4096 } });
    expect(parseErrorBody(400, body)).toEqual({ message: 'the request exceeds the available context size', type: 'exceed_context_size_error', code: 400 });
  });
  test('TGI', () => {
    expect(parseErrorBody(429, '{"error":"Model is overloaded","error_type":"overloaded"}')).toEqual({ message: 'Model is overloaded', type: 'overloaded' });
  });
  test('Ollama with code null and param null', () => {
    const body = '{"error":{"message":"model \\"x\\" not found","type":"not_found_error","param":null,"code":null}}';
    expect(parseErrorBody(404, body)).toEqual({ message: 'model "x" not found', type: 'not_found_error' });
  });
  test('string codes are kept', () => {
    expect(parseErrorBody(400, '{"error":{"message":"bad","code":"context_length_exceeded"}}').code).toBe('context_length_exceeded');
  });
  test('FastAPI detail', () => {
    expect(parseErrorBody(404, '{"detail":"Not Found"}')).toEqual({ message: 'Not Found' });
  });
  test('non-JSON text, empty body, JSON without message, long text', () => {
    expect(parseErrorBody(502, '  Bad Gateway\n')).toEqual({ message: 'Bad Gateway' });
    expect(parseErrorBody(500, '')).toEqual({ message: 'HTTP 500 with an empty body' });
    expect(parseErrorBody(500, '{"foo":1}')).toEqual({ message: '{"foo":1}' });
    expect(parseErrorBody(500, '{broken')).toEqual({ message: '{broken' });
    const long = parseErrorBody(500, 'x'.repeat(2000)).message;
    expect(long.length).toBe(MAX_ERROR_TEXT_CHARS + 1);
  });
});
