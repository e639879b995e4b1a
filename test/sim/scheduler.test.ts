import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { getJson, getText, metricValue, post, waitFor } from './helpers.js';

describe('queueing beyond max running requests', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'tiny' });
  });
  afterAll(async () => {
    await sim.close();
  });

  test('10 requests with max running 8: 8 run, 2 wait, /metrics shows it, all finish', async () => {
    const runs = Array.from({ length: 10 }, (_, i) =>
      post(sim.url, '/v1/completions', { prompt: `queue ${i}`, max_tokens: 50, ignore_eos: true, stream: true }, { headers: { 'x-request-id': `q${i}` } }),
    );
    let seen = { running: -1, waiting: -1 };
    const ok = await waitFor(async () => {
      const m = await getText(sim.url, '/metrics');
      seen = { running: metricValue(m, 'vllm:num_requests_running') ?? -1, waiting: metricValue(m, 'vllm:num_requests_waiting') ?? -1 };
      return seen.running === 8 && seen.waiting === 2;
    });
    expect(ok, JSON.stringify(seen)).toBe(true);
    const results = await Promise.all(runs);
    expect(results.every((r) => r.done)).toBe(true);
    const truths = await Promise.all(results.map((_, i) => getJson(sim.url, `/_sim/truth/q${i}`)));
    const admitted = truths.map((t) => t.admittedMs - t.receivedMs).sort((a, b) => a - b);
    // the last two waited for a slot: about one whole request (50 steps × 10 ms)
    expect(admitted[8]!).toBeGreaterThan(300);
    expect(admitted[7]!).toBeLessThan(200);
    const m = await getText(sim.url, '/metrics');
    expect(metricValue(m, 'vllm:num_requests_running')).toBe(0);
    expect(metricValue(m, 'vllm:generation_tokens_total')).toBe(500);
  });
});

describe('queueing when the KV cache is full', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    // 64 blocks of 16 tokens; each request reserves ceil((prompt + 400) / 16) ≈ 26 blocks → 2 fit
    sim = await startSim({ profile: 'tiny', personality: 'sglang', overrides: { kvCapacityTokens: 1024, maxModelLen: 1024 } });
  });
  afterAll(async () => {
    await sim.close();
  });

  test('the third request waits for blocks; sglang metrics show queue and usage', async () => {
    const ctrl: { stop?: boolean } = {};
    const runs = Array.from({ length: 3 }, (_, i) =>
      post(
        sim.url,
        '/v1/completions',
        { prompt: `kv ${i}`, max_tokens: 400, ignore_eos: true, stream: true },
        { headers: { 'x-request-id': `kv${i}` }, abortWhen: () => ctrl.stop === true },
      ),
    );
    let seen = {};
    const ok = await waitFor(async () => {
      const m = await getText(sim.url, '/metrics');
      const running = metricValue(m, 'sglang:num_running_reqs');
      const waiting = metricValue(m, 'sglang:num_queue_reqs');
      const usage = metricValue(m, 'sglang:token_usage') ?? 0;
      seen = { running, waiting, usage };
      return running === 2 && waiting === 1 && usage > 0.75;
    });
    expect(ok, JSON.stringify(seen)).toBe(true);
    const state = await getJson(sim.url, '/_sim/state');
    expect(state.kvUsedTokens).toBeGreaterThan(800);
    expect(state.kvCapacityTokens).toBe(1024);
    ctrl.stop = true;
    await Promise.all(runs);
    // the aborted streams free their blocks
    expect(await waitFor(async () => (await getJson(sim.url, '/_sim/state')).kvUsedTokens === 0)).toBe(true);
  });
});
