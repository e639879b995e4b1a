/**
 * The requests of a workload cell (src/workload/cell-requests.ts) against the embedded simulator:
 * the prompt tokens the SIM counts for them (its chat tokenize, which renders what its chat
 * completions count, checked on a sample by usage.prompt_tokens), shared-prefix bytes and group
 * spread, a file's order, outputs and too-long lines, determinism, and a short real cell.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { getAdapter } from '../../src/engines/detect.js';
import { asNumber, asRecord, closeControlAgent, postJson } from '../../src/engines/http.js';
import type { EngineAdapter, HttpTarget, ServerFacts } from '../../src/shapes/engine.js';
import { PromptCalibrator } from '../../src/prompts/calibrate.js';
import { workloadLengthProblem, workloadRequests, type WorkloadRequestsOptions } from '../../src/workload/cell-requests.js';
import { SCOUT_INDEX } from '../../src/workload/request-kit.js';
import { groupOf } from '../../src/workload/shared-prefix-requests.js';
import type { ChatMessage, PromptFile, WorkloadRequest } from '../../src/shapes/workload.js';
import { ConfigError } from '../../src/errors.js';

let sim: SimHandle;
let target: HttpTarget;
let adapter: EngineAdapter;
let facts: ServerFacts;
/** counter calls the sim's tokenize endpoint answered for calibrators made by `sizer()` */
let counterCalls = 0;

beforeAll(async () => {
  sim = await startSim({ profile: 'tiny', personality: 'vllm' });
  target = { baseUrl: sim.url };
  adapter = getAdapter('vllm');
  facts = await adapter.probe(target);
});
afterAll(async () => {
  await sim.close();
  await closeControlAgent();
});

/** a fresh calibrator on the sim (exact: its tokenize endpoint), its counter calls counted */
function sizer(): PromptCalibrator {
  const counting: EngineAdapter = Object.create(adapter) as EngineAdapter;
  counting.countTokens = (t, f, text, e) => {
    counterCalls++;
    return adapter.countTokens!(t, f, text, e);
  };
  return PromptCalibrator.forAdapter({ adapter: counting, target, facts, endpoint: 'chat' });
}

/** the sim's count of a request sent to its chat endpoint (one user message of `prompt`, or its messages) */
function simCount(r: WorkloadRequest): Promise<number | undefined> {
  if (!r.messages) return adapter.countTokens!(target, facts, r.prompt, 'chat');
  return postJson(target, '/tokenize', { model: facts.model.value, messages: r.messages, add_generation_prompt: true }, { timeoutMs: 30_000 }).then((res) =>
    asNumber(asRecord(res.json)?.count),
  );
}

async function usagePromptTokens(r: WorkloadRequest): Promise<number> {
  const body = { model: facts.model.value, messages: r.messages ?? [{ role: 'user', content: r.prompt }], max_tokens: 1 };
  const res = await postJson(target, '/v1/chat/completions', body, { timeoutMs: 60_000 });
  const n = asNumber(asRecord(asRecord(res.json)?.usage)?.prompt_tokens);
  if (n === undefined) throw new Error(`no usage.prompt_tokens (HTTP ${res.status}): ${res.text.slice(0, 200)}`);
  return n;
}

const base = (o: Partial<WorkloadRequestsOptions> & Pick<WorkloadRequestsOptions, 'workload'>): WorkloadRequestsOptions => ({
  runId: 'lsmtest01',
  cellKey: '1K/4',
  maxOutputTokens: 64,
  maxModelLen: facts.maxModelLen?.value ?? 32_768,
  sizer: sizer(),
  ...o,
});

/** 500 distinct input lengths in 64 … 4063, in a scrambled order; outputs 1 … 300 */
const draws = {
  input: (i: number) => 64 + ((i * 7919) % 4000),
  output: (i: number) => 1 + ((i * 131) % 300),
};
const lengthsWorkload = {
  kind: 'lengths' as const,
  input: { kind: 'uniform' as const, min: 64, max: 4063 },
  output: { kind: 'uniform' as const, min: 1, max: 300 },
  seed: 7,
};

