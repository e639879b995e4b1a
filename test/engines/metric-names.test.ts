/**
 * Issue 18 (5): engines rename their metrics between versions. A figure an adapter expects but the
 * server does not expose is unknown (absent from the sample), never 0; llama.cpp's running figure
 * falls back from the decode counters to `requests_processing` to `/slots`, and says which.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { llamacppMetricsFromSamples, LlamacppAdapter, slotsState } from '../../src/engines/llamacpp.js';
import { parsePrometheus } from '../../src/engines/prometheus.js';
import { sglangMetricsFromSamples } from '../../src/engines/sglang.js';
import { tgiMetricsFromSamples } from '../../src/engines/tgi.js';
import { trtllmPrometheusSample, trtllmStatsSample } from '../../src/engines/trtllm.js';
import { vllmMetricsFromSamples } from '../../src/engines/vllm.js';
import { samplesLoad } from '../../src/metrics/server-load.js';
import { startFake, type FakeServer } from './fake-server.js';

const prom = (lines: string[]) => parsePrometheus(lines.map((l) => `${l}\n`).join('')).samples;

/** b4748's /metrics names (values of a busy 4-slot server) */
const B4748 = [
  'llamacpp:prompt_tokens_total 1234',
  'llamacpp:prompt_seconds_total 1.5',
  'llamacpp:tokens_predicted_total 5678',
  'llamacpp:tokens_predicted_seconds_total 8.5',
  'llamacpp:n_decode_total 1000',
  'llamacpp:n_busy_slots_per_decode 3.5',
  'llamacpp:prompt_tokens_seconds 0',
  'llamacpp:predicted_tokens_seconds 0',
  'llamacpp:kv_cache_usage_ratio 0.25',
  'llamacpp:kv_cache_tokens 4096',
  'llamacpp:requests_processing 3',
  'llamacpp:requests_deferred 2',
];

/** today's names as the fork of issue 18 serves them: no decode counters, no kv_cache_usage_ratio */
const CURRENT = [
  'llamacpp:prompt_tokens_total 1234',
  'llamacpp:prompt_tokens_cached_total 800',
  'llamacpp:prompt_seconds_total 1.5',
  'llamacpp:tokens_predicted_total 5678',
  'llamacpp:tokens_predicted_seconds_total 8.5',
  'llamacpp:n_tokens_max 4096',
  'llamacpp:prompt_tokens_seconds 0',
  'llamacpp:predicted_tokens_seconds 0',
  'llamacpp:kv_cache_tokens 4096',
  'llamacpp:requests_processing 3',
  'llamacpp:requests_deferred 0',
];

describe('llama.cpp metric names', () => {
  test("b4748's names: every figure, the decode counters included", () => {
    expect(llamacppMetricsFromSamples(prom(B4748), 7)).toEqual({
      atMs: 7,
      running: 3,
      waiting: 2,
      kvUsage: 0.25,
      promptTokensTotal: 1234,
      // the same counter, named for the prefix-cache hit rate: llama.cpp's counts processed tokens only
      promptTokensProcessedTotal: 1234,
      decodeCallsTotal: 1000,
      busySlotsPerDecode: 3.5,
    });
  });

  test("today's names: the absent decode counters and KV ratio are absent, not 0; a deferred count of 0 is 0", () => {
    const m = llamacppMetricsFromSamples(prom(CURRENT), 7);
    expect(m).toEqual({ atMs: 7, running: 3, waiting: 0, promptTokensTotal: 1234, promptTokensProcessedTotal: 1234 });
    expect('decodeCallsTotal' in m || 'busySlotsPerDecode' in m || 'kvUsage' in m).toBe(false);
  });

  test('a scrape with none of the names gives no figure at all', () => {
    expect(llamacppMetricsFromSamples(prom(['llamacpp:n_tokens_max 4096']), 7)).toEqual({ atMs: 7 });
  });

  test('/slots: is_processing (b4748, today), numeric state (2024), anything else unknown', () => {
    expect(slotsState([{ is_processing: true }, { is_processing: false }])).toEqual({ busy: 1, total: 2 });
    expect(slotsState([{ state: 1 }, { state: 0 }, { state: 0 }])).toEqual({ busy: 1, total: 3 });
    // a slot that says neither is not idle: the count is unknown
    expect(slotsState([{ is_processing: true }, { id: 1 }])).toBeUndefined();
    expect(slotsState([{ is_processing: 'yes' }])).toBeUndefined();
    expect(slotsState({ slots: [] })).toBeUndefined();
  });
});

