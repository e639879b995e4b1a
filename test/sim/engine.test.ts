import { describe, expect, test } from 'vitest';
import { EngineRequest, SimEngine, type FinishReason } from '../../src/sim/engine-model.js';
import { hashPromptBlocks, KvCache } from '../../src/sim/kv-cache.js';
import { fnv1a } from '../../src/random.js';
import { getSimProfile, resolveSimProfile, SIM_PROFILES } from '../../src/sim/profiles.js';

function words(n: number, salt = 'w'): string {
  return Array.from({ length: n }, (_, i) => `${salt}${(i % 36).toString(36)}`).join(' ') + ' ';
}

/** Runs an engine in virtual time; returns per-request emission times. */
function simulate(profile = getSimProfile('tiny'), prompts: { text: string; max: number }[], untilMs = 1e7) {
  const engine = new SimEngine(profile);
  let now = 0;
  const out = prompts.map(() => ({ times: [] as number[], counts: [] as number[], finish: undefined as FinishReason | undefined, req: undefined as EngineRequest | undefined }));
  prompts.forEach((p, i) => {
    const o = out[i]!;
    const req = new EngineRequest(hashPromptBlocks(p.text, profile.blockSize, profile.prefixCaching), p.max, Infinity, {
      onAdmit() {},
      onTokens(n, finish) {
        o.times.push(now);
        o.counts.push(n);
        o.finish = finish;
      },
    });
    o.req = req;
    engine.submit(req, now);
  });
  while (now < untilMs) {
    const plan = engine.runStep(now);
    if (plan.kind === 'step') now += plan.durationMs;
    else if (plan.kind === 'wait') now = plan.untilMs;
    else break;
  }
  return { engine, out, now };
}