describe('lengths', () => {
  test('every request counts exactly its drawn input length on the sim, asks for its drawn output, and shares no prefix', async () => {
    const before = counterCalls;
    const reqs = workloadRequests(base({ workload: lengthsWorkload, draws }));
    await reqs.prepare(500);
    const calls = counterCalls - before;
    console.log(`lengths: 500 distinct lengths sized with ${calls} counter calls (${(calls / 500).toFixed(2)} a length)`);
    expect(reqs.sizingCalls).toBe(calls);
    const all = Array.from({ length: 500 }, (_, i) => reqs.requestFor(i % 4, i));
    const counts = await Promise.all(all.map(simCount));
    all.forEach((r, i) => {
      expect(counts[i], `request ${i}`).toBe(draws.input(i));
      expect(r.promptTokens).toBe(draws.input(i));
      expect(r.maxTokens).toBe(draws.output(i));
    });
    // the sim's usage agrees (a sample)
    for (const i of [0, 1, 2, 137, 499]) expect(await usagePromptTokens(all[i]!)).toBe(draws.input(i));
    // unique from the first characters: no two requests share more than 1 character
    const firsts = new Set(all.map((r) => r.prompt.slice(0, 6)));
    expect(firsts.size).toBe(500);
    expect(reqs.scoutRequests()).toEqual([]);
    // beyond the prepared count: the prepared input lengths again, its own output and lead
    const r = reqs.requestFor(0, 503);
    expect(r.promptTokens).toBe(draws.input(3));
    expect(await simCount(r)).toBe(draws.input(3));
    expect(r.maxTokens).toBe(draws.output(503));
    expect(r.prompt).not.toBe(all[3]!.prompt);
  }, 120_000);

  test('a distribution that cannot fit the server is a ConfigError naming it', () => {
    expect(() => workloadRequests(base({ workload: { ...lengthsWorkload, input: { kind: 'fixed', value: 32_700 } }, draws }))).toThrow(ConfigError);
    expect(() => workloadRequests(base({ workload: { ...lengthsWorkload, input: { kind: 'fixed', value: 32_700 } }, draws }))).toThrow(/in=32700.*max model length 32768/);
  });

  test('requestFor before prepare says to prepare', () => {
    const reqs = workloadRequests(base({ workload: lengthsWorkload, draws }));
    expect(() => reqs.requestFor(0, 0)).toThrow(/prepare/);
  });
});

const sharedWorkload = { kind: 'sharedPrefix' as const, groups: 4, prefixTokens: 1024, suffixTokens: 256, seed: 11 };

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i;
}

describe('sharedPrefix', () => {
  test('a group shares exactly its prefix bytes, then differs; counts P + S on the sim; groups spread', async () => {
    const reqs = workloadRequests(base({ workload: sharedWorkload }));
    await reqs.prepare(400);
    expect(reqs.describe()).toBe('4 groups × 1024 + 256 tokens (seed 11)');
    const all = Array.from({ length: 400 }, (_, i) => reqs.requestFor(i % 4, i));
    const scouts = reqs.scoutRequests();
    expect(scouts.map((s) => s.group)).toEqual([0, 1, 2, 3]);
    const prefixOf = (g: number): string => {
      const group = all.filter((r) => r.group === g);
      return group.reduce((p, r) => p.slice(0, commonPrefix(p, r.prompt)), group[0]!.prompt);
    };
    const perGroup = [0, 1, 2, 3].map((g) => all.filter((r) => r.group === g).length);
    // each group about 1/4 of 400 (binomial sd ≈ 8.7; ±35 is 4 sd)
    for (const n of perGroup) expect(Math.abs(n - 100)).toBeLessThanOrEqual(35);
    for (let g = 0; g < 4; g++) {
      const prefix = prefixOf(g);
      // the prefix alone counts P on the sim (a prompt of its own), and ends where the suffix's "\n" begins
      const shared = prefix.slice(0, prefix.lastIndexOf('\n'));
      expect(await adapter.countTokens!(target, facts, shared, 'chat')).toBe(1024);
      for (const r of all.filter((x) => x.group === g)) {
        expect(r.prompt.startsWith(shared + '\n')).toBe(true);
        expect(r.maxTokens).toBe(64);
      }
      // requests differ right after: the common part of the group is the prefix and "\n" (+ at most a few mark digits)
      expect(prefix.length - shared.length).toBeLessThanOrEqual(6);
      // other groups' requests do not start with it
      for (const r of all.filter((x) => x.group !== g)) expect(commonPrefix(r.prompt, shared)).toBeLessThan(8);
      expect(scouts[g]!.prompt.startsWith(shared + '\n')).toBe(true);
    }
    // any two requests of a group differ within the mark (6 digits) after the prefix
    const g0 = all.filter((r) => r.group === 0);
    const shared0 = prefixOf(0);
    for (let a = 1; a < g0.length; a++) expect(commonPrefix(g0[0]!.prompt, g0[a]!.prompt)).toBeLessThan(shared0.lastIndexOf('\n') + 1 + 6);
    const counts = await Promise.all(all.slice(0, 60).map(simCount));
    for (const [i, c] of counts.entries()) {
      expect(c, `request ${i}`).toBe(1280);
      expect(all[i]!.promptTokens).toBe(1280);
    }
    expect(await usagePromptTokens(all[5]!)).toBe(1280);
    // the group draw is the seeded one
    all.forEach((r, i) => expect(r.group).toBe(groupOf(11, 4, i)));
  }, 120_000);

  test('P + S + output beyond the max model length is a ConfigError', () => {
    expect(() => workloadRequests(base({ workload: { ...sharedWorkload, prefixTokens: 32_000, suffixTokens: 1000 } }))).toThrow(/prefix 32000 \+ suffix 1000 \+ 64 output tokens.*32768/);
  });
});

