import { describe, expect, test } from 'vitest';
import type { ServerFacts } from '../../src/shapes/engine.js';
import { argsAsFlags, launchCommandFrom, redactFacts, redactRecord } from '../../src/meta/launch.js';

const facts = (launchArgs?: Record<string, unknown>, source = 'GET /get_server_info'): ServerFacts => ({
  engine: { value: 'sglang', source: 'x' },
  model: { value: 'm', source: 'x' },
  ...(launchArgs ? { launchArgs: { value: launchArgs, source } } : {}),
});

describe('launch command', () => {
  test('the config wins and is redacted: flags, env assignments, the API key value anywhere', () => {
    const cmd = 'HF_TOKEN=hf_SECRETabc docker run -e OPENAI_API_KEY=sk-SECRETdef img --api-key sk-SECRET123 --max-num-batched-tokens 8192 --note sk-SECRET123';
    const out = launchCommandFrom(cmd, facts({ api_key: 'x' }), ['sk-SECRET123'])!;
    expect(out).not.toMatch(/SECRET/);
    expect(out).toContain('HF_TOKEN=<redacted>');
    expect(out).toContain('--api-key <redacted>');
    expect(out).toContain('--max-num-batched-tokens 8192');
  });

  test('from SGLang server args: flags, secrets redacted, nulls and objects skipped', () => {
    const out = launchCommandFrom(undefined, facts({ model_path: 'org/m', tp_size: 2, api_key: 'sk-SECRET', hf_token: 'hf_SECRET', enable_metrics: true, disable_radix_cache: false, nested: { a: 1 }, admin_api_key: null }))!;
    expect(out).toBe('# server arguments reported by GET /get_server_info\n--model-path org/m --tp-size 2 --api-key <redacted> --hf-token <redacted> --enable-metrics --a 1');
  });

  test("from vLLM's nested vllm_config: scalars of each sub-config", () => {
    const flags = argsAsFlags({ model_config: { model: 'org/m', max_model_len: 4096 }, scheduler_config: { max_num_seqs: 16 }, cache_config: { block_size: 64 } });
    expect(flags).toEqual(['--model org/m', '--max-model-len 4096', '--max-num-seqs 16', '--block-size 64']);
  });

  test('nothing from either: undefined', () => {
    expect(launchCommandFrom(undefined, facts())).toBeUndefined();
    expect(launchCommandFrom('  ', facts({}))).toBeUndefined();
  });
});

describe('stored launch args', () => {
  test('secret-named keys and secret values are redacted deep inside; the rest is kept', () => {
    const value = { api_key: 'sk-SECRET', nested: { HF_TOKEN: 'hf_SECRET', list: ['--api-key sk-SECRET2', 'x'] }, note: 'key is sk-KNOWN99', max_num_batched_tokens: 8192, tokenizer: 'org/tok', api_key_unset: null };
    const out = redactRecord(value, ['sk-KNOWN99']);
    expect(JSON.stringify(out)).not.toMatch(/SECRET|KNOWN99/);
    expect(out).toMatchObject({ api_key: '<redacted>', nested: { HF_TOKEN: '<redacted>', list: ['--api-key <redacted>', 'x'] }, max_num_batched_tokens: 8192, tokenizer: 'org/tok', api_key_unset: null });
    const f = redactFacts(facts(value), []);
    expect(f.launchArgs?.source).toBe('GET /get_server_info');
    expect(JSON.stringify(f)).not.toContain('sk-SECRET');
    expect(value.api_key).toBe('sk-SECRET'); // the input is not changed
  });
});
