/**
 * Issue 18: the official `openai` npm client and our client read the same text from every
 * personality. Each client streams the first request of its own fresh simulator (the sim seeds a
 * request's text by its sequence number, so the two first requests are the same), and our client
 * keeps each chunk's text (`keepText`), decoded by the adapter detection picks for that server.
 */
import { Client } from 'undici';
import OpenAI from 'openai';
import { describe, expect, test } from 'vitest';
import { streamRequest } from '../../src/client/stream.js';
import { getAdapter } from '../../src/engines/detect.js';
import type { EngineKind } from '../../src/shapes/engine.js';
import { startSim, type SimPersonality } from '../../src/sim/index.js';
import { SIM_PERSONALITY_NAMES } from '../../src/sim/profiles.js';

const KIND: Record<SimPersonality, EngineKind> = { vllm: 'vllm', sglang: 'sglang', llamacpp: 'llamacpp', tgi: 'tgi', trtllm: 'trtllm', ollama: 'ollama', bare: 'openai' };
const MAX = 12;
const overrides = { stepBaseMs: 1, eosProbability: 0, reasoningTokens: 3 };
const profileOf = (p: SimPersonality): string => (p === 'bare' ? 'bare' : 'tiny');
const modelOf = (p: SimPersonality): string => (p === 'bare' ? 'sim-bare' : 'sim-tiny');

async function officialText(p: SimPersonality, endpoint: 'chat' | 'completions'): Promise<string> {
  const sim = await startSim({ profile: profileOf(p), personality: p, overrides });
  try {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 10_000 });
    let text = '';
    if (endpoint === 'chat') {
      const stream = await client.chat.completions.create({ model: modelOf(p), messages: [{ role: 'user', content: 'hello there' }], max_tokens: MAX, stream: true });
      for await (const chunk of stream) {
        const d = chunk.choices[0]?.delta as { content?: string | null; reasoning?: string; reasoning_content?: string } | undefined;
        text += (d?.reasoning_content ?? d?.reasoning ?? '') + (d?.content ?? '');
      }
    } else {
      const stream = await client.completions.create({ model: modelOf(p), prompt: 'hello there', max_tokens: MAX, stream: true });
      for await (const chunk of stream) text += chunk.choices[0]?.text ?? '';
    }
    return text;
  } finally {
    await sim.close();
  }
}

async function ourText(p: SimPersonality, endpoint: 'chat' | 'completions'): Promise<string> {
  const sim = await startSim({ profile: profileOf(p), personality: p, overrides });
  const adapter = getAdapter(KIND[p]);
  const dispatcher = new Client(new URL(sim.url).origin);
  try {
    const req = adapter.buildStreamRequest({ model: modelOf(p), endpoint, prompt: 'hello there', maxTokens: MAX, forceLength: true });
    const t = await streamRequest({
      id: `same-${p}-${endpoint}`,
      dispatcher,
      origin: new URL(sim.url).origin,
      path: req.path,
      body: req.body,
      decode: (x) => adapter.decodeChunk(x),
      endsWithDone: adapter.endsWithDone,
      keepText: true,
      timeouts: { headersMs: 5_000, stallMs: 5_000 },
    });
    expect(t.end?.kind, JSON.stringify(t.end)).toBe('done');
    return (t.chunkText ?? []).join('');
  } finally {
    await dispatcher.close();
    await sim.close();
  }
}

describe('the official client and ours read the same text', () => {
  test.each(SIM_PERSONALITY_NAMES.flatMap((p) => (['chat', 'completions'] as const).map((e) => [p, e] as const)))('%s, %s', async (p, endpoint) => {
    const official = await officialText(p, endpoint);
    const ours = await ourText(p, endpoint);
    expect(official.length).toBeGreaterThan(0);
    expect(ours).toBe(official);
  });
});
