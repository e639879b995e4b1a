import { describe, expect, test } from 'vitest';
import { isSecretName, redactSecrets } from '../src/redact.js';

test.each([
  ['--api-key sk-123', '--api-key <redacted>'],
  ['--hf-token=abc', '--hf-token=<redacted>'],
  ['docker run -e HF_TOKEN=abc img', 'docker run -e HF_TOKEN=<redacted> img'],
  ['OPENAI_API_KEY=sk-abc vllm serve m', 'OPENAI_API_KEY=<redacted> vllm serve m'],
  ['--password x --port 8000', '--password <redacted> --port 8000'],
  ['--env=AWS_SECRET_ACCESS_KEY=zzz', '--env=AWS_SECRET_ACCESS_KEY=<redacted>'],
  ['--api-key "two words" --host 0.0.0.0', '--api-key <redacted> --host 0.0.0.0'],
  ["--Admin-Password 'p w'", '--Admin-Password <redacted>'],
  ['--api-key <redacted>', '--api-key <redacted>'],
  ['curl https://user:pa55@host/v1', 'curl https://<redacted>@host/v1'],
  ['-H "Authorization: Bearer sk-xyz"', '-H "Authorization: Bearer <redacted>"'],
  ['--launch-args {"api_key": "sk-1", "port": 8000}', '--launch-args {"api_key": "<redacted>", "port": 8000}'],
])('redacts %s', (input, expected) => {
  expect(redactSecrets(input)).toBe(expected);
});

test('leaves ordinary flags alone, including ones that only contain the letters', () => {
  const text =
    'vllm serve m --port 8000 --max-num-batched-tokens 8192 --tokenizer org/tok --kv-cache-dtype auto --enable-prefix-caching -e VLLM_ALLOW_LONG_MAX_MODEL_LEN=1';
  expect(redactSecrets(text)).toBe(text);
});

test('a secret-named boolean flag followed by another flag keeps the next flag', () => {
  expect(redactSecrets('--use-token --port 8000')).toBe('--use-token --port 8000');
});

test('isSecretName matches words, not substrings', () => {
  expect(isSecretName('HF_TOKEN')).toBe(true);
  expect(isSecretName('--apikey')).toBe(true);
  expect(isSecretName('client_secret_file')).toBe(true);
  expect(isSecretName('--max-num-batched-tokens')).toBe(false);
  expect(isSecretName('--tokenizer-mode')).toBe(false);
  expect(isSecretName('--port')).toBe(false);
});

describe('URL user-info', () => {
  test('redactUrlCredentials: user:password@ and user@ of any scheme', async () => {
    const { redactUrlCredentials } = await import('../src/redact.js');
    expect(redactUrlCredentials('GET http://user:sk-secret-123@127.0.0.1:1/v1/models failed')).toBe('GET http://<redacted>@127.0.0.1:1/v1/models failed');
    expect(redactUrlCredentials('https://token@host/x and wss://a:b@h')).toBe('https://<redacted>@host/x and wss://<redacted>@h');
    expect(redactUrlCredentials('mail me: user@example.com')).toBe('mail me: user@example.com');
  });
  test('redactTarget: the pattern, the password wherever it is echoed, and the API key', async () => {
    const { redactTarget } = await import('../src/engines/http.js');
    const target = { baseUrl: 'http://user:p%40ss-123@127.0.0.1:1', apiKey: 'sk-key-999' };
    expect(redactTarget('probe of http://user:p%40ss-123@127.0.0.1:1: server said p@ss-123 and sk-key-999', target)).toBe(
      'probe of http://<redacted>@127.0.0.1:1: server said <redacted> and <redacted>',
    );
  });
});

test('redactTarget: a raw "@" in the password leaves none of it', async () => {
  const { redactTarget } = await import('../src/engines/http.js');
  const target = { baseUrl: 'http://u:p%40ss-99@127.0.0.1:1' };
  expect(redactTarget('GET http://u:p@ss-99@127.0.0.1:1/v1/models failed', target)).toBe('GET http://<redacted>@127.0.0.1:1/v1/models failed');
});
