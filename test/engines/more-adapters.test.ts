/**
 * The llama.cpp, TGI, TensorRT-LLM and Ollama adapters against the shapes in ENGINES.md §3–§6:
 * request bodies, chunk decoding, probe facts (fake servers answering the documented bodies),
 * metrics, detection, and overload statuses through the real streaming client.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'undici';
import { afterAll, describe, expect, test } from 'vitest';
import { streamRequest } from '../../src/client/stream.js';
import { TokenCounter } from '../../src/client/token-count.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { detectEngine, getAdapter } from '../../src/engines/detect.js';
import { closeControlAgent } from '../../src/engines/http.js';
import { decodeLlamacppChunk, LlamacppAdapter } from '../../src/engines/llamacpp.js';
import { ollamaLoadedModel } from '../../src/engines/ollama.js';
import { parsePrometheus } from '../../src/engines/prometheus.js';
import { tgiMetricsFromSamples } from '../../src/engines/tgi.js';
import { latestIterationStats, trtllmPrometheusSample, trtllmStatsFacts, trtllmStatsSample } from '../../src/engines/trtllm.js';
import type { RequestSpec } from '../../src/shapes/engine.js';
import { startFake, type FakeServer } from './fake-server.js';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, '..', 'fixtures', 'engines', name), 'utf8');
const spec = (over: Partial<RequestSpec> = {}): RequestSpec => ({ model: 'm', endpoint: 'chat', prompt: 'Hello', maxTokens: 64, forceLength: true, ...over });
const servers: FakeServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await closeControlAgent();
});
async function fake(routes: Parameters<typeof startFake>[0]): Promise<FakeServer> {
  const s = await startFake(routes);
  servers.push(s);
  return s;
}

describe('request shaping: only fields each engine accepts', () => {
  test('llama.cpp: ignore_eos when forced, include_usage, and no timings_per_token (it makes b4748 bunch its stream)', () => {
    const a = getAdapter('llamacpp');
    expect(a.forcesLength).not.toBe(false);
    expect(a.buildStreamRequest(spec()).body).toEqual({
      model: 'm',
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(a.buildStreamRequest(spec({ forceLength: false })).body).not.toHaveProperty('ignore_eos');
    expect(a.buildStreamRequest(spec()).body).not.toHaveProperty('min_tokens');
  });

  test('TGI and Ollama: cannot force the length; no ignore_eos even when asked', () => {
    for (const kind of ['tgi', 'ollama'] as const) {
      const a = getAdapter(kind);
      expect(a.forcesLength).toBe(false);
      const body = a.buildStreamRequest(spec()).body;
      expect(body).toEqual({ model: 'm', max_tokens: 64, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hello' }] });
      const comp = a.buildStreamRequest(spec({ endpoint: 'completions' }));
      expect(comp.path).toBe('/v1/completions');
      expect(comp.body).toEqual({ model: 'm', max_tokens: 64, stream: true, stream_options: { include_usage: true }, prompt: 'Hello' });
    }
  });

  test('TRT-LLM: max_completion_tokens on chat, max_tokens on completions, nothing unknown', () => {
    const a = getAdapter('trtllm');
    const chat = a.buildStreamRequest(spec());
    expect(chat).toEqual({
      path: '/v1/chat/completions',
      body: {
        model: 'm',
        stream: true,
        stream_options: { include_usage: true, continuous_usage_stats: true },
        ignore_eos: true,
        max_completion_tokens: 64,
        messages: [{ role: 'user', content: 'Hello' }],
      },
    });
    const comp = a.buildStreamRequest(spec({ endpoint: 'completions', forceLength: false }));
    expect(Object.keys(comp.body).sort()).toEqual(['max_tokens', 'model', 'prompt', 'stream', 'stream_options']);
  });
});

/** Feed decoded payloads through the client's token counter, as the stream does. */
function countThrough(decode: (p: unknown) => ReturnType<typeof decodeLlamacppChunk>, payloads: unknown[]): RequestTimeline {
  const t: RequestTimeline = { id: 'x', sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0 };
  const counter = new TokenCounter(t);
  payloads.forEach((p, i) => counter.add(decode(p), 10 + i));
  return t;
}

