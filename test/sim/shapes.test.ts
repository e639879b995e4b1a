import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { countTokens } from '../../src/sim/tokenizer.js';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { deltaText, getJson, getText, metricValue, post, postJson } from './helpers.js';

const prompt = 'The quick brown fox jumps over the lazy dog again and again';
const messages = [{ role: 'user', content: prompt }];

describe.each(['vllm', 'sglang'] as const)('%s personality', (personality) => {
  let sim: SimHandle;
  let simReasoning: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'tiny', personality, overrides: { stepBaseMs: 2 } });
    simReasoning = await startSim({ profile: 'tiny', personality, overrides: { stepBaseMs: 2, reasoningTokens: 3 } });
  });
  afterAll(async () => {
    await sim.close();
    await simReasoning.close();
  });

  test('chat stream: role chunk first, content deltas, usage-only final chunk, [DONE]', async () => {
    const r = await post(sim.url, '/v1/chat/completions', { messages, max_tokens: 6, ignore_eos: true, stream: true, stream_options: { include_usage: true } });
    expect(r.status).toBe(200);
    expect(r.done).toBe(true);
    expect(r.json[0]!.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(r.json[0]!.object).toBe('chat.completion.chunk');
    const last = r.json[r.json.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage.completion_tokens).toBe(6);
    const text = r.json.map(deltaText).join('');
    expect(countTokens(text)).toBe(6);
    const finishes = r.json.flatMap((j) => j.choices.map((c: any) => c.finish_reason)).filter((f) => f);
    expect(finishes).toEqual(['length']);
    if (personality === 'sglang') {
      // SGLang sends finish_reason on its own chunk with an empty delta
      const fin = r.json.find((j) => j.choices[0]?.finish_reason)!;
      expect(fin.choices[0].delta).toEqual({});
    } else {
      const fin = r.json.find((j) => j.choices[0]?.finish_reason)!;
      expect(deltaText(fin).length).toBeGreaterThan(0);
    }
  });

  test('prompt tokens in usage equal the tokenize endpoint count (chat and completions)', async () => {
    const tokPath = personality === 'vllm' ? '/tokenize' : '/v1/tokenize';
    const chatTok = await postJson(sim.url, tokPath, { messages, add_generation_prompt: true });
    const compTok = await postJson(sim.url, tokPath, { prompt });
    expect(compTok.json.count).toBe(countTokens(prompt));
    expect(compTok.json.tokens).toHaveLength(compTok.json.count);
    expect(compTok.json.max_model_len).toBe(32768);
    expect(chatTok.json.count).toBe(countTokens(prompt) + 3);
    const chat = await postJson(sim.url, '/v1/chat/completions', { messages, max_tokens: 2 });
    expect(chat.json.usage.prompt_tokens).toBe(chatTok.json.count);
    const comp = await postJson(sim.url, '/v1/completions', { prompt, max_tokens: 2 });
    expect(comp.json.usage.prompt_tokens).toBe(compTok.json.count);
    expect(comp.json.choices[0].text.length).toBeGreaterThan(0);
    const detokPath = personality === 'vllm' ? '/detokenize' : '/v1/detokenize';
    const detok = await postJson(sim.url, detokPath, { tokens: compTok.json.tokens });
    expect(detok.json[personality === 'vllm' ? 'prompt' : 'text']).toBe(prompt);
  });

  test('continuous usage stats: vLLM only with include_usage, SGLang on its own', async () => {
    const alone = await post(sim.url, '/v1/chat/completions', { messages, max_tokens: 4, ignore_eos: true, stream: true, stream_options: { continuous_usage_stats: true } });
    const withUsage = alone.json.filter((j) => j.usage && j.choices.length > 0);
    expect(withUsage.length > 0).toBe(personality === 'sglang');
    const both = await post(sim.url, '/v1/chat/completions', {
      messages,
      max_tokens: 4,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    const counts = both.json.filter((j) => j.choices.length > 0 && deltaText(j)).map((j) => j.usage.completion_tokens);
    expect(counts).toEqual([1, 2, 3, 4]);
  });

  test('completions stream: text chunks, no role chunk', async () => {
    const r = await post(sim.url, '/v1/completions', { prompt, max_tokens: 5, ignore_eos: true, stream: true });
    expect(r.done).toBe(true);
    expect(r.json.every((j) => j.object === 'text_completion')).toBe(true);
    expect(r.json.some((j) => j.choices[0]?.delta)).toBe(false);
    expect(countTokens(r.json.map(deltaText).join(''))).toBe(5);
  });

  test('reasoning phase uses the personality field name', async () => {
    const field = personality === 'vllm' ? 'reasoning' : 'reasoning_content';
    const other = personality === 'vllm' ? 'reasoning_content' : 'reasoning';
    const r = await post(simReasoning.url, '/v1/chat/completions', { messages, max_tokens: 6, ignore_eos: true, stream: true });
    const reasoning = r.json.filter((j) => j.choices[0]?.delta?.[field]).length;
    const content = r.json.filter((j) => j.choices[0]?.delta?.content).length;
    expect(reasoning).toBe(3);
    expect(content).toBe(3);
    expect(r.json.some((j) => j.choices[0]?.delta?.[other])).toBe(false);
  });

  test('error bodies: unknown model 404, context overflow 400', async () => {
    const bad = await postJson(sim.url, '/v1/chat/completions', { model: 'nope', messages, max_tokens: 2 });
    expect(bad.status).toBe(404);
    const overflow = await postJson(sim.url, '/v1/completions', { prompt, max_tokens: 40_000 });
    expect(overflow.status).toBe(400);
    if (personality === 'vllm') {
      expect(overflow.json.error.message).toMatch(/maximum context length is 32768 tokens/);
      expect(overflow.json.error.param).toBe('max_tokens');
    } else {
      expect(overflow.json.object).toBe('error');
      expect(overflow.json.message).toMatch(/maximum context length/);
    }
  });

  test('models, version, health, info endpoints and metric names', async () => {
    const models = await getJson(sim.url, '/v1/models');
    expect(models.data[0]).toMatchObject({ id: 'sim-tiny', owned_by: personality, max_model_len: 32768 });
    expect((await getJson(sim.url, '/version')).version).toBeTypeOf('string');
    expect((await fetch(`${sim.url}/health`)).status).toBe(200);
    const metrics = await getText(sim.url, '/metrics');
    if (personality === 'vllm') {
      for (const n of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total', 'vllm:prefix_cache_queries_total', 'vllm:prefix_cache_hits_total']) {
        expect(metricValue(metrics, n), n).toBeTypeOf('number');
      }
      expect(metrics).toMatch(/vllm:cache_config_info\{block_size="16",.*num_gpu_blocks="4096"/);
      expect(metrics).toContain('model_name="sim-tiny"');
      expect((await fetch(`${sim.url}/get_server_info`)).status).toBe(404);
    } else {
      for (const n of ['sglang:num_running_reqs', 'sglang:num_queue_reqs', 'sglang:token_usage', 'sglang:num_used_tokens', 'sglang:prompt_tokens_total', 'sglang:generation_tokens_total', 'sglang:cached_tokens_total']) {
        expect(metricValue(metrics, n), n).toBeTypeOf('number');
      }
      expect(metricValue(metrics, 'sglang:max_total_num_tokens')).toBe(65536);
      expect(metrics).toContain('engine_type="unified",model_name="sim-tiny",pp_rank="0",tp_rank="0"');
      const info = await getJson(sim.url, '/get_server_info');
      expect(info).toMatchObject({ max_total_num_tokens: 65536, api_key: null, max_running_requests: 8 });
      expect(info.max_req_input_len).toBeTypeOf('number');
      expect(info.version).toBeTypeOf('string');
      expect((await fetch(`${sim.url}/tokenize`, { method: 'POST', body: '{}' })).status).toBe(404);
    }
  });

  test('non-streaming chat returns one JSON body with usage', async () => {
    const r = await postJson(sim.url, '/v1/chat/completions', { messages, max_completion_tokens: 4, ignore_eos: true });
    expect(r.status).toBe(200);
    expect(r.json.object).toBe('chat.completion');
    expect(countTokens(r.json.choices[0].message.content)).toBe(4);
    expect(r.json.usage.completion_tokens).toBe(4);
  });
});

test('simulated EOS ends generation early unless ignore_eos; min_tokens holds it off', async () => {
  const sim = await startSim({ profile: 'tiny', overrides: { stepBaseMs: 1, eosProbability: 0.3 } });
  try {
    const lens: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await postJson(sim.url, '/v1/completions', { prompt: `p${i}`, max_tokens: 60 });
      lens.push(r.json.usage.completion_tokens);
      if (r.json.usage.completion_tokens < 60) expect(r.json.choices[0].finish_reason).toBe('stop');
    }
    expect(Math.min(...lens)).toBeLessThan(60);
    const forced = await postJson(sim.url, '/v1/completions', { prompt: 'x', max_tokens: 60, ignore_eos: true });
    expect(forced.json.usage.completion_tokens).toBe(60);
    expect(forced.json.choices[0].finish_reason).toBe('length');
    for (let i = 0; i < 3; i++) {
      const m = await postJson(sim.url, '/v1/completions', { prompt: `m${i}`, max_tokens: 60, min_tokens: 40 });
      expect(m.json.usage.completion_tokens).toBeGreaterThanOrEqual(40);
    }
  } finally {
    await sim.close();
  }
});
