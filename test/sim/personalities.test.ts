/**
 * The llama.cpp, TGI, TensorRT-LLM and Ollama personalities: the wire shapes of ENGINES.md §3–§6
 * on top of the shared engine model.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { countTokens } from '../../src/sim/tokenizer.js';
import { deltaText, getJson, getText, metricValue, post, postJson, postRaw } from './helpers.js';

const messages = [{ role: 'user', content: 'The quick brown fox jumps over the lazy dog' }];
const prompt = 'The quick brown fox jumps over the lazy dog';
const sims: Record<string, SimHandle> = {};

beforeAll(async () => {
  for (const p of ['llamacpp', 'tgi', 'trtllm', 'ollama'] as const) {
    sims[p] = await startSim({ profile: 'tiny', personality: p, overrides: { stepBaseMs: 2, eosProbability: 0 } });
  }
});
afterAll(async () => {
  await Promise.all(Object.values(sims).map((s) => s.close()));
});

const chat = (over: Record<string, unknown> = {}) => ({ model: 'sim-tiny', messages, max_tokens: 4, stream: true, stream_options: { include_usage: true }, ...over });
const completion = (over: Record<string, unknown> = {}) => ({ model: 'sim-tiny', prompt, max_tokens: 4, stream: true, stream_options: { include_usage: true }, ...over });
const finishes = (json: Record<string, any>[]) => json.flatMap((j) => (j.choices ?? []).map((c: any) => c.finish_reason)).filter((f) => f);

describe('llama.cpp personality', () => {
  const url = () => sims.llamacpp!.url;

  test('chat (b4748): no role chunk, usage and timings on the finish chunk, no usage-only chunk, [DONE]', async () => {
    const r = await post(url(), '/v1/chat/completions', chat());
    expect(r.done).toBe(true);
    // the first chunk already carries text and no role
    expect(r.json[0]!.choices[0].delta.role).toBeUndefined();
    expect(deltaText(r.json[0]!)).not.toBe('');
    expect(r.json.every((j) => j.choices.length === 1)).toBe(true);
    const fin = r.json.at(-1)!;
    expect(fin.choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' });
    expect(fin.usage.completion_tokens).toBe(4);
    expect(fin.timings).toMatchObject({ predicted_n: 4, prompt_n: expect.any(Number) });
    expect(fin.timings.cache_n).toBeUndefined();
    expect(fin.timings.predicted_per_second).toBeGreaterThan(0);
    // timings only on the finish chunk without timings_per_token
    expect(r.json.slice(0, -1).every((j) => j.timings === undefined)).toBe(true);
    expect(r.json.every((j) => typeof j.system_fingerprint === 'string' && j.model === 'sim-tiny')).toBe(true);
  });

  test('chat without include_usage still ends with usage on the finish chunk; the model is echoed (default gpt-3.5-turbo)', async () => {
    const r = await post(url(), '/v1/chat/completions', { messages, max_tokens: 3, stream: true });
    expect(r.json.at(-1)!.usage.completion_tokens).toBe(3);
    expect(r.json.every((j) => j.model === 'gpt-3.5-turbo')).toBe(true);
    const named = await post(url(), '/v1/chat/completions', { model: 'my-model', messages, max_tokens: 2, stream: true });
    expect(named.json.every((j) => j.model === 'my-model')).toBe(true);
  });

  test('headers advertise keep-alive (timeout=5, max=100), yet the server closes the connection after a streamed response', async () => {
    const { request } = await import('node:http');
    const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 });
    const once = () =>
      new Promise<{ headers: Record<string, unknown>; closed: Promise<void> }>((resolve, reject) => {
        const payload = JSON.stringify(chat({ max_tokens: 2 }));
        const req = request(`${url()}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
          const closed = new Promise<void>((done) => res.socket.once('close', () => done()));
          res.resume();
          res.on('end', () => resolve({ headers: res.headers, closed }));
        });
        req.on('error', reject);
        req.end(payload);
      });
    try {
      const { headers, closed } = await once();
      expect(headers['keep-alive']).toBe('timeout=5, max=100');
      expect(headers.server).toBe('llama.cpp');
      await closed; // the server closed it; a hung promise would time the test out
      const models = await getJson(url(), '/v1/models');
      expect(models.data[0].owned_by).toBe('llamacpp');
    } finally {
      agent.destroy();
    }
  });

  test('timings_per_token: cumulative predicted_n on every text chunk', async () => {
    const r = await post(url(), '/v1/chat/completions', chat({ timings_per_token: true, ignore_eos: true }));
    const n = r.json.filter((j) => deltaText(j)).map((j) => j.timings.predicted_n);
    expect(n).toEqual([1, 2, 3, 4]);
  });

  test('malformed JSON body: 500 server_error with the parser message (nlohmann::json)', async () => {
    const r = await postRaw(url(), '/v1/chat/completions', '{bad');
    expect(r.status).toBe(500);
    expect(JSON.parse(r.body)).toEqual({ error: { code: 500, message: expect.stringContaining('[json.exception.parse_error.101]'), type: 'server_error' } });
  });

  test('completions: the final chunk always carries usage (no include_usage needed)', async () => {
    const r = await post(url(), '/v1/completions', completion({ stream_options: undefined }));
    const fin = r.json.at(-1)!;
    expect(fin.choices[0].finish_reason).toBe('length');
    expect(fin.usage.completion_tokens).toBe(4);
    expect(fin.timings.predicted_n).toBe(4);
  });

  test('mid-stream error: error event, then the stream closes without [DONE]', async () => {
    const r = await post(url(), '/v1/chat/completions', chat({ max_tokens: 10 }), { headers: { 'x-sim-fault': 'error-after=2' } });
    expect(r.done).toBe(false);
    expect(r.json.at(-1)).toEqual({ error: { code: 500, message: expect.stringContaining('simulated'), type: 'server_error' } });
  });

  test('context overflow: 400 exceed_context_size_error with n_prompt_tokens and n_ctx (per slot)', async () => {
    const props = await getJson(url(), '/props');
    expect(props).toMatchObject({ default_generation_settings: { n_ctx: 8192, is_processing: false }, total_slots: 8, build_info: expect.any(String), bos_token: '<s>' });
    const r = await postJson(url(), '/v1/completions', { prompt, max_tokens: 9000 });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 400, type: 'exceed_context_size_error', n_ctx: 8192, n_prompt_tokens: countTokens(prompt) });
  });

  test('/slots shows busy slots while requests run; /metrics llamacpp: series; tokenize and apply-template', async () => {
    const running = post(url(), '/v1/completions', completion({ max_tokens: 200, ignore_eos: true }), { abortAfterEvents: 20 });
    let busy = 0;
    for (let i = 0; i < 100 && busy === 0; i++) {
      busy = (await getJson(url(), '/slots')).filter((s: any) => s.is_processing).length;
      if (busy === 0) await new Promise((r) => setTimeout(r, 5));
    }
    expect(busy).toBe(1);
    await running;
    const slots = await getJson(url(), '/slots');
    expect(slots).toHaveLength(8);
    expect(slots[0]).toMatchObject({ id: 0, n_ctx: 8192, is_processing: expect.any(Boolean), next_token: { has_next_token: expect.any(Boolean), n_decoded: expect.any(Number) } });
    const metrics = await getText(url(), '/metrics');
    for (const n of [
      'llamacpp:prompt_tokens_total',
      'llamacpp:tokens_predicted_total',
      'llamacpp:requests_processing',
      'llamacpp:requests_deferred',
      'llamacpp:n_decode_total',
      'llamacpp:n_busy_slots_per_decode',
      'llamacpp:kv_cache_usage_ratio',
      'llamacpp:kv_cache_tokens',
    ]) {
      expect(metricValue(metrics, n), n).toBeTypeOf('number');
    }
    const tok = await postJson(url(), '/tokenize', { content: prompt });
    expect(tok.json.tokens).toHaveLength(countTokens(prompt));
    const tpl = await postJson(url(), '/apply-template', { messages });
    const usage = (await postJson(url(), '/v1/chat/completions', { messages, max_tokens: 1 })).json.usage;
    expect(countTokens(tpl.json.prompt)).toBe(usage.prompt_tokens);
    expect((await getJson(url(), '/v1/models')).data[0].owned_by).toBe('llamacpp');
  });
});

describe('TGI personality', () => {
  const url = () => sims.tgi!.url;

  test('chat: one event per token, role on every delta, no role-only chunk, finish on the last token', async () => {
    const r = await post(url(), '/v1/chat/completions', chat());
    expect(r.done).toBe(true);
    const text = r.json.filter((j) => j.choices.length > 0);
    expect(text).toHaveLength(4);
    for (const j of text) {
      expect(j.choices[0].delta.role).toBe('assistant');
      expect(countTokens(j.choices[0].delta.content)).toBe(1);
    }
    expect(text[3]!.choices[0].finish_reason).toBe('length');
    expect(r.json.at(-1)!.usage.completion_tokens).toBe(4);
  });

  test('completions: finish_reason "" until the last chunk, which always has usage', async () => {
    const r = await post(url(), '/v1/completions', completion({ stream_options: undefined }));
    expect(r.json.map((j) => j.choices[0].finish_reason)).toEqual(['', '', '', 'length']);
    expect(r.json.at(-1)!.usage.completion_tokens).toBe(4);
  });

  test('ignore_eos is not honoured: EOS can end a request early', async () => {
    const eos = await startSim({ profile: 'tiny', personality: 'tgi', overrides: { stepBaseMs: 1, eosProbability: 0.3 } });
    try {
      const lens: number[] = [];
      for (let i = 0; i < 4; i++) lens.push((await postJson(eos.url, '/v1/completions', { prompt: `p${i}`, max_tokens: 40, ignore_eos: true })).json.usage.completion_tokens);
      expect(Math.min(...lens)).toBeLessThan(40);
    } finally {
      await eos.close();
    }
  });

  test('errors: {error, error_type}; validation is 422; mid-stream error event then [DONE]; 429 beyond max concurrent requests', async () => {
    const overflow = await postJson(url(), '/v1/completions', { prompt, max_tokens: 40_000 });
    expect(overflow.status).toBe(422);
    expect(overflow.json).toEqual({ error: expect.stringContaining('maximum context length'), error_type: 'validation' });
    const mid = await post(url(), '/v1/chat/completions', chat({ max_tokens: 10 }), { headers: { 'x-sim-fault': 'error-after=2' } });
    expect(mid.done).toBe(true);
    expect(mid.json.at(-1)).toEqual({ error: { message: expect.any(String), http_status_code: 422 } });
    const limited = await startSim({ profile: 'tiny', personality: 'tgi', overrides: { stepBaseMs: 2, admissionLimit: 1 } });
    try {
      const first = post(limited.url, '/v1/completions', completion({ max_tokens: 50, ignore_eos: true }));
      await new Promise((r) => setTimeout(r, 30));
      const second = await postJson(limited.url, '/v1/completions', { prompt, max_tokens: 2 });
      expect(second.status).toBe(429);
      expect(second.json.error_type).toBe('overloaded');
      await first;
    } finally {
      await limited.close();
    }
  });

  test('/info, tgi_ metrics, /tokenize, /chat_tokenize, owned_by = model id', async () => {
    expect(await getJson(url(), '/info')).toMatchObject({ model_id: 'sim-tiny', max_total_tokens: 32768, max_input_tokens: 32767, version: expect.any(String) });
    const metrics = await getText(url(), '/metrics');
    expect(metricValue(metrics, 'tgi_batch_max_total_tokens')).toBe(65536);
    for (const n of ['tgi_queue_size', 'tgi_batch_current_size', 'tgi_batch_current_max_tokens', 'tgi_request_count']) expect(metricValue(metrics, n), n).toBeTypeOf('number');
    const tok = await postJson(url(), '/tokenize', { inputs: prompt });
    expect(tok.json).toHaveLength(countTokens(prompt));
    expect(tok.json[1]).toMatchObject({ id: expect.any(Number), text: expect.any(String), start: expect.any(Number), stop: expect.any(Number) });
    const chatTok = await postJson(url(), '/chat_tokenize', { messages });
    const usage = (await postJson(url(), '/v1/chat/completions', { messages, max_tokens: 1 })).json.usage;
    expect(chatTok.json.tokenize_response).toHaveLength(usage.prompt_tokens);
    expect((await getJson(url(), '/v1/models')).data[0]).toMatchObject({ id: 'sim-tiny', owned_by: 'sim-tiny' });
  });
});

describe('TensorRT-LLM personality', () => {
  const url = () => sims.trtllm!.url;

  test('unknown request fields are a 400 (extra="forbid")', async () => {
    const r = await postJson(url(), '/v1/chat/completions', { model: 'sim-tiny', messages, max_tokens: 2, timings_per_token: true });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ object: 'error', message: expect.stringContaining('timings_per_token'), code: 400 });
    const so = await postJson(url(), '/v1/chat/completions', { model: 'sim-tiny', messages, max_tokens: 2, stream: true, stream_options: { foo: 1 } });
    expect(so.status).toBe(400);
  });

  test('include_usage defaults on once stream_options is sent; continuous usage; completions usage chunk object', async () => {
    const r = await post(url(), '/v1/chat/completions', chat({ stream_options: { continuous_usage_stats: true }, max_completion_tokens: 3, max_tokens: undefined }));
    expect(r.json[0]!.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(r.json.filter((j) => deltaText(j)).map((j) => j.usage.completion_tokens)).toEqual([1, 2, 3]);
    expect(r.json.at(-1)!.choices).toEqual([]);
    const c = await post(url(), '/v1/completions', completion());
    expect(c.json.at(-1)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: { completion_tokens: 4 } });
  });

  test('mid-stream failure drops the connection: no error event, no [DONE]', async () => {
    const r = await post(url(), '/v1/chat/completions', chat({ max_tokens: 10 }), { headers: { 'x-sim-fault': 'error-after=2' } });
    expect(r.done).toBe(false);
    expect(r.json.some((j) => j.error)).toBe(false);
  });

  test('JSON /metrics drains (empty when no iteration ran), /prometheus/metrics, /version, owned_by', async () => {
    const fresh = await startSim({ profile: 'tiny', personality: 'trtllm', overrides: { stepBaseMs: 1 } });
    try {
      expect(await getJson(fresh.url, '/metrics')).toEqual([]);
      await postJson(fresh.url, '/v1/completions', { model: 'sim-tiny', prompt, max_tokens: 2 });
      const stats = await getJson(fresh.url, '/metrics');
      expect(stats).toHaveLength(1);
      expect(stats[0]).toMatchObject({ numActiveRequests: 0, numQueuedRequests: 0, maxNumActiveRequests: 8, kvCacheStats: { maxNumBlocks: 4096, tokensPerBlock: 16 } });
      expect(await getJson(fresh.url, '/metrics')).toEqual([]);
    } finally {
      await fresh.close();
    }
    const prom = await getText(url(), '/prometheus/metrics');
    for (const n of ['trtllm_num_requests_running', 'trtllm_num_requests_waiting', 'trtllm_kv_cache_utilization', 'trtllm_request_success_total']) expect(metricValue(prom, n), n).toBeTypeOf('number');
    expect(prom).toContain('trtllm_time_to_first_token_seconds_bucket');
    expect((await getJson(url(), '/version')).version).toBeTypeOf('string');
    const model = (await getJson(url(), '/v1/models')).data[0];
    expect(model.owned_by).toBe('tensorrt_llm');
    expect(model.max_model_len).toBeUndefined();
  });
});

describe('Ollama personality', () => {
  const url = () => sims.ollama!.url;

  test('chat: role with the first content, empty-delta finish chunk, usage chunk, [DONE]', async () => {
    const r = await post(url(), '/v1/chat/completions', chat());
    expect(r.done).toBe(true);
    expect(r.json[0]!.choices[0].delta.role).toBe('assistant');
    expect(countTokens(r.json[0]!.choices[0].delta.content)).toBe(1);
    expect(finishes(r.json)).toEqual(['length']);
    const fin = r.json.find((j) => j.choices[0]?.finish_reason)!;
    expect(fin.choices[0].delta.content).toBe('');
    expect(r.json.at(-1)!.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: 4 });
  });

  test('completions with include_usage: zero usage on every chunk, then the real one', async () => {
    const r = await post(url(), '/v1/completions', completion());
    const withChoices = r.json.filter((j) => j.choices.length > 0 && deltaText(j));
    expect(withChoices.every((j) => j.usage.completion_tokens === 0 && j.usage.prompt_tokens === 0)).toBe(true);
    expect(r.json.at(-1)!.usage.completion_tokens).toBe(4);
  });

  test('errors: nested with code null; unknown model 404; mid-stream failure just ends the stream; 503 when the queue is full', async () => {
    const bad = await postJson(url(), '/v1/chat/completions', { model: 'nope', messages, max_tokens: 2 });
    expect(bad.status).toBe(404);
    expect(bad.json).toEqual({ error: { message: expect.stringContaining('nope'), type: 'not_found_error', param: null, code: null } });
    const mid = await post(url(), '/v1/chat/completions', chat({ max_tokens: 10 }), { headers: { 'x-sim-fault': 'error-after=2' } });
    expect(mid.done).toBe(false);
    expect(mid.json.some((j) => j.error)).toBe(false);
    const busy = await postJson(url(), '/v1/chat/completions', { model: 'sim-tiny', messages, max_tokens: 2 }).then(async () =>
      fetch(`${url()}/v1/chat/completions`, { method: 'POST', headers: { 'x-sim-fault': 'status=503', 'content-type': 'application/json' }, body: JSON.stringify({ messages, max_tokens: 2 }) }),
    );
    expect(busy.status).toBe(503);
    expect(((await busy.json()) as any).error.type).toBe('api_error');
  });

  test('/api/version, /api/ps context_length, no /metrics, owned_by library', async () => {
    expect((await getJson(url(), '/api/version')).version).toBeTypeOf('string');
    expect((await getJson(url(), '/api/ps')).models[0]).toMatchObject({ name: 'sim-tiny', context_length: 32768, size_vram: expect.any(Number) });
    expect((await fetch(`${url()}/metrics`)).status).toBe(404);
    expect((await getJson(url(), '/v1/models')).data[0].owned_by).toBe('library');
  });
});
