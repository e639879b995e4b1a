/**
 * The prefix-cache evidence each personality gives, as its real engine does (issue 23):
 * - llama.cpp (b4748): no cached_tokens in usage; usage.prompt_tokens is the whole prompt and
 *   timings.prompt_n the computed part; `llamacpp:prompt_tokens_total` adds the computed part when
 *   the first token is sampled (server.cpp on_prompt_eval), not when the request ends;
 * - SGLang: `prompt_tokens_total` (cached included) and `cached_tokens_total` grow when a request
 *   finishes (TokenizerMetricsCollector.observe_one_finished_request).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { getJson, getText, metricValue, post, type StreamResult } from './helpers.js';

const prefix = Array.from({ length: 2048 }, (_, i) => `p${i % 89}`).join(' ');

/** a streamed completion of `prefix + tail`; `during` runs once its first event has arrived, while it streams on */
async function streamWhile(sim: SimHandle, id: string, tail: string, during: () => Promise<string>): Promise<{ r: StreamResult; mid: string; truth: any }> {
  let mid: Promise<string> | undefined;
  const r = await post(
    sim.url,
    '/v1/completions',
    { prompt: `${prefix} ${tail}`, max_tokens: 30, ignore_eos: true, stream: true, stream_options: { include_usage: true } },
    { headers: { 'x-request-id': id }, abortWhen: () => ((mid ??= during()), false) },
  );
  const truth = await getJson(sim.url, `/_sim/truth/${id}`);
  return { r, mid: await mid!, truth };
}

describe('llama.cpp personality', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ personality: 'llamacpp', thread: true, overrides: { stepBaseMs: 10, eosProbability: 0 } });
  });
  afterAll(async () => {
    await sim?.close();
  });

  test('hits show as prompt_tokens − timings.prompt_n; the processed counter grows at the first token', async () => {
    const processed = (t: string): number => metricValue(t, 'llamacpp:prompt_tokens_total') ?? NaN;
    const m0 = await getText(sim.url, '/metrics');
    const cold = await streamWhile(sim, 'lc-cold', 'first tail', () => getText(sim.url, '/metrics'));
    const m1 = await getText(sim.url, '/metrics');
    const warm = await streamWhile(sim, 'lc-warm', 'second tail', () => getText(sim.url, '/metrics'));
    const last = (s: StreamResult) => s.json[s.json.length - 1]!;

    expect(cold.truth.cachedTokens).toBe(0);
    expect(warm.truth.cachedTokens).toBeGreaterThan(2000);
    for (const { r, truth } of [cold, warm]) {
      const final = last(r);
      expect(final.usage.prompt_tokens).toBe(truth.promptTokens);
      expect(final.usage.prompt_tokens_details).toBeUndefined();
      expect(final.timings.prompt_n).toBe(truth.promptTokens - truth.cachedTokens);
    }
    // counted while the request still streamed, by its computed prompt tokens only
    expect(processed(cold.mid) - processed(m0)).toBe(cold.truth.promptTokens);
    expect(processed(warm.mid) - processed(m1)).toBe(warm.truth.promptTokens - warm.truth.cachedTokens);
    expect(processed(await getText(sim.url, '/metrics'))).toBe(processed(warm.mid));
  });
});

describe('SGLang personality', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ personality: 'sglang', thread: true, overrides: { stepBaseMs: 10, eosProbability: 0 } });
  });
  afterAll(async () => {
    await sim?.close();
  });

  test('prompt and cached token counters grow when the request finishes, by its usage', async () => {
    const prompt = (t: string): number => metricValue(t, 'sglang:prompt_tokens_total') ?? NaN;
    const cached = (t: string): number => metricValue(t, 'sglang:cached_tokens_total') ?? NaN;
    await streamWhile(sim, 'sg-cold', 'first tail', () => getText(sim.url, '/metrics'));
    const m1 = await getText(sim.url, '/metrics');
    const warm = await streamWhile(sim, 'sg-warm', 'second tail', () => getText(sim.url, '/metrics'));
    const m2 = await getText(sim.url, '/metrics');
    expect(warm.truth.cachedTokens).toBeGreaterThan(2000);
    expect(prompt(warm.mid)).toBe(prompt(m1));
    expect(cached(warm.mid)).toBe(cached(m1));
    expect(prompt(m2) - prompt(m1)).toBe(warm.truth.promptTokens);
    expect(cached(m2) - cached(m1)).toBe(warm.truth.cachedTokens);
    expect(warm.r.json[warm.r.json.length - 1]!.usage.prompt_tokens_details.cached_tokens).toBe(warm.truth.cachedTokens);
  });
});