describe('workloadLengthProblem: the row check before Over capacity, the same as each kind\'s cells make', () => {
  test('each kind\'s sum and fix, or undefined where it fits, the length is unknown, or the kind skips per line', () => {
    const shared = { ...sharedWorkload, prefixTokens: 32_000, suffixTokens: 1000 };
    expect(workloadLengthProblem(shared, 64, 32_768)).toBe(
      'prefix 32000 + suffix 1000 + 64 output tokens = 33064 tokens exceeds the server\'s max model length 32768; lower prefix= or suffix= in LLM_BENCH_WORKLOAD, or LLM_BENCH_MAX_TOKENS',
    );
    expect(() => workloadRequests(base({ workload: shared }))).toThrow(workloadLengthProblem(shared, 64, 32_768)!);
    expect(workloadLengthProblem(sharedWorkload, 64, 32_768)).toBeUndefined();
    expect(workloadLengthProblem(shared, 64, undefined)).toBeUndefined();
    const long = { ...lengthsWorkload, input: { kind: 'fixed' as const, value: 32_700 } };
    expect(workloadLengthProblem(long, 4096, 32_768)).toMatch(/^the lengths workload's longest input \(in=32700\) plus longest output .* exceeds the server's max model length 32768/);
    const multi = { kind: 'multiTurn' as const, turns: 3, userTokens: 128, systemTokens: 256, thinkMs: { kind: 'fixed' as const, value: 0 }, seed: 1 };
    expect(workloadLengthProblem(multi, 1024, 1000)).toMatch(/^a conversation's first turn \(system 256 \+ user 128 \+ 1024 output tokens\) = 1408 tokens exceeds/);
    expect(workloadLengthProblem({ kind: 'file', path: 'p.jsonl', seed: 1 }, 4096, 10)).toBeUndefined();
  });
});

/** a stand-in of the other helper's renderMessages: role-tagged lines */
const render = (messages: readonly ChatMessage[]): string => messages.map((m) => `${m.role}: ${m.content}`).join('\n');
/** a stand-in of seededOrder: a fixed permutation of 5, repeated */
const PERM = [3, 0, 4, 1, 2];
const order = (i: number): number => PERM[i % PERM.length]!;

function promptFile(longWords: number): PromptFile {
  const say = (t: string): ChatMessage[] => [{ role: 'user', content: t }];
  return {
    path: '/tmp/prompts.jsonl',
    name: 'prompts.jsonl',
    sha256: 'ab'.repeat(32),
    lines: [
      { line: 1, messages: say('What is the capital of France?'), outputTokens: 10 },
      { line: 2, messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Name a colour.' }] },
      { line: 4, messages: say('word '.repeat(longWords)), outputTokens: 20 },
      { line: 5, messages: say('Count to five.'), outputTokens: 30 },
      { line: 6, messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello!' }, { role: 'user', content: 'Tell me a joke.' }], outputTokens: 40 },
    ],
  };
}
const fileWorkload = { kind: 'file' as const, path: '/tmp/prompts.jsonl', seed: 3 };

describe('file', () => {
  test('the order is followed, outputs follow the lines, and a too-long line is skipped and counted', async () => {
    // line index 2 (file line 4): 1000 words of 5 chars + a space: ~1000 tokens on the sim; max model length 500
    const reqs = workloadRequests(base({ workload: fileWorkload, file: { prompts: promptFile(1000), order, render }, maxModelLen: 500 }));
    await reqs.prepare(8);
    expect(reqs.skipped).toBe(1);
    expect(reqs.describe()).toMatch(/^prompts\.jsonl: 5 lines, 1 skipped as too long/);
    const got = Array.from({ length: 8 }, (_, i) => reqs.requestFor(0, i));
    // the order without index 2: 3, 0, 4, 1, 3, 0, 4, 1
    const file = promptFile(1000);
    const expected = [3, 0, 4, 1, 3, 0, 4, 1];
    got.forEach((r, i) => {
      const line = file.lines[expected[i]!]!;
      expect(r.messages).toEqual(line.messages);
      expect(r.prompt).toBe(render(line.messages));
      expect(r.maxTokens).toBe(line.outputTokens ?? 64);
      expect(r.promptTokens).toBeGreaterThan(0);
    });
    // beyond the prepared count: the prepared sequence again
    expect(reqs.requestFor(0, 9).messages).toEqual(got[1]!.messages);
  });

  test('without a counter nothing is skipped: request i is line order(i)', async () => {
    const noCounter = { calibrate: () => Promise.reject(new Error('not used')) };
    const reqs = workloadRequests(base({ workload: fileWorkload, file: { prompts: promptFile(1000), order, render }, maxModelLen: 500, sizer: noCounter }));
    await reqs.prepare(8);
    expect(reqs.skipped).toBe(0);
    const file = promptFile(1000);
    for (let i = 0; i < 12; i++) expect(reqs.requestFor(0, i).messages).toEqual(file.lines[order(i)]!.messages);
  });

  test('a file whose every line is too long is a ConfigError naming it', async () => {
    const file = promptFile(1000);
    file.lines = [file.lines[2]!];
    const reqs = workloadRequests(base({ workload: fileWorkload, file: { prompts: file, order: () => 0, render }, maxModelLen: 500 }));
    await expect(reqs.prepare(4)).rejects.toThrow(/every line of \/tmp\/prompts\.jsonl is longer than the server's max model length 500/);
  });
});

describe('determinism', () => {
  test('two factories with the same inputs (fresh calibrators) give identical requests', async () => {
    const make = async (o: Pick<WorkloadRequestsOptions, 'workload'> & Partial<WorkloadRequestsOptions>, n: number) => {
      const r = workloadRequests(base(o));
      await r.prepare(n);
      return [...Array.from({ length: n + 5 }, (_, i) => r.requestFor(i % 3, i)), ...r.scoutRequests()];
    };
    const small = { input: (i: number) => 32 + ((i * 37) % 200), output: draws.output };
    expect(await make({ workload: lengthsWorkload, draws: small }, 40)).toEqual(await make({ workload: lengthsWorkload, draws: small }, 40));
    const sp = { ...sharedWorkload, prefixTokens: 300, suffixTokens: 50 };
    expect(await make({ workload: sp }, 40)).toEqual(await make({ workload: sp }, 40));
    const file = { prompts: promptFile(1000), order, render };
    expect(await make({ workload: fileWorkload, file, maxModelLen: 500 }, 10)).toEqual(await make({ workload: fileWorkload, file, maxModelLen: 500 }, 10));
    // another cell gives other texts (cold in every cell)
    const other = await make({ workload: sp, cellKey: '1K/8' }, 5);
    expect(other[0]!.prompt).not.toBe((await make({ workload: sp }, 5))[0]!.prompt);
    expect(SCOUT_INDEX).toBe(999_999);
  }, 60_000);
});