describe('token counting', () => {
  const timings = (n: number) => ({ cache_n: 4, prompt_n: 10, prompt_ms: 5, predicted_n: n, predicted_ms: n * 20, predicted_per_second: 50 });
  test('llama.cpp: timings_per_token predicted_n gives per-chunk counts; the finish chunk usage wins', () => {
    const chunks = [
      { choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] },
      { choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }], timings: timings(1) },
      { choices: [{ index: 0, delta: { content: ' big world' }, finish_reason: null }], timings: timings(3) },
      { choices: [{ index: 0, delta: {}, finish_reason: 'length' }] },
      { choices: [], usage: { prompt_tokens: 14, completion_tokens: 3, total_tokens: 17 }, timings: timings(3) },
    ];
    const d = decodeLlamacppChunk(chunks[1]);
    expect(d.serverTimings).toEqual({ promptN: 10, cacheN: 4, promptMs: 5, predictedN: 1, predictedMs: 20, predictedPerSecond: 50 });
    expect(d.usage).toEqual({ completionTokens: 1, promptTokens: 14, cachedTokens: 4 });
    expect(decodeLlamacppChunk(chunks[0]).hasText).toBe(false);
    const t = countThrough(decodeLlamacppChunk, chunks);
    expect(t.chunkTokens).toEqual([1, 2]);
    expect(t.tokenSource).toBe('usage');
    expect(t.completionTokens).toBe(3);
    expect(t.promptTokens).toBe(14);
  });

  test("TGI: one token per event, completions' empty finish_reason is not a finish", () => {
    const a = getAdapter('tgi');
    const chunks = ['a ', 'b ', 'c '].map((text, i) => ({ choices: [{ index: 0, text, logprobs: null, finish_reason: i === 2 ? 'length' : '' }] }));
    expect(a.decodeChunk(chunks[0]).finishReason).toBeUndefined();
    expect(a.decodeChunk(chunks[2]).finishReason).toBe('length');
    const t = countThrough((p) => a.decodeChunk(p), [...chunks, { choices: [], usage: { prompt_tokens: 5, completion_tokens: 3 } }]);
    expect(t.chunkTokens).toEqual([1, 1, 1]);
    expect(t.completionTokens).toBe(3);
  });

  test('Ollama: zero usage on every completions chunk, the last usage seen counts', () => {
    const a = getAdapter('ollama');
    const zero = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    const t = countThrough(
      (p) => a.decodeChunk(p),
      [
        { choices: [{ index: 0, text: 'a ', finish_reason: null }], usage: zero },
        { choices: [{ index: 0, text: 'b c ', finish_reason: null }], usage: zero },
        { choices: [{ index: 0, text: '', finish_reason: 'stop' }], usage: zero },
        { choices: [], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } },
      ],
    );
    expect(t.tokenSource).toBe('chunks');
    expect(t.chunkTokens).toEqual([1, 1]);
    expect(t.completionTokens).toBe(3);
    expect(t.promptTokens).toBe(9);
  });

  test('reasoning fields: reasoning_content (llama.cpp, TRT-LLM) and reasoning (Ollama)', () => {
    expect(getAdapter('llamacpp').decodeChunk({ choices: [{ delta: { reasoning_content: 'hm' } }] })).toMatchObject({ hasText: true, reasoning: true });
    expect(getAdapter('trtllm').decodeChunk({ choices: [{ delta: { reasoning_content: 'hm' } }] })).toMatchObject({ hasText: true, reasoning: true });
    expect(getAdapter('ollama').decodeChunk({ choices: [{ delta: { role: 'assistant', reasoning: 'hm' } }] })).toMatchObject({ hasText: true, reasoning: true });
  });
});

