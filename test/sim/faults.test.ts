import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { monoMs } from '../../src/clock.js';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { deltaText, getJson, post, waitFor } from './helpers.js';

const body = { prompt: 'fault probe', max_tokens: 12, ignore_eos: true, stream: true };

describe.each(['vllm', 'sglang'] as const)('per-request fault knobs (%s)', (personality) => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({ profile: 'tiny', personality, overrides: { stepBaseMs: 5 } });
  });
  afterAll(async () => {
    await sim.close();
  });
  const go = (fault: string, id: string) => post(sim.url, '/v1/completions', body, { headers: { 'x-sim-fault': fault, 'x-request-id': id } });

  test.each([500, 429, 503])('status=%i answers that HTTP status with the personality error body', async (status) => {
    const r = await go(`status=${status}`, `s${status}`);
    expect(r.status).toBe(status);
    const j = JSON.parse(r.body);
    if (personality === 'vllm') expect(j.error).toMatchObject({ code: status, message: expect.any(String) });
    else expect(j).toMatchObject({ object: 'error', code: status, message: expect.any(String) });
  });

  test('stall-ms=500@4: no tokens for 500 ms after the 4th token, then the stream completes', async () => {
    const r = await go('stall-ms=500@4', 'stall');
    expect(r.done).toBe(true);
    const tok = r.events.filter((_, i) => r.json[i] && deltaText(r.json[i]!));
    expect(tok).toHaveLength(12);
    const gaps = tok.slice(1).map((e, i) => e.atMs - tok[i]!.atMs);
    expect(gaps[3]!).toBeGreaterThan(480);
    expect(Math.max(...gaps.filter((_, i) => i !== 3))).toBeLessThan(200);
    const truth = await getJson(sim.url, '/_sim/truth/stall');
    expect(truth.tokens[4][0] - truth.tokens[3][0]).toBeGreaterThan(495);
  });

  test('error-after=5: an error event after 5 tokens, then [DONE]; the request is freed', async () => {
    const r = await go('error-after=5', 'err');
    const errIdx = r.json.findIndex((j) => j.error);
    expect(errIdx).toBeGreaterThan(0);
    expect(r.json.slice(0, errIdx).filter((j) => deltaText(j)).length).toBe(5);
    expect(r.json[errIdx]!.error.code).toBe(500);
    expect(r.done).toBe(true);
    expect((await getJson(sim.url, '/_sim/truth/err')).end).toBe('error');
    expect(await waitFor(async () => (await getJson(sim.url, '/_sim/state')).running === 0)).toBe(true);
  });

  test('close-after=5: the stream ends after 5 tokens without [DONE]', async () => {
    const r = await go('close-after=5', 'close');
    expect(r.json.filter((j) => deltaText(j)).length).toBe(5);
    expect(r.done).toBe(false);
    expect((await getJson(sim.url, '/_sim/truth/close')).end).toBe('error');
  });

  test('malformed-after=3: one chunk is not JSON, the stream still completes', async () => {
    const r = await go('malformed-after=3', 'mal');
    expect(r.malformed).toBe(1);
    expect(r.done).toBe(true);
    expect(r.json.filter((j) => deltaText(j)).length).toBe(12);
  });

  test('huge-chunk-after=3: one chunk over 2 MB, tokens intact', async () => {
    const r = await go('huge-chunk-after=3,huge-bytes=2000000', 'huge');
    const sizes = r.events.map((e) => e.data.length);
    expect(Math.max(...sizes)).toBeGreaterThan(2_000_000);
    expect(r.json.filter((j) => deltaText(j)).length).toBe(12);
    expect(r.done).toBe(true);
  });

  test('headers-delay-ms=400: response headers arrive 400 ms late', async () => {
    const t0 = monoMs();
    const r = await go('headers-delay-ms=400', 'hdr');
    expect(r.headersMs - t0).toBeGreaterThan(390);
    expect(r.done).toBe(true);
  });

  test('an unknown fault knob is a 400 naming it', async () => {
    const r = await go('explode=1', 'bad');
    expect(r.status).toBe(400);
    expect(r.body).toMatch(/explode/);
  });
});

test('profile fault rates are drawn from a seeded PRNG: same seed and ids, same faults', async () => {
  const pattern = async (): Promise<number[]> => {
    const sim = await startSim({ profile: 'tiny', overrides: { stepBaseMs: 1, faults: { http500Rate: 0.3, http429Rate: 0.2 } } });
    try {
      const out: number[] = [];
      for (let i = 0; i < 30; i++) {
        const r = await post(sim.url, '/v1/completions', { prompt: 'r', max_tokens: 1 }, { headers: { 'x-request-id': `rate-${i}` } });
        out.push(r.status);
      }
      return out;
    } finally {
      await sim.close();
    }
  };
  const a = await pattern();
  const b = await pattern();
  expect(a).toEqual(b);
  const n500 = a.filter((s) => s === 500).length;
  const n429 = a.filter((s) => s === 429).length;
  expect(n500).toBeGreaterThan(2);
  expect(n500).toBeLessThan(20);
  expect(n429).toBeGreaterThan(0);
  expect(a.filter((s) => s === 200).length).toBeGreaterThan(5);
});

test('a client disconnect aborts the request and frees its blocks', async () => {
  const sim = await startSim({ profile: 'tiny', thread: true });
  try {
    const r = await post(sim.url, '/v1/completions', { prompt: 'abort me', max_tokens: 500, ignore_eos: true, stream: true }, { headers: { 'x-request-id': 'ab' }, abortAfterEvents: 5 });
    expect(r.events).toHaveLength(5);
    expect(await waitFor(async () => (await getJson(sim.url, '/_sim/truth/ab')).end === 'aborted')).toBe(true);
    const s1 = await getJson(sim.url, '/_sim/state');
    expect(s1.running).toBe(0);
    expect(s1.kvUsedTokens).toBe(0);
    const truth = await getJson(sim.url, '/_sim/truth/ab');
    expect(truth.completionTokens).toBeLessThan(20);
    await new Promise((res) => setTimeout(res, 100));
    const s2 = await getJson(sim.url, '/_sim/state');
    expect(s2.counters.generationTokensTotal).toBe(s1.counters.generationTokensTotal);
  } finally {
    await sim.close();
  }
});
