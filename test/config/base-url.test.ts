import { describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { baseUrlOf } from '../../src/config/names.js';
import { splitBaseUrl } from '../../src/client/base-url.js';

describe('the base URL (issue 19: a base URL is a base URL)', () => {
  test('a gateway path prefix is kept; trailing slashes dropped', () => {
    expect(baseUrlOf('https://gw.example/api/')).toEqual({ url: 'https://gw.example/api' });
    expect(splitBaseUrl('https://gw.example/api')).toEqual({ origin: 'https://gw.example', pathPrefix: '/api' });
    expect(splitBaseUrl('http://127.0.0.1:8000')).toEqual({ origin: 'http://127.0.0.1:8000', pathPrefix: '' });
  });

  test('a trailing /v1 is understood and said once, never doubled', () => {
    const r = baseUrlOf('http://127.0.0.1:8000/v1');
    expect(r?.url).toBe('http://127.0.0.1:8000');
    expect(r?.note).toMatch(/ends in \/v1, so the base URL is http:\/\/127\.0\.0\.1:8000 /);
    expect(baseUrlOf('https://gw.example/api/v1/')?.url).toBe('https://gw.example/api');
    const cfg = resolveSuite({}, { LLM_BENCH_URL: 'https://gw.example/openai/v1' });
    expect(cfg.target.url).toBe('https://gw.example/openai');
    expect(cfg.target.urlNote).toContain('https://gw.example/openai');
    expect(resolveSuite({}, { LLM_BENCH_URL: 'https://gw.example/openai' }).target.urlNote).toBeUndefined();
  });

  test('credentials in the URL never reach the note; a query is refused with the fix', () => {
    expect(baseUrlOf('https://user:s3cret@gw.example/v1')?.note).not.toContain('s3cret');
    expect(() => baseUrlOf('https://gw.example/api?key=1')).toThrow(/must not carry a query or fragment; give the base URL only/);
  });
});