describe('capacity and state from the documented endpoints', () => {
  test('llama.cpp: /props n_ctx × slots, /slots busy, /metrics deferred; tokenize and apply-template', async () => {
    const s = await fake({
      'GET /v1/models': { json: { object: 'list', data: [{ id: 'qwen.gguf', object: 'model', owned_by: 'llamacpp', meta: { n_ctx_train: 32768 } }] } },
      'GET /props': { json: { default_generation_settings: { n_ctx: 4096, params: {} }, total_slots: 4, model_path: '/m/qwen.gguf', build_info: 'b6500-abc123' } },
      'GET /slots': { json: [0, 1, 2, 3].map((id) => ({ id, n_ctx: 4096, is_processing: id < 3, next_token: { n_remain: 10, n_decoded: 5 } })) },
      'GET /metrics': { text: fixture('llamacpp-metrics.txt') },
      'POST /tokenize': (body) => ({ json: { tokens: String((body as { content: string }).content).split(' ').map((_, i) => i) } }),
      'POST /apply-template': (body) => ({ json: { prompt: `<u>${(body as { messages: { content: string }[] }).messages[0]!.content} </u> <a>` } }),
    });
    const a = new LlamacppAdapter();
    const t = { baseUrl: s.url };
    const facts = await a.probe(t);
    expect(facts.engine.value).toBe('llamacpp');
    expect(facts.maxModelLen).toEqual({ value: 4096, source: 'GET /props default_generation_settings.n_ctx (per slot)' });
    expect(facts.maxRunningRequests?.value).toBe(4);
    expect(facts.kvCapacityTokens).toEqual({ value: 16384, source: 'GET /props n_ctx × total_slots' });
    expect(facts.version?.value).toBe('b6500-abc123');
    expect(facts.metricsPath).toBe('/metrics');
    const m = await a.readMetrics(t, facts);
    expect(m).toMatchObject({ running: 3, waiting: 2, promptTokensTotal: 1234 });
    // tokens_predicted_total grows at request end: not a window counter
    expect(m?.generationTokensTotal).toBeUndefined();
    expect(await a.countTokens(t, facts, 'a b c', 'completions')).toBe(3);
    expect(await a.countTokens(t, facts, 'a b c', 'chat')).toBe(5);
    expect(s.seen.find((r) => r.path === '/tokenize')?.body).toMatchObject({ add_special: true, parse_special: true });
  });

  test('TGI: /info max_total_tokens and version, tgi_batch_max_total_tokens capacity, queue and batch gauges', async () => {
    const s = await fake({
      'GET /v1/models': { json: { object: 'list', data: [{ id: 'org/m', object: 'model', created: 0, owned_by: 'org/m' }] } },
      'GET /info': { json: { model_id: 'org/m', max_concurrent_requests: 128, max_input_tokens: 4095, max_total_tokens: 4096, version: '3.3.4', sha: 'db931fcf' } },
      'GET /metrics': { text: fixture('tgi-metrics.txt') },
      'POST /tokenize': { json: [{ id: 1, text: 'a', start: 0, stop: 1 }] },
    });
    const a = getAdapter('tgi');
    const facts = await a.probe({ baseUrl: s.url });
    expect(facts).toMatchObject({
      engine: { value: 'tgi' },
      model: { value: 'org/m' },
      maxModelLen: { value: 4096, source: 'GET /info max_total_tokens' },
      version: { value: '3.3.4' },
      kvCapacityTokens: { value: 120000, source: 'tgi_batch_max_total_tokens' },
      metricsPath: '/metrics',
      tokenizePath: '/tokenize',
    });
    expect(tgiMetricsFromSamples(parsePrometheus(fixture('tgi-metrics.txt')).samples, 1)).toEqual({ atMs: 1, running: 12, waiting: 5, kvUsage: 0.25 });
  });

  test('TRT-LLM: JSON /metrics kvCacheStats (last entry), Prometheus when present, empty scrape → one request then rescrape', async () => {
    const stats = JSON.parse(fixture('trtllm-iteration-stats.json'));
    const last = latestIterationStats(stats)!;
    expect(trtllmStatsFacts(last)).toMatchObject({ kvCapacityTokens: { value: 128000 }, blockSize: { value: 32 }, maxRunningRequests: { value: 64 } });
    expect(trtllmStatsSample(last, 5)).toEqual({ atMs: 5, running: 6, waiting: 3, kvUsage: 0.25 });
    expect(latestIterationStats([])).toBeUndefined();
    const prom = trtllmPrometheusSample(parsePrometheus(fixture('trtllm-prometheus.txt')).samples, 7);
    expect(prom).toMatchObject({ atMs: 7, running: 4, waiting: 1, kvUsage: 0.25 });
    expect(prom.ttftHistogram).toEqual({ upperBoundsS: [0.1, 0.5, Infinity], cumulativeCounts: [2, 7, 8], count: 8, sumS: 2.4 });

    let scrapes = 0;
    const s = await fake({
      'GET /v1/models': { json: { data: [{ id: 'm', owned_by: 'tensorrt_llm' }] } },
      'GET /version': { json: { version: '1.1.0' } },
      // idle: the first scrape is empty; after a request the stats exist
      'GET /metrics': () => ({ json: scrapes++ === 0 ? [] : stats }),
      'POST /v1/completions': { json: { choices: [{ text: 'x' }], usage: { prompt_tokens: 1, completion_tokens: 1 } } },
    });
    const facts = await getAdapter('trtllm').probe({ baseUrl: s.url });
    expect(facts.kvCapacityTokens?.value).toBe(128000);
    expect(facts.metricsPath).toBe('/metrics');
    expect(facts.version?.value).toBe('1.1.0');
    expect(s.seen.find((r) => r.path === '/v1/completions')?.body).toEqual({ model: 'm', prompt: 'Hi', max_tokens: 1 });
  });

  test('Ollama: /api/version, /api/ps context_length of the served model', async () => {
    const ps = { models: [{ name: 'llama3:latest', model: 'llama3:latest', size: 5, size_vram: 5, context_length: 8192, details: {} }] };
    expect(ollamaLoadedModel(ps, 'llama3')?.context_length).toBe(8192);
    expect(ollamaLoadedModel({ models: [] }, 'llama3')).toBeUndefined();
    const s = await fake({
      'GET /v1/models': { json: { object: 'list', data: [{ id: 'llama3:latest', object: 'model', owned_by: 'library' }] } },
      'GET /api/version': { json: { version: '0.33.0-rc2' } },
      'GET /api/ps': { json: ps },
    });
    const a = getAdapter('ollama');
    const facts = await a.probe({ baseUrl: s.url });
    expect(facts).toMatchObject({ engine: { value: 'ollama' }, version: { value: '0.33.0-rc2' }, maxModelLen: { value: 8192, source: 'GET /api/ps context_length' } });
    expect(facts.kvCapacityTokens).toBeUndefined();
    expect(a.readMetrics).toBeUndefined();
  });
});