describe('llama.cpp readMetrics: decode counters, then requests_processing, then /slots', () => {
  let s: FakeServer | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });
  const models = { json: { object: 'list', data: [{ id: 'm.gguf', object: 'model', owned_by: 'llamacpp' }] } };
  const props = { json: { default_generation_settings: { n_ctx: 4096 }, total_slots: 4 } };
  const slots = (busy: number) => ({ json: [0, 1, 2, 3].map((id) => ({ id, is_processing: id < busy, next_token: [{ n_remain: 1, n_decoded: 1 }] })) });

  test("today's names: running from requests_processing; /slots is not asked", async () => {
    s = await startFake({ 'GET /v1/models': models, 'GET /props': props, 'GET /slots': slots(1), 'GET /metrics': { text: CURRENT.join('\n') } });
    const a = new LlamacppAdapter();
    const facts = await a.probe({ baseUrl: s.url });
    const before = s.seen.filter((r) => r.path === '/slots').length;
    const m = await a.readMetrics({ baseUrl: s.url }, facts);
    expect(m).toMatchObject({ running: 3, waiting: 0 });
    expect(m?.runningFrom).toBeUndefined();
    expect(m?.decodeCallsTotal).toBeUndefined();
    expect(s.seen.filter((r) => r.path === '/slots').length).toBe(before);
    expect(samplesLoad([m!, { ...m!, atMs: m!.atMs + 1 }]).runningFrom).toBe('samples');
  });

  test('metrics without a running figure: the busy slots of /slots, named as such', async () => {
    s = await startFake({ 'GET /v1/models': models, 'GET /props': props, 'GET /slots': slots(2), 'GET /metrics': { text: 'llamacpp:prompt_tokens_total 5\nllamacpp:requests_deferred 1\n' } });
    const a = new LlamacppAdapter();
    const facts = await a.probe({ baseUrl: s.url });
    const m = await a.readMetrics({ baseUrl: s.url }, facts);
    expect(m).toMatchObject({ running: 2, runningFrom: 'slots', waiting: 1, promptTokensTotal: 5 });
    expect(samplesLoad([m!]).runningFrom).toBe('slots');
  });

  test('no --metrics (501) and /slots entries without a state: no running figure, not 0', async () => {
    s = await startFake({
      'GET /v1/models': models,
      'GET /props': props,
      'GET /slots': { json: [{ id: 0, n_ctx: 4096 }] },
      'GET /metrics': { status: 501, json: { error: { code: 501, message: 'This server does not support metrics endpoint. Start it with `--metrics`', type: 'not_supported_error' } } },
    });
    const a = new LlamacppAdapter();
    const facts = await a.probe({ baseUrl: s.url });
    expect(facts.metricsPath).toBeUndefined();
    expect(await a.readMetrics({ baseUrl: s.url }, facts)).toBeUndefined();
  });
});

describe('other adapters: an absent series stays absent', () => {
  test('vLLM without the waiting gauge or the prefix-cache counters', () => {
    const m = vllmMetricsFromSamples(prom(['vllm:num_requests_running{model_name="m"} 4', 'vllm:generation_tokens_total{model_name="m"} 100']), 1, 'm');
    expect(m).toEqual({ atMs: 1, running: 4, generationTokensTotal: 100 });
  });
  test('SGLang without its queue gauge', () => {
    expect(sglangMetricsFromSamples(prom(['sglang:num_running_reqs{tp_rank="0"} 2']), 1)).toEqual({ atMs: 1, running: 2 });
  });
  test('TGI without the batch size', () => {
    expect(tgiMetricsFromSamples(prom(['tgi_queue_size 3']), 1)).toEqual({ atMs: 1, waiting: 3 });
  });
  test('TRT-LLM: Prometheus without waiting; JSON stats without the queue count', () => {
    expect(trtllmPrometheusSample(prom(['trtllm_num_requests_running{model_name="undefined"} 5']), 1)).toEqual({ atMs: 1, running: 5 });
    expect(trtllmStatsSample({ numActiveRequests: 2 }, 1)).toEqual({ atMs: 1, running: 2 });
  });
  test('samplesLoad: a figure no sample has is undefined, not 0', () => {
    const load = samplesLoad([{ atMs: 1, promptTokensTotal: 5 }, { atMs: 2, promptTokensTotal: 6 }]);
    expect(load).toEqual({ runningSamples: 0 });
  });
});