describe('sim engine (virtual time)', () => {
  test('handingOver: a request given the place one finishing at that instant freed, until the next step is planned', () => {
    const p = resolveSimProfile('tiny', { maxRunningRequests: 1, prefillPerTokenMs: 0, stepBaseMs: 10, stepPerRequestMs: 0, stepPerKvTokenMs: 0 });
    const engine = new SimEngine(p);
    const sink = { onAdmit() {}, onTokens() {} };
    const a = new EngineRequest(hashPromptBlocks(words(10, 'a'), p.blockSize, p.prefixCaching), 3, Infinity, sink);
    const b = new EngineRequest(hashPromptBlocks(words(10, 'b'), p.blockSize, p.prefixCaching), 3, Infinity, sink);
    engine.submit(a, 0);
    engine.submit(b, 0);
    let now = 0;
    const seen: string[] = [];
    while (now < 1e5 && seen.length < 12) {
      const plan = engine.runStep(now);
      seen.push(`${engine.running.includes(b) ? 'b' : engine.running.includes(a) ? 'a' : '-'}${engine.running.some((r) => engine.handingOver(r)) ? '*' : ''}`);
      if (plan.kind === 'step') now += plan.durationMs;
      else if (plan.kind === 'wait') now = plan.untilMs;
      else break;
    }
    // a admitted on an idle engine (no hand-over), b takes a's place the instant a finishes: handing
    // over for that one step only
    expect(seen.filter((x) => x.endsWith('*'))).toEqual(['b*']);
    expect(seen[0]).toBe('a');
    expect(seen.indexOf('b*')).toBe(seen.lastIndexOf('a') + 1);
    expect(seen[seen.indexOf('b*') + 1]).toBe('b');
  });

  test('a request aborted from its own sink mid-step (a close-after fault) does not delay the next one', () => {
    const p = resolveSimProfile('tiny', { prefillPerTokenMs: 0, stepBaseMs: 10, stepPerRequestMs: 0, stepPerKvTokenMs: 0 });
    const engine = new SimEngine(p);
    let now = 0;
    const times: number[][] = [[], [], []];
    const reqs: EngineRequest[] = [];
    for (let i = 0; i < 3; i++) {
      const req = new EngineRequest(hashPromptBlocks(words(10, `a${i}`), p.blockSize, p.prefixCaching), 6, Infinity, {
        onAdmit() {},
        onTokens() {
          times[i]!.push(now);
          // the first request's sink aborts it at its second token, as a close-after fault does
          if (i === 0 && times[0]!.length === 2) engine.abort(req);
        },
      });
      reqs.push(req);
      engine.submit(req, now);
    }
    while (now < 1e6) {
      const plan = engine.runStep(now);
      if (plan.kind === 'step') now += plan.durationMs;
      else if (plan.kind === 'wait') now = plan.untilMs;
      else break;
    }
    expect(times[0]).toHaveLength(2);
    // the others got a token at every step, the one where the first was aborted included
    expect(times[1]).toHaveLength(6);
    expect(times[1]).toEqual(times[2]);
    expect(times[1]![2]! - times[1]![1]!).toBeCloseTo(10, 5);
    expect(engine.running.length).toBe(0);
  });

  test('step time follows a + b·batch + c·kv', () => {
    const p = resolveSimProfile('tiny', { stepBaseMs: 10, stepPerRequestMs: 1, stepPerKvTokenMs: 0.001, prefillPerTokenMs: 0 });
    const { out } = simulate(p, [
      { text: words(100), max: 5 },
      { text: words(100, 'v'), max: 5 },
    ]);
    const t = out[0]!.times;
    // second step on: 2 requests, kv ≈ 2 × (100 + generated)
    const gap = t[2]! - t[1]!;
    expect(gap).toBeGreaterThan(10 + 2 + 0.2);
    expect(gap).toBeLessThan(10 + 2 + 0.22);
    expect(out[0]!.finish).toBe('length');
  });

  test('chunked prefill: a long prompt takes ceil(prompt / budget) steps before its first token', () => {
    const p = resolveSimProfile('tiny', { maxBatchedTokens: 1000, prefillPerTokenMs: 0, stepBaseMs: 10 });
    const { out } = simulate(p, [{ text: words(3500), max: 2 }]);
    expect(out[0]!.times[0]).toBeCloseTo(40, 5); // 4 steps of 10 ms
  });

  test('max running requests caps the batch; the rest wait', () => {
    const p = resolveSimProfile('tiny', { maxRunningRequests: 2, prefillPerTokenMs: 0 });
    const { out } = simulate(p, [0, 1, 2].map((i) => ({ text: words(10, `r${i}`), max: 10 })));
    expect(out[2]!.times[0]).toBeGreaterThanOrEqual(out[0]!.times[9]!);
  });

  test('tokensPerStep k: each emission carries k tokens (last one the remainder)', () => {
    const p = resolveSimProfile('tiny', { tokensPerStep: 4 });
    const { out } = simulate(p, [{ text: words(10), max: 10 }]);
    expect(out[0]!.counts).toEqual([4, 4, 2]);
  });

  test('SGLang-style frontend: while a new prompt is tokenized, running streams are held, then get one multi-token chunk', () => {
    const p = resolveSimProfile('tiny', { frontendMsPerToken: 0.1, frontendBlocksStreaming: true, prefillPerTokenMs: 0 });
    const engine = new SimEngine(p);
    let now = 0;
    const counts: number[] = [];
    const times: number[] = [];
    const a = new EngineRequest(hashPromptBlocks(words(10), 16, true), 100, Infinity, {
      onAdmit() {},
      onTokens(n) {
        counts.push(n);
        times.push(now);
      },
    });
    engine.submit(a, now); // 11 tokens × 0.1 ms of frontend
    const step = () => {
      const plan = engine.runStep(now);
      if (plan.kind === 'step') now += plan.durationMs;
      else if (plan.kind === 'wait') now = plan.untilMs;
    };
    while (counts.length < 5) step();
    // a 500-token prompt arrives: the frontend is busy for 50 ms
    const b = new EngineRequest(hashPromptBlocks(words(499, 'b'), 16, true), 5, Infinity, { onAdmit() {}, onTokens() {} });
    const arrival = now;
    engine.submit(b, now);
    while (now < arrival + 80) step();
    const held = counts.slice(5);
    expect(held[0]).toBeGreaterThanOrEqual(4); // ~5 steps of tokens in one chunk
    expect(times[5]!).toBeGreaterThanOrEqual(arrival + 50);
    expect(held.slice(1).every((n) => n === 1)).toBe(true);
  });

  test('abort frees the request’s KV blocks', () => {
    const p = getSimProfile('tiny');
    const engine = new SimEngine(p);
    const req = new EngineRequest(hashPromptBlocks(words(100), 16, true), 1000, Infinity, { onAdmit() {}, onTokens() {} });
    engine.submit(req, 0);
    engine.runStep(0);
    expect(engine.kvUsedTokens).toBeGreaterThan(1000);
    engine.abort(req);
    expect(engine.kvUsedTokens).toBe(0);
    expect(engine.running).toHaveLength(0);
  });
});

