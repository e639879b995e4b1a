/** Prompt calibration against the embedded simulator: exact (both personalities, both endpoints) and estimated. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { getAdapter } from '../../src/engines/detect.js';
import { asNumber, asRecord, closeControlAgent, postJson } from '../../src/engines/http.js';
import type { EndpointKind, HttpTarget } from '../../src/shapes/engine.js';
import { PromptCalibrator, toleranceTokens } from '../../src/prompts/calibrate.js';
import { calibrationSamples, cellPrompts } from '../../src/prompts/cell-prompts.js';

const sims = new Map<string, SimHandle>();
beforeAll(async () => {
  for (const p of ['vllm', 'sglang'] as const) sims.set(p, await startSim({ profile: 'tiny', personality: p }));
});
afterAll(async () => {
  await Promise.all([...sims.values()].map((s) => s.close()));
  await closeControlAgent();
});

async function serverPromptTokens(target: HttpTarget, model: string, endpoint: EndpointKind, text: string): Promise<number> {
  const body = endpoint === 'chat' ? { model, messages: [{ role: 'user', content: text }], max_tokens: 1 } : { model, prompt: text, max_tokens: 1 };
  const res = await postJson(target, endpoint === 'chat' ? '/v1/chat/completions' : '/v1/completions', body, { timeoutMs: 60_000 });
  const n = asNumber(asRecord(asRecord(res.json)?.usage)?.prompt_tokens);
  if (n === undefined) throw new Error(`no usage.prompt_tokens (HTTP ${res.status}): ${res.text.slice(0, 200)}`);
  return n;
}

const cases = (['vllm', 'sglang'] as const).flatMap((p) => (['chat', 'completions'] as const).map((e) => [p, e] as const));

describe.each(cases)('exact calibration on sim %s, %s', (personality, endpoint) => {
  test('contexts land exactly; the server agrees', async () => {
    const target = { baseUrl: sims.get(personality)!.url };
    const adapter = getAdapter(personality);
    const facts = await adapter.probe(target);
    const cal = PromptCalibrator.forAdapter({ adapter, target, facts, endpoint });
    expect(cal.mode).toBe('exact');
    for (const N of [0, 1000, 4096, 16_000]) {
      const r = await cal.calibrate({ targetTokens: N, prefix: `run-e2e ${personality} ${endpoint} ctx ${N}`, ...calibrationSamples('shared') });
      expect(r.mode).toBe('exact');
      if (N > 0) expect(r.promptTokens).toBe(N);
      const real = cellPrompts({ sharedText: r.text, concurrency: 2, mode: 'shared' });
      // the real request (shared text + request tail) counts what the calibration said
      expect(await serverPromptTokens(target, facts.model.value, endpoint, real.prompt(1, 0))).toBe(r.promptTokens);
      // another request number keeps the count (fixed-width tail)
      expect(await serverPromptTokens(target, facts.model.value, endpoint, real.prompt(1, 4321))).toBe(r.promptTokens);
    }
  });
});

describe('estimated calibration on the sim (generic adapter: no tokenizer)', () => {
  test('within tolerance, count confirmed by the server', async () => {
    const target = { baseUrl: sims.get('vllm')!.url };
    const adapter = getAdapter('openai');
    const facts = await adapter.probe(target);
    let requests = 0;
    const cal = PromptCalibrator.forAdapter({
      adapter,
      target,
      facts,
      endpoint: 'chat',
      measurePromptTokens: (text) => {
        requests++;
        return serverPromptTokens(target, facts.model.value, 'chat', text);
      },
    });
    expect(cal.mode).toBe('estimated');
    for (const N of [2048, 12_000]) {
      const r = await cal.calibrate({ targetTokens: N, prefix: `run-est ctx ${N}` });
      expect(r.mode).toBe('estimated');
      expect(Math.abs(r.promptTokens - N)).toBeLessThanOrEqual(toleranceTokens(N));
      expect(await serverPromptTokens(target, facts.model.value, 'chat', r.text)).toBe(r.promptTokens);
    }
    expect(requests).toBeLessThanOrEqual(8);
  });
});
