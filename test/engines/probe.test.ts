import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { detectEngine, getAdapter, UNDETECTED_NOTE } from '../../src/engines/detect.js';
import { apiKeyFix, closeControlAgent } from '../../src/engines/http.js';
import { SglangAdapter } from '../../src/engines/sglang.js';
import { unlistedModelWarning } from '../../src/engines/openai.js';
import { startFake, type FakeServer } from './fake-server.js';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/engines/${name}`, import.meta.url), 'utf8');
const words = (s: unknown): number => (typeof s === 'string' ? s.split(/\s+/).filter(Boolean).length : 0);
const rec = (v: unknown): Record<string, unknown> => (v ?? {}) as Record<string, unknown>;
const firstContent = (body: unknown): unknown => (rec(body).messages as { content: string }[] | undefined)?.[0]?.content;

const KEY = 'sk-test-SECRET-123';
const servers: FakeServer[] = [];
let vllm: FakeServer;
let vllmDev: FakeServer;
let sglang: FakeServer;
let generic: FakeServer;
let locked: FakeServer;

beforeAll(async () => {
  const vllmRoutes = {
    'GET /v1/models': { json: { object: 'list', data: [{ id: 'tiny-model', object: 'model', owned_by: 'vllm', root: 'org/tiny', max_model_len: 4096 }] } },
    'GET /version': { json: { version: '0.11.0' } },
    'GET /metrics': { text: fixture('vllm-metrics.txt') },
    'POST /tokenize': (body: unknown) => {
      const b = rec(body);
      // fake tokenizer: one token per word, +5 for the chat template
      return { json: { count: b.messages ? words(firstContent(b)) + 5 : words(b.prompt), max_model_len: 4096, tokens: [] } };
    },
  };
  vllm = await startFake(vllmRoutes);
  vllmDev = await startFake({
    ...vllmRoutes,
    'GET /metrics': {
      text: '# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size="32",num_gpu_blocks="100",kv_cache_size_tokens="3333",engine="0"} 1\nvllm:num_requests_running{engine="0",model_name="other"} 1\n',
    },
    'GET /server_info?config_format=json': { json: { vllm_config: JSON.stringify({ scheduler_config: { max_num_seqs: 256 }, model_config: { model: 'org/tiny' } }) } },
  });
  sglang = await startFake({
    'GET /v1/models': { json: { object: 'list', data: [{ id: 'tiny-model', object: 'model', owned_by: 'sglang', root: 'tiny-model', max_model_len: 8192 }] } },
    'GET /get_server_info': {
      json: { model_path: 'org/tiny', tp_size: 1, max_running_requests: 48, page_size: 1, context_length: null, max_total_num_tokens: 50000, max_req_input_len: 8000, internal_states: [{ last_gen_throughput: 0 }], version: '0.5.3' },
    },
    'GET /metrics': { text: fixture('sglang-metrics.txt') },
    'POST /v1/tokenize': (body: unknown) => ({ json: { count: words(rec(body).prompt) + 1, tokens: [], max_model_len: 8192 } }),
    'POST /v1/chat/completions': (body: unknown) => ({
      json: { choices: [{ message: { content: 'x' } }], usage: { prompt_tokens: words(firstContent(body)) + 1 + 9, completion_tokens: 1 } },
    }),
  });
  generic = await startFake({ 'GET /v1/models': { json: { data: [{ id: 'gpt-x', owned_by: 'acme' }, { id: 'gpt-y', owned_by: 'acme' }] } } });
  locked = await startFake({ 'GET /v1/models': (_b, req) => (req.headers.authorization === `Bearer ${KEY}` ? { json: { data: [{ id: 'm', owned_by: 'vllm' }] } } : { status: 401, json: { error: { message: 'bad key' } } }) });
  servers.push(vllm, vllmDev, sglang, generic, locked);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await closeControlAgent();
});

describe('vLLM adapter against a fake vLLM', () => {
  test('probe facts with sources', async () => {
    const a = getAdapter('vllm');
    const facts = await a.probe({ baseUrl: vllm.url });
    expect(facts.engine).toEqual({ value: 'vllm', source: 'GET /v1/models owned_by' });
    expect(facts.model).toEqual({ value: 'tiny-model', source: 'GET /v1/models data[0].id' });
    expect(facts.version).toEqual({ value: '0.11.0', source: 'GET /version' });
    expect(facts.maxModelLen).toEqual({ value: 4096, source: 'GET /v1/models max_model_len' });
    expect(facts.kvCapacityTokens).toEqual({ value: 2048 * 16, source: 'vllm:cache_config_info num_gpu_blocks × block_size' });
    expect(facts.blockSize?.value).toBe(16);
    expect(facts.metricsPath).toBe('/metrics');
    expect(facts.tokenizePath).toBe('/tokenize');
    expect(facts.maxRunningRequests).toBeUndefined();
    expect(facts.launchArgs).toBeUndefined();
  });

  test('dev-mode server_info and kv_cache_size_tokens', async () => {
    const facts = await getAdapter('vllm').probe({ baseUrl: vllmDev.url }, 'tiny-model');
    expect(facts.model).toEqual({ value: 'tiny-model', source: 'config' });
    // a name the server does not list: sent as given, its source says so (the run warns at its start)
    const typo = await getAdapter('vllm').probe({ baseUrl: vllmDev.url }, 'tiny-modle');
    expect(typo.model.value).toBe('tiny-modle');
    expect(typo.model.source).toBe('config (not among the ids GET /v1/models lists: tiny-model)');
    expect(unlistedModelWarning(typo.model)).toBe(
      'the model "tiny-modle" (LLM_BENCH_MODEL or target.model) is not among the ids GET /v1/models lists: tiny-model; ' +
        'its requests carry that name as given, and the page names it: check the spelling (a server with one model, such as llama.cpp, ignores the name)',
    );
    expect(unlistedModelWarning(facts.model)).toBeUndefined();
    expect(facts.kvCapacityTokens).toEqual({ value: 3333, source: 'vllm:cache_config_info kv_cache_size_tokens' });
    expect(facts.blockSize?.value).toBe(32);
    expect(facts.maxRunningRequests?.value).toBe(256);
    expect(facts.launchArgs?.value).toMatchObject({ model_config: { model: 'org/tiny' } });
  });

  test('readMetrics sums over engines; KV usage is the mean', async () => {
    const a = getAdapter('vllm');
    const facts = await a.probe({ baseUrl: vllm.url });
    const m = await a.readMetrics!({ baseUrl: vllm.url }, facts);
    expect(m).toMatchObject({ running: 5, waiting: 1, promptTokensTotal: 1500, generationTokensTotal: 4096, cachedTokensTotal: 320, prefixQueriedTokensTotal: 1280 });
    expect(m?.kvUsage).toBeCloseTo(0.375, 10);
    expect(typeof m?.atMs).toBe('number');
    // a model_name that matches no series does not filter everything away
    const other = await a.readMetrics!({ baseUrl: vllmDev.url }, { ...facts, model: { value: 'tiny-model', source: 'config' } });
    expect(other?.running).toBe(1);
    expect(await a.readMetrics!({ baseUrl: vllm.url }, { ...facts, metricsPath: undefined })).toBeUndefined();
  });

  test('countTokens: completions prompt, chat messages', async () => {
    const a = getAdapter('vllm');
    const facts = await a.probe({ baseUrl: vllm.url });
    expect(await a.countTokens!({ baseUrl: vllm.url }, facts, 'one two three', 'completions')).toBe(3);
    expect(await a.countTokens!({ baseUrl: vllm.url }, facts, 'one two three', 'chat')).toBe(8);
    const last = vllm.seen.filter((r) => r.path === '/tokenize').at(-1);
    expect(last?.body).toEqual({ model: 'tiny-model', messages: [{ role: 'user', content: 'one two three' }], add_generation_prompt: true });
    expect(await a.countTokens!({ baseUrl: vllm.url }, { ...facts, tokenizePath: undefined }, 'x', 'chat')).toBeUndefined();
  });
});

describe('SGLang adapter against a fake SGLang', () => {
  test('probe facts from /get_server_info', async () => {
    const facts = await getAdapter('sglang').probe({ baseUrl: sglang.url });
    expect(facts.engine.value).toBe('sglang');
    expect(facts.version).toEqual({ value: '0.5.3', source: 'GET /get_server_info version' });
    expect(facts.kvCapacityTokens).toEqual({ value: 50000, source: 'GET /get_server_info max_total_num_tokens' });
    expect(facts.maxRunningRequests).toEqual({ value: 48, source: 'GET /get_server_info max_running_requests' });
    expect(facts.maxModelLen?.value).toBe(8192);
    expect(facts.launchArgs?.value).toMatchObject({ model_path: 'org/tiny', tp_size: 1 });
    expect(facts.launchArgs?.value).not.toHaveProperty('internal_states');
    expect(facts.metricsPath).toBe('/metrics');
    expect(facts.tokenizePath).toBe('/v1/tokenize');
  });

  test('readMetrics sums over dp ranks', async () => {
    const a = getAdapter('sglang');
    const facts = await a.probe({ baseUrl: sglang.url });
    const m = await a.readMetrics!({ baseUrl: sglang.url }, facts);
    expect(m).toMatchObject({ running: 7, waiting: 2, promptTokensTotal: 9000, generationTokensTotal: 777, cachedTokensTotal: 4500 });
    // SGLang's hit-rate denominator is its prompt counter (cached tokens included)
    expect(m?.prefixQueriedTokensTotal).toBe(9000);
    expect(m?.kvUsage).toBeCloseTo(0.3, 10);
  });

  test('countTokens: chat adds the template overhead measured once', async () => {
    const a = new SglangAdapter();
    const t = { baseUrl: sglang.url };
    const facts = await a.probe(t);
    expect(await a.countTokens(t, facts, 'a b c d', 'completions')).toBe(5);
    expect(await a.chatTemplateOverheadTokens(t, facts)).toBe(9);
    expect(await a.countTokens(t, facts, 'a b c d', 'chat')).toBe(14);
    expect(await a.countTokens(t, facts, 'a b', 'chat')).toBe(12);
    expect(sglang.seen.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(1);
  });
});

describe('generic adapter and detection', () => {
  test('generic probe: first model, no metrics, no tokenizer', async () => {
    const a = getAdapter('openai');
    const facts = await a.probe({ baseUrl: generic.url });
    expect(facts).toEqual({ engine: { value: 'openai', source: "adapter 'openai' (owned_by: acme)" }, model: { value: 'gpt-x', source: 'GET /v1/models data[0].id' } });
    expect(a.readMetrics).toBeUndefined();
    expect(a.countTokens).toBeUndefined();
  });

  test('detect by owned_by, by server info, by metrics, fallback', async () => {
    expect(await detectEngine({ baseUrl: vllm.url })).toEqual({ kind: 'vllm', evidence: 'GET /v1/models owned_by: vllm' });
    expect((await detectEngine({ baseUrl: sglang.url })).kind).toBe('sglang');
    expect(await detectEngine({ baseUrl: generic.url })).toEqual({ kind: 'openai', evidence: 'no engine-specific endpoint answered', note: UNDETECTED_NOTE });
    const others: FakeServer[] = [
      await startFake({ 'GET /v1/models': { json: { data: [{ id: 'm', owned_by: 'x' }] } }, 'GET /get_server_info': { json: { max_total_num_tokens: 1 } } }),
      await startFake({ 'GET /v1/models': { status: 404, text: '' }, 'GET /metrics': { text: 'vllm:num_requests_running{engine="0"} 0\n' } }),
      await startFake({ 'GET /v1/models': { json: { data: [{ id: 'm', owned_by: 'org/m' }] } }, 'GET /info': { json: { model_id: 'org/m', max_total_tokens: 4096 } } }),
      await startFake({ 'GET /v1/models': { json: { data: [{ id: 'llama3', owned_by: 'library' }] } }, 'GET /api/version': { json: { version: '0.33.0' } } }),
      await startFake({ 'GET /v1/models': { json: { data: [{ id: 'm', owned_by: 'llamacpp' }] } } }),
      await startFake({ 'GET /v1/models': { json: { data: [{ id: 'm', owned_by: 'tensorrt_llm' }] } } }),
    ];
    servers.push(...others);
    const kinds = await Promise.all(others.map(async (s) => (await detectEngine({ baseUrl: s.url })).kind));
    expect(kinds).toEqual(['sglang', 'vllm', 'tgi', 'ollama', 'llamacpp', 'trtllm']);
  });

  test('unreachable server: a setup error naming baseUrl', async () => {
    const gone = await startFake({});
    await gone.close();
    await expect(detectEngine({ baseUrl: gone.url })).rejects.toThrow(/could not reach.*target\.url/);
    await expect(getAdapter('vllm').probe({ baseUrl: gone.url })).rejects.toThrow(/could not reach/);
  });

  test('API key: sent as Bearer, never in errors', async () => {
    const facts = await getAdapter('openai').probe({ baseUrl: locked.url, apiKey: KEY });
    expect(facts.model.value).toBe('m');
    expect(locked.seen.at(-1)?.authorization).toBe(`Bearer ${KEY}`);
    const err: Error = await getAdapter('openai')
      .probe({ baseUrl: locked.url, apiKey: 'wrong-key-XYZ' })
      .then(() => new Error("resolved"), (e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    // the server's words, and the fix names the variable a user sets
    expect(err.message).toContain('was refused with HTTP 401: bad key. The API key sent (LLM_BENCH_API_KEY, or target.apiKey in a suite file, as Authorization: Bearer) was refused');
    expect(err.message).not.toContain('wrong-key-XYZ');
    const none: Error = await getAdapter('openai')
      .probe({ baseUrl: locked.url })
      .then(() => new Error('resolved'), (e: unknown) => e as Error);
    expect(none.message).toContain('No API key was sent: set LLM_BENCH_API_KEY (target.apiKey in a suite file)');
    // a 403 with a key: forbidden, which a key accepted elsewhere can be (no access to this model, a gateway's allow-list)
    expect(apiKeyFix(true, 403)).toContain('the key may lack access to this model or endpoint, or a gateway may block this client');
    expect(apiKeyFix(true, 401)).toContain('was refused: check it is a key this server accepts');
    expect(apiKeyFix(false, 403)).toMatch(/^No API key was sent/);
    const gone = await startFake({});
    await gone.close();
    const err2: Error = await getAdapter('openai')
      .probe({ baseUrl: gone.url, apiKey: KEY })
      .then(() => new Error("resolved"), (e: unknown) => e as Error);
    expect(err2.message).not.toContain(KEY);
  });
});
