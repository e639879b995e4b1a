/**
 * The sim's `apiKey` wire knob (a server started with `--api-key`): requests without the key, or
 * with another, are answered 401 in the personality's error shape; what stays open is each
 * engine's rule, as seen on a real llama.cpp b4748 with `--api-key` (`/health` and `/v1/models`
 * open; `/props`, `/metrics`, `/slots`, `/tokenize` and the completions guarded), as vLLM's
 * middleware guards `/v1/*` only and SGLang's all but `/health*` and `/metrics*`, each with its
 * own 401 body.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveSimProfile, type SimPersonality } from '../../src/sim/profiles.js';
import { startSim, type SimHandle } from '../../src/sim/index.js';

const KEY = 'sk-sim-key-test';

async function status(url: string, method: 'GET' | 'POST', key?: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}) },
    ...(method === 'POST' ? { body: JSON.stringify({ model: 'sim-tiny', prompt: 'hi', content: 'hi', max_tokens: 2 }) } : {}),
  });
  return { status: res.status, body: await res.text() };
}

/** a sim of `personality` that checks KEY, for the describe block it is called in */
function keyedSim(personality: SimPersonality): { readonly url: string } {
  let sim: SimHandle | undefined;
  beforeAll(async () => {
    sim = await startSim({ profile: 'tiny', personality, overrides: { wire: { apiKey: KEY } } });
  });
  afterAll(() => sim?.close());
  return {
    get url() {
      return sim!.url;
    },
  };
}

describe('apiKey: llama.cpp personality', () => {
  const sim = keyedSim('llamacpp');

  test('guards every route but health and the models list, with llama.cpp\'s 401 body', async () => {
    for (const path of ['/health', '/v1/models']) {
      expect((await status(sim.url + path, 'GET')).status, path).toBe(200);
    }
    for (const [method, path] of [['GET', '/props'], ['GET', '/metrics'], ['GET', '/slots'], ['POST', '/tokenize'], ['POST', '/v1/completions']] as const) {
      const refused = await status(sim.url + path, method);
      expect(refused.status, path).toBe(401);
      expect(JSON.parse(refused.body), path).toEqual({ error: { code: 401, message: 'Invalid API Key', type: 'authentication_error' } });
      expect((await status(sim.url + path, method, 'sk-another-key')).status, `${path} with another key`).toBe(401);
      expect((await status(sim.url + path, method, KEY)).status, `${path} with the key`).toBe(200);
    }
  });

  test('the control routes stay open', async () => {
    expect((await status(`${sim.url}/_sim/truth`, 'GET')).status).toBe(200);
  });
});

describe('apiKey: vLLM personality', () => {
  const sim = keyedSim('vllm');

  test('guards /v1/* only, answering {"error":"Unauthorized"}', async () => {
    const refused = await status(`${sim.url}/v1/models`, 'GET');
    expect([refused.status, JSON.parse(refused.body)]).toEqual([401, { error: 'Unauthorized' }]);
    expect((await status(`${sim.url}/v1/models`, 'GET', KEY)).status).toBe(200);
    for (const path of ['/health', '/metrics']) expect((await status(sim.url + path, 'GET')).status, path).toBe(200);
  });
});

describe('apiKey: SGLang personality', () => {
  const sim = keyedSim('sglang');

  test('guards all but /health* and /metrics*, its server info included', async () => {
    for (const path of ['/health', '/health_generate', '/metrics']) expect((await status(sim.url + path, 'GET')).status, path).not.toBe(401);
    for (const path of ['/get_server_info', '/v1/models']) {
      const refused = await status(sim.url + path, 'GET');
      expect([refused.status, JSON.parse(refused.body)], path).toEqual([401, { error: 'Unauthorized' }]);
      expect((await status(sim.url + path, 'GET', KEY)).status, `${path} with the key`).toBe(200);
    }
  });
});

test('an empty key is refused with the knob named', () => {
  expect(() => resolveSimProfile('tiny', { wire: { apiKey: '' } }, 'vllm')).toThrow('sim wire knob apiKey = "" is invalid: give a non-empty string');
});