describe('detection', () => {
  test('TRT-LLM by JSON /metrics; unsure detection says so and names the override', async () => {
    const trt = await fake({ 'GET /v1/models': { json: { data: [{ id: 'm', owned_by: 'x' }] } }, 'GET /metrics': { json: JSON.parse(fixture('trtllm-iteration-stats.json')) } });
    expect(await detectEngine({ baseUrl: trt.url })).toEqual({ kind: 'trtllm', evidence: 'GET /metrics is JSON iteration stats (kvCacheStats)' });
    const both = await fake({
      'GET /v1/models': { json: { data: [{ id: 'm', owned_by: 'library' }] } },
      'GET /api/version': { json: { version: '1' } },
      'GET /props': { json: { default_generation_settings: { n_ctx: 1 } } },
    });
    const d = await detectEngine({ baseUrl: both.url });
    expect(d.kind).toBe('ollama');
    expect(d.note).toMatch(/detection unsure: picked ollama .* also looks like llamacpp .*LLM_BENCH_ENGINE/);
  });
});

describe('overload statuses reach the timeline as failed requests', () => {
  test.each([
    ['tgi', 429, { error: 'Model is overloaded', error_type: 'overloaded' }, 'Model is overloaded'],
    ['ollama', 503, { error: { message: 'server busy, please try again.  maximum pending requests exceeded', type: 'api_error', param: null, code: null } }, 'server busy'],
  ] as const)('%s %d', async (kind, status, json, text) => {
    const s = await fake({ 'POST /v1/chat/completions': { status, json } });
    const a = getAdapter(kind);
    const req = a.buildStreamRequest(spec());
    const client = new Client(s.url);
    try {
      const t = await streamRequest({
        id: 'r1',
        dispatcher: client,
        origin: s.url,
        path: req.path,
        body: req.body,
        decode: (p) => a.decodeChunk(p),
        endsWithDone: a.endsWithDone,
        timeouts: { headersMs: 5000, stallMs: 5000 },
      });
      // a 429 is its own kind (issue 60), the rest http-status
      expect(t.end).toMatchObject({ kind: 'error', code: status === 429 ? 'rate-limited' : 'http-status', httpStatus: status });
      expect(t.end?.kind === 'error' && t.end.message).toContain(text);
    } finally {
      await client.close();
    }
  });
});
