import { afterAll, beforeAll, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { getJson, getText, metricValue, post } from './helpers.js';

let sim: SimHandle;
beforeAll(async () => {
  // 0.05 ms per prefill token: a cold 8K-token prompt costs ~400 ms of prefill
  sim = await startSim({ profile: 'tiny', thread: true, overrides: { prefillPerTokenMs: 0.05 } });
});
afterAll(async () => {
  await sim.close();
});

const longPrefix = Array.from({ length: 8192 }, (_, i) => `w${i % 97}`).join(' ');

async function ask(id: string, tail: string): Promise<{ ttftMs: number; truth: any }> {
  const r = await post(sim.url, '/v1/completions', { prompt: `${longPrefix} ${tail}`, max_tokens: 3, ignore_eos: true, stream: true, stream_options: { include_usage: true } }, { headers: { 'x-request-id': id } });
  expect(r.done).toBe(true);
  const truth = await getJson(sim.url, `/_sim/truth/${id}`);
  const usage = r.json[r.json.length - 1]!.usage;
  expect(usage.prompt_tokens_details.cached_tokens).toBe(truth.cachedTokens);
  return { ttftMs: truth.firstTokenMs - truth.receivedMs, truth };
}

test('a repeated long prefix hits the prefix cache: lower TTFT, cached-token counters rise', async () => {
  const before = await getText(sim.url, '/metrics');
  const cold = await ask('cold', 'first tail');
  expect(cold.truth.cachedTokens).toBe(0);
  const mid = await getText(sim.url, '/metrics');
  const warm = await ask('warm', 'second tail');
  const after = await getText(sim.url, '/metrics');

  expect(cold.truth.promptTokens).toBeGreaterThan(8192);
  // all full 16-token blocks of the shared prefix are reused
  expect(warm.truth.cachedTokens).toBeGreaterThan(8000);
  expect(warm.truth.cachedTokens % 16).toBe(0);
  expect(cold.ttftMs).toBeGreaterThan(300);
  expect(warm.ttftMs).toBeLessThan(cold.ttftMs / 3);

  const hits = (t: string) => metricValue(t, 'vllm:prefix_cache_hits_total') ?? NaN;
  const queries = (t: string) => metricValue(t, 'vllm:prefix_cache_queries_total') ?? NaN;
  expect(hits(mid) - hits(before)).toBe(0);
  expect(hits(after) - hits(mid)).toBe(warm.truth.cachedTokens);
  expect(queries(after) - queries(mid)).toBe(warm.truth.promptTokens);

  // POST /_sim/reset clears the cache: the same prompt is cold again
  await fetch(`${sim.url}/_sim/reset`, { method: 'POST' });
  const again = await ask('again', 'second tail');
  expect(again.truth.cachedTokens).toBe(0);
});
