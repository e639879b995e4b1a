import { afterAll, beforeAll, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { deltaText, getJson, post } from './helpers.js';

// The sim runs in its own worker thread (own event loop), as it does when the project measures.
let sim: SimHandle;
beforeAll(async () => {
  sim = await startSim({ profile: 'tiny', thread: true });
});
afterAll(async () => {
  await sim.close();
});

test('a single tiny stream emits one token per 10 ms step (client and ground truth within 5 %)', async () => {
  const n = 150;
  const r = await post(
    sim.url,
    '/v1/completions',
    { prompt: 'timing probe', max_tokens: n, ignore_eos: true, stream: true },
    { headers: { 'x-request-id': 'timing-1' } },
  );
  expect(r.done).toBe(true);
  const tokenEvents = r.events.filter((_, i) => r.json[i] && deltaText(r.json[i]!));
  expect(tokenEvents).toHaveLength(n);
  const clientGapMs = (tokenEvents[n - 1]!.atMs - tokenEvents[0]!.atMs) / (n - 1);
  expect(Math.abs(clientGapMs - 10) / 10).toBeLessThan(0.05);

  const truth = await getJson(sim.url, '/_sim/truth/timing-1');
  expect(truth.end).toBe('done');
  expect(truth.completionTokens).toBe(n);
  const t: [number, number][] = truth.tokens;
  expect(t).toHaveLength(n);
  expect(t.every(([, k]) => k === 1)).toBe(true);
  const truthGapMs = (t[n - 1]![0] - t[0]![0]) / (n - 1);
  expect(Math.abs(truthGapMs - 10) / 10).toBeLessThan(0.05);
  // the client saw each chunk after the sim wrote it (same monotonic clock across threads)
  expect(tokenEvents[0]!.atMs).toBeGreaterThanOrEqual(t[0]![0]);
  expect(truth.firstTokenMs).toBe(t[0]![0]);
  expect(truth.receivedMs).toBeLessThanOrEqual(truth.admittedMs);
});

test('tokensPerStep (k) puts k tokens in each chunk at the same step rate', async () => {
  const k3 = await startSim({ profile: 'tiny', thread: true, overrides: { tokensPerStep: 3 } });
  try {
    const r = await post(k3.url, '/v1/completions', { prompt: 'k probe', max_tokens: 30, ignore_eos: true, stream: true }, { headers: { 'x-request-id': 'k3' } });
    const truth = await getJson(k3.url, '/_sim/truth/k3');
    expect(truth.tokens.map((x: number[]) => x[1])).toEqual(new Array(10).fill(3));
    expect(r.json.filter((j) => deltaText(j)).length).toBe(10);
    const t = truth.tokens as [number, number][];
    const gap = (t[9]![0] - t[0]![0]) / 9;
    expect(Math.abs(gap - 10) / 10).toBeLessThan(0.1);
  } finally {
    await k3.close();
  }
});
