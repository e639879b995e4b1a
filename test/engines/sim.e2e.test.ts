/** The adapters against the embedded simulator, both personalities (src/sim). */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { countTokens as simCount, renderChat, startSim, type SimHandle } from '../../src/sim/index.js';
import { detectEngine, getAdapter } from '../../src/engines/detect.js';
import { asNumber, asRecord, closeControlAgent, postJson } from '../../src/engines/http.js';
import type { EngineKind, HttpTarget } from '../../src/shapes/engine.js';

const personalities = ['vllm', 'sglang'] as const;
const sims = new Map<string, SimHandle>();

beforeAll(async () => {
  for (const p of personalities) sims.set(p, await startSim({ profile: 'tiny', personality: p }));
});
afterAll(async () => {
  await Promise.all([...sims.values()].map((s) => s.close()));
  await closeControlAgent();
});

/** usage.prompt_tokens of one non-streaming max_tokens=1 request */
async function serverPromptTokens(target: HttpTarget, model: string, endpoint: 'chat' | 'completions', text: string): Promise<number | undefined> {
  const body = endpoint === 'chat' ? { model, messages: [{ role: 'user', content: text }], max_tokens: 1 } : { model, prompt: text, max_tokens: 1 };
  const res = await postJson(target, endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions', body);
  return asNumber(asRecord(asRecord(res.json)?.usage)?.prompt_tokens);
}

describe.each(personalities)('sim personality %s', (personality) => {
  const target = (): HttpTarget => ({ baseUrl: sims.get(personality)!.url });

  test('detectEngine tells it apart', async () => {
    expect((await detectEngine(target())).kind).toBe(personality as EngineKind);
  });

  test('probe facts match the profile', async () => {
    const sim = sims.get(personality)!;
    const facts = await getAdapter(personality).probe(target());
    expect(facts.engine.value).toBe(personality);
    expect(facts.model.value).toBe(sim.profile.modelId);
    expect(facts.version?.value).toBe(sim.profile.version);
    expect(facts.maxModelLen?.value).toBe(sim.profile.maxModelLen);
    expect(facts.kvCapacityTokens?.value).toBeGreaterThan(0);
    expect(facts.kvCapacityTokens!.value).toBeLessThanOrEqual(sim.profile.kvCapacityTokens);
    expect(facts.metricsPath).toBe('/metrics');
    expect(facts.tokenizePath).toBe(personality === 'vllm' ? '/tokenize' : '/v1/tokenize');
    if (personality === 'sglang') {
      expect(facts.maxRunningRequests?.value).toBe(sim.profile.maxRunningRequests);
      expect(facts.launchArgs?.value).toMatchObject({ tp_size: 1 });
    } else {
      expect(facts.blockSize?.value).toBe(sim.profile.blockSize);
    }
  });

  test('countTokens equals the server-counted prompt tokens (chat and completions)', async () => {
    const a = getAdapter(personality);
    const facts = await a.probe(target());
    const text = 'The quick brown fox jumps over the lazy dog, again and again.';
    const completions = await a.countTokens!(target(), facts, text, 'completions');
    expect(completions).toBe(simCount(text));
    expect(completions).toBe(await serverPromptTokens(target(), facts.model.value, 'completions', text));
    const chat = await a.countTokens!(target(), facts, text, 'chat');
    expect(chat).toBe(simCount(renderChat([{ role: 'user', content: text }])));
    expect(chat).toBe(await serverPromptTokens(target(), facts.model.value, 'chat', text));
  });

  test('readMetrics: idle gauges and counters that grow with requests', async () => {
    const a = getAdapter(personality);
    const facts = await a.probe(target());
    const before = await a.readMetrics!(target(), facts);
    expect(before).toBeDefined();
    expect(before!.running).toBe(0);
    expect(before!.waiting).toBe(0);
    expect(before!.kvUsage).toBeGreaterThanOrEqual(0);
    expect(before!.kvUsage).toBeLessThanOrEqual(1);
    const text = 'metrics probe text with a few words in it';
    await serverPromptTokens(target(), facts.model.value, 'completions', text);
    const after = await a.readMetrics!(target(), facts);
    expect(after!.promptTokensTotal! - before!.promptTokensTotal!).toBeGreaterThanOrEqual(simCount(text));
    expect(after!.generationTokensTotal! - before!.generationTokensTotal!).toBeGreaterThanOrEqual(1);
    expect(after!.atMs).toBeGreaterThan(before!.atMs);
  });
});
