import { describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { readEnvOverrides } from '../../src/config/env.js';

describe('LLM_BENCH_* overrides', () => {
  test('lists accept K sizes and plain numbers', () => {
    const o = readEnvOverrides({ LLM_BENCH_CONTEXTS: '0, 8K,65536', LLM_BENCH_CONCURRENCY: '1,4,16', LLM_BENCH_PREFILL: 'none' });
    expect(o.contexts).toEqual([0, 8192, 65536]);
    expect(o.concurrency).toEqual([1, 4, 16]);
    expect(o.prefill).toEqual([]);
  });

  test.each([
    ['LLM_BENCH_CONTEXTS', '8K,lots', 'LLM_BENCH_CONTEXTS: "lots" is not a token count'],
    ['LLM_BENCH_CONCURRENCY', '0', 'LLM_BENCH_CONCURRENCY: "0" is not a positive whole number; e.g. LLM_BENCH_CONCURRENCY=1,4,16'],
    ['LLM_BENCH_DURATION_S', '-3', 'LLM_BENCH_DURATION_S: "-3" must be a positive number; e.g. LLM_BENCH_DURATION_S=30'],
    ['LLM_BENCH_MAX_TOKENS', '1.5', 'LLM_BENCH_MAX_TOKENS: "1.5" must be a positive whole number'],
    ['LLM_BENCH_URL', 'localhost:8000', 'LLM_BENCH_URL must start with http:// or https://'],
    ['LLM_BENCH_URL', 'not a url', 'LLM_BENCH_URL: "not a url" is not a URL'],
    ['LLM_BENCH_ENDPOINT', 'responses', 'LLM_BENCH_ENDPOINT: "responses" must be chat or completions'],
    ['LLM_BENCH_PREFILL', '0', 'LLM_BENCH_PREFILL: prefill contexts must be above 0'],
  ])('%s=%s is rejected with a message naming it', (name, value, message) => {
    expect(() => readEnvOverrides({ [name]: value })).toThrow(message);
  });
});

describe('resolveSuite', () => {
  test('no URL: the simulator with its reference matrix and a short window', () => {
    const r = resolveSuite({}, {});
    expect(r.simulated).toBe(true);
    expect(r.simProfile).toBe('sglang-h200');
    expect(r.matrix.contexts).toEqual([8192, 16384, 32768, 65536, 125952]);
    expect(r.matrix.concurrency).toEqual([1, 2, 4, 8, 16, 32, 64, 128]);
    expect(r.matrix.maxOutputTokens).toBe(4096);
    expect(r.matrix.windowS).toBe(5);
    expect(r.thresholdsPath).toBe('thresholds/sim-sglang-h200.json');
  });

  test.each([
    // [what, suite, env, cores, allowed, with a reason]
    ['the embedded simulator on 2 cores: Client-limited shown, not failing', {}, {}, 2, true, true],
    ['the embedded simulator on 4 cores: failing, as everywhere', {}, {}, 4, false, false],
    ['a real server on 2 cores: failing', {}, { LLM_BENCH_URL: 'http://127.0.0.1:8000' }, 2, false, false],
    ['the suite says false: failing on 2 cores too', { allowClientLimited: false }, {}, 2, false, false],
    ['the suite says true: allowed, no reason needed', { allowClientLimited: true }, { LLM_BENCH_URL: 'http://127.0.0.1:8000' }, 8, true, false],
  ] as const)('allowClientLimited, %s', (_what, suite, env, cores, allowed, why) => {
    const r = resolveSuite(suite, env, { cores });
    expect(r.allowClientLimited).toBe(allowed);
    if (why) {
      expect(r.allowClientLimitedWhy).toContain(`this machine's ${cores} cores`);
      expect(r.allowClientLimitedWhy).toContain('allowClientLimited: false');
    } else {
      expect(r.allowClientLimitedWhy).toBeUndefined();
    }
  });

  test('a URL: METHOD.md defaults (30 s window), env wins over the suite, sorted unique lists', () => {
    const r = resolveSuite(
      { target: { url: 'http://127.0.0.1:8000/', model: 'm' }, matrix: { contexts: [8192, 0, 8192], concurrency: [4, 1] } },
      { LLM_BENCH_MODEL: 'from-env', LLM_BENCH_API_KEY: 'sk-secret' },
    );
    expect(r.simulated).toBe(false);
    expect(r.target.url).toBe('http://127.0.0.1:8000');
    expect(r.target.model).toBe('from-env');
    expect(r.target.apiKey).toBe('sk-secret');
    expect(r.matrix).toMatchObject({ contexts: [0, 8192], concurrency: [1, 4], windowS: 30, maxOutputTokens: 4096 });
  });

  test('a partial matrix: each absent field from the simulator profile or the default matrix', () => {
    // only windowS: the rest of the reference run of the profile, or of a server
    const sim = resolveSuite({ matrix: { windowS: 12 } }, {});
    const simFull = resolveSuite({}, {});
    expect(sim.matrix).toEqual({ ...simFull.matrix, windowS: 12 });
    const tiny = resolveSuite({ target: { simProfile: 'tiny' }, matrix: { concurrency: [2, 1] } }, {});
    expect(tiny.matrix).toEqual({ contexts: [0, 1024, 4096], concurrency: [1, 2], prefill: [1024, 4096], windowS: 5, maxOutputTokens: 256 });
    const url = { url: 'http://127.0.0.1:8000' };
    expect(resolveSuite({ target: url, matrix: { windowS: 12 } }, {}).matrix).toEqual({
      contexts: [0, 8192, 32768],
      concurrency: [1, 2, 4, 8, 16],
      prefill: [8192, 32768],
      windowS: 12,
      maxOutputTokens: 4096,
    });
    expect(resolveSuite({ target: url, matrix: { maxOutputTokens: 64 } }, {}).matrix.maxOutputTokens).toBe(64);
    // the user's rows: no prefill rows of the base's unless asked for
    expect(resolveSuite({ target: url, matrix: { contexts: [0] } }, {}).matrix).toMatchObject({ contexts: [0], concurrency: [1, 2, 4, 8, 16], prefill: [] });
    expect(resolveSuite({ target: url, matrix: { contexts: [0], prefill: [1024] } }, {}).matrix.prefill).toEqual([1024]);
    expect(resolveSuite({ target: url, matrix: { prefill: [] } }, {}).matrix).toMatchObject({ contexts: [0, 8192, 32768], prefill: [] });
    // rows chosen in the environment too: the tiny profile's 4K prefill row does not run beside rows 0 and 1K
    expect(resolveSuite({ target: { simProfile: 'tiny' } }, { LLM_BENCH_CONTEXTS: '0,1K' }).matrix).toMatchObject({ contexts: [0, 1024], prefill: [] });
    expect(resolveSuite({ target: { simProfile: 'tiny' } }, { LLM_BENCH_CONTEXTS: '0,1K', LLM_BENCH_PREFILL: '1K' }).matrix.prefill).toEqual([1024]);
    expect(resolveSuite({ target: url }, { LLM_BENCH_CONCURRENCY: '1' }).matrix.prefill).toEqual([8192, 32768]);
    // the environment still wins, field by field
    expect(resolveSuite({ target: url, matrix: { windowS: 12 } }, { LLM_BENCH_DURATION_S: '3', LLM_BENCH_CONCURRENCY: '4' }).matrix).toMatchObject({
      windowS: 3,
      concurrency: [4],
      contexts: [0, 8192, 32768],
    });
    // a given field is still checked
    expect(() => resolveSuite({ matrix: { concurrency: [] } }, {})).toThrow(/matrix\.concurrency[\s\S]*needs at least one level/);
    expect(() => resolveSuite({ matrix: { windowS: 0 } }, {})).toThrow(/matrix\.windowS/);
    expect(() => resolveSuite({ matrix: { windowS: 0.5 } }, {})).toThrow(/matrix\.windowS[\s\S]*at least 1 s, the shortest window that measures anything/);
    expect(resolveSuite({ matrix: { windowS: 1 } }, {}).matrix.windowS).toBe(1);
  });

  test('a bad suite names the field and the fix', () => {
    expect(() => resolveSuite({ matrix: { contexts: [], concurrency: [1] } }, {})).toThrow(/matrix\.contexts[\s\S]*needs at least one context/);
    expect(() => resolveSuite({ target: { url: 'ftp://x' } }, {})).toThrow(/target\.url[\s\S]*http\(s\) URL/);
    expect(() => resolveSuite({ target: { nope: 1 } } as never, {})).toThrow(/nope/);
  });

  test('LLM_BENCH_ENGINE must name a known engine', () => {
    expect(() => resolveSuite({}, { LLM_BENCH_ENGINE: 'foo' })).toThrow('LLM_BENCH_ENGINE: "foo" is not an engine name; use one of vllm, sglang');
    // the engines' other spellings, and typos, name the one meant (in the suite too)
    expect(() => resolveSuite({}, { LLM_BENCH_ENGINE: 'llama.cpp' })).toThrow(/LLM_BENCH_ENGINE: "llama.cpp" is not an engine name; .*, or leave it out \(the engine is detected\); did you mean "llamacpp"\?$/);
    expect(() => resolveSuite({ target: { engine: 'TensorRT-LLM' as never } }, {})).toThrow('target.engine: "TensorRT-LLM" is not an engine name; use one of vllm, sglang, openai, llamacpp, tgi, trtllm, ollama, or leave it out (the engine is detected); did you mean "trtllm"?');
    expect(() => resolveSuite({ target: { engine: 'vlm' as never } }, {})).toThrow('did you mean "vllm"?');
    expect(() => resolveSuite({}, { LLM_BENCH_ENGINE: 'foo' })).not.toThrow(/did you mean/);
    // a CPU server: gpuCount 0 says how to write it
    expect(() => resolveSuite({ target: { hardware: { gpuCount: 0 } } }, {})).toThrow('target.hardware.gpuCount: must be 1 or more; for a server without a GPU leave gpu and gpuCount out');
  });
});

describe('unknown LLM_BENCH_* variables (issue 19)', () => {
  test('a typo names the nearest variable', () => {
    expect(() => readEnvOverrides({ LLM_BENCH_CONCURENCY: '4' })).toThrow(/LLM_BENCH_CONCURENCY: did you mean LLM_BENCH_CONCURRENCY\?/);
    expect(() => readEnvOverrides({ LLM_BENCH_DURATION: '4' })).toThrow(/LLM_BENCH_DURATION: did you mean LLM_BENCH_DURATION_S\?/);
    expect(() => readEnvOverrides({ LLM_BENCH_CONTEXT: '8K', LLM_BENCH_TOKENISER: 'x' })).toThrow(
      /unknown LLM_BENCH_\* variables[\s\S]*LLM_BENCH_CONTEXT: did you mean LLM_BENCH_CONTEXTS\?[\s\S]*LLM_BENCH_TOKENISER: did you mean LLM_BENCH_TOKENIZER\?/,
    );
  });

  test('a name far from every variable is named as unknown; known and other variables pass', () => {
    expect(() => readEnvOverrides({ LLM_BENCH_ZZZZZZZZZZZZZZZZ: '1' })).toThrow(/LLM_BENCH_ZZZZZZZZZZZZZZZZ: not a variable of llm-speed-matrix/);
    expect(() => readEnvOverrides({ LLM_BENCH_CONCURRENCY: '4', LLM_BENCH_QUIET: '1', LLM_BENCH_REAL_URL: 'http://127.0.0.1:1', LLMBENCH: 'x', HOME: '/root' })).not.toThrow();
  });
});