describe('KV cache and prefix cache', () => {
  test('a shared prefix is reused block by block (at most ⌊(n−1)/bs⌋ blocks), the tail is not', () => {
    const kv = new KvCache(16 * 100, 16);
    const a = hashPromptBlocks(words(64) + 'tail one', 16, true);
    const b = hashPromptBlocks(words(64) + 'tail two', 16, true);
    const la = kv.tryAdmit(a, 10)!;
    expect(la.cachedTokens).toBe(0);
    const lb = kv.tryAdmit(b, 10)!;
    expect(lb.cachedTokens).toBe(64);
    kv.release(la);
    kv.release(lb);
    const c = hashPromptBlocks(words(64), 16, true); // exactly 4 blocks: last block recomputed
    expect(kv.tryAdmit(c, 1)!.cachedTokens).toBe(48);
  });

  test("a prompt's text hash is the one-pass FNV-1a of the text, with or without block hashes", () => {
    for (const text of [words(64) + ' tail one', words(64), 'Hi', '']) {
      expect(hashPromptBlocks(text, 16, true).textHash).toBe(fnv1a(text));
      expect(hashPromptBlocks(text, 16, false).textHash).toBe(fnv1a(text));
    }
    expect(hashPromptBlocks(words(64) + ' tail one', 16, true).textHash).not.toBe(hashPromptBlocks(words(64) + ' tail two', 16, true).textHash);
  });

  test('unused cached blocks are evicted LRU when space is needed; in-use blocks never', () => {
    const kv = new KvCache(16 * 10, 16);
    const a = hashPromptBlocks(words(64, 'a'), 16, true);
    const la = kv.tryAdmit(a, 0)!;
    kv.release(la);
    expect(kv.cachedFreeBlocks).toBe(4);
    const b = hashPromptBlocks(words(96, 'b'), 16, true); // 6 blocks + needs room
    const lb = kv.tryAdmit(b, 32)!; // 6 shared + 2 private = 8 > 10 - 4 cached → evicts 2
    expect(lb).toBeDefined();
    expect(kv.usedBlocks).toBe(8);
    expect(kv.cachedFreeBlocks).toBe(2);
    expect(kv.tryAdmit(hashPromptBlocks(words(64, 'c'), 16, true), 0)).toBeUndefined();
  });
});

describe('profiles', () => {
  test('getSimProfile names the valid profiles when the name is unknown', () => {
    expect(() => getSimProfile('h100')).toThrow(/unknown sim profile "h100".*tiny, sglang-h200, vllm-arc-b65x4/);
  });
  test('reference profiles reproduce the pages’ Over-capacity rule', () => {
    const sg = SIM_PROFILES['sglang-h200']!;
    const over = (ctxK: number, c: number) => c * (ctxK * 1024 + 4096) > sg.kvCapacityTokens;
    expect([over(8, 64), over(8, 128), over(16, 64), over(16, 128), over(32, 32), over(32, 64)]).toEqual([false, true, false, true, false, true]);
    expect([over(64, 16), over(64, 32), over(123, 8), over(123, 16)]).toEqual([false, true, false, true]);
    const vl = SIM_PROFILES['vllm-arc-b65x4']!;
    expect(16 * (64 * 1024 + 256)).toBeLessThanOrEqual(vl.kvCapacityTokens);
  });
  test('overrides are checked', () => {
    expect(() => resolveSimProfile('tiny', { blockSize: 0 })).toThrow(/blockSize/);
  });
});
