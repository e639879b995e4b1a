/**
 * Issue 23, done when: "the hit rate reported is within 2 percentage points of the simulator's own
 * count for sharedPrefix at three prefix/suffix ratios". A sharedPrefix load built by the tool's own
 * request builder (G = 4 groups, each request a drawn group's P-token prefix + a unique S-token suffix) runs as a real closed-loop
 * cell (load/cell.ts runCell) against the vLLM, SGLang and llama.cpp personalities; the window's
 * hit rate comes from metrics/prefix-cache.ts prefixCacheFigures over the cell's samples and
 * timelines, from the source each engine gives (vLLM and SGLang: their counters; llama.cpp: prompt
 * tokens sent against timings.prompt_n). The simulator's own count: Σ cached / Σ prompt tokens of
 * the cell's requests its engine admitted inside the window (the truth records, each the amount its
 * prefix_cache_hits/queries counters were raised by at admission; checked against the counters);
 * for llama.cpp's timings, whose figure counts the requests first sampled inside the window, over
 * the requests the sim first sampled inside it and completed.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { runCell } from '../../src/load/cell.js';
import { prefixCacheFigures } from '../../src/metrics/prefix-cache.js';
import { workloadRequests } from '../../src/workload/cell-requests.js';
import type { WorkloadRequest } from '../../src/shapes/workload.js';
import type { SimHandle } from '../../src/sim/index.js';
import type { SimPersonality } from '../../src/sim/profiles.js';
import { monoMs } from '../../src/clock.js';
import { FAST_TINY, fmt, openAccuracyRun, simState, startThreadSim, truthSince, type OpenedAccuracyRun, type TruthJson } from './harness.js';

const GROUPS = 4;
const CONCURRENCY = 4;
const RATIOS: Array<[prefix: number, suffix: number]> = [
  [3072, 1024],
  [1024, 1024],
  [256, 1792],
];
const PERSONALITIES = ['vllm', 'sglang', 'llamacpp'] as const satisfies readonly SimPersonality[];
const EXPECTED_SOURCE: Record<string, string> = { vllm: 'server-counters', sglang: 'server-counters', llamacpp: 'processed-tokens' };

/**
 * The sharedPrefix load of one ratio, built by the tool's own request builder
 * (workload/cell-requests.ts, as a matrix cell builds it): G groups of a P-token prefix, each
 * request's group drawn (seeded) and an S-token suffix of its own; one scout per group warms the
 * prefixes before the window, as a long run would have them.
 */
async function sharedPrefixLoad(run: OpenedAccuracyRun, tag: string, prefixTokens: number, suffixTokens: number, groups = GROUPS): Promise<{ promptFor: (i: number) => WorkloadRequest; scouts: WorkloadRequest[] }> {
  const { session } = run.opened;
  const requests = workloadRequests({
    workload: { kind: 'sharedPrefix', groups, prefixTokens, suffixTokens, seed: 1 },
    runId: session.runId,
    cellKey: tag,
    maxOutputTokens: session.maxOutputTokens,
    sizer: run.prompts.sizer,
  });
  await requests.prepare(1);
  return { promptFor: (i) => requests.requestFor(0, i), scouts: requests.scoutRequests() };
}

interface Server {
  sim: SimHandle;
  run: OpenedAccuracyRun;
}
type Personality = (typeof PERSONALITIES)[number];
const servers = new Map<string, Promise<Server>>();

/** a sim of the personality (4 slots for llama.cpp); `kvCapacityTokens` small makes the prefix cache thrash */
function server(personality: Personality, kvCapacityTokens?: number): Promise<Server> {
  const key = `${personality}/${kvCapacityTokens ?? 'big'}`;
  let s = servers.get(key);
  if (!s) {
    s = (async () => {
      const slots = personality === 'llamacpp' ? { maxRunningRequests: CONCURRENCY } : {};
      const kv = kvCapacityTokens !== undefined ? { kvCapacityTokens } : {};
      const sim = await startThreadSim({ personality, overrides: { ...FAST_TINY, ...slots, ...kv } });
      const run = await openAccuracyRun(sim, { target: { engine: personality }, matrix: { contexts: [0], concurrency: [CONCURRENCY], maxOutputTokens: 16 } });
      return { sim, run };
    })();
    servers.set(key, s);
  }
  return s;
}

afterAll(async () => {
  for (const s of servers.values()) {
    const { sim, run } = await s;
    await run.opened.close();
    await sim.close();
  }
});

/** Σ cached and Σ prompt tokens of the records that pass `keep` */
function sums(records: Iterable<TruthJson>, keep: (r: TruthJson) => boolean): { hit: number; queried: number } {
  let hit = 0;
  let queried = 0;
  for (const r of records) {
    if (!keep(r)) continue;
    hit += r.cachedTokens;
    queried += r.promptTokens;
  }
  return { hit, queried };
}

interface Measured {
  tag: string;
  measured: ReturnType<typeof prefixCacheFigures>;
  /** the sim's own rate over the window */
  trueRate: number;
  /** the requests the sim's own count is over (admitted inside the window, or for llama.cpp's timings first sampled inside it) */
  requests: number;
  failed: number;
  /** requests with the server's timings whose sent − processed differs from the sim's cached tokens */
  perRequestMismatches: string[];
  perRequestChecked: number;
}

/** One sharedPrefix cell against the personality's sim: the measured figure and the sim's own count. */
async function measureCell(personality: Personality, prefixTokens: number, suffixTokens: number, thrash?: { kvCapacityTokens: number; groups: number }): Promise<Measured> {
  const kvCapacityTokens = thrash?.kvCapacityTokens;
  const { sim, run } = await server(personality, kvCapacityTokens);
  const { session } = run.opened;
  const tag = `${personality}-${prefixTokens}-${suffixTokens}${kvCapacityTokens !== undefined ? `-kv${kvCapacityTokens}` : ''}`;
  const load = await sharedPrefixLoad(run, tag, prefixTokens, suffixTokens, thrash?.groups);
  const before = (await simState(sim)).counters as { prefixHitsTokensTotal: number; prefixQueriesTokensTotal: number };
  const startedMs = monoMs();
  // the context number only names the cell (its request ids); one per ratio
  const raw = await runCell(session, {
    context: prefixTokens,
    concurrency: CONCURRENCY,
    promptFor: (_w, i) => load.promptFor(i),
    scoutPrompts: load.scouts,
    // a thrashing cache's hits are all or nothing per request: a longer window, fewer edge effects
    windowMs: thrash ? 4_000 : 2_000,
    gateTimeoutMs: 10_000,
    gateSettleMs: 200,
    drainTimeoutMs: 10_000,
    metricsIntervalMs: 200,
  });
  const cellTag = `${session.runId}-c${prefixTokens}x${CONCURRENCY}`;
  const truth = [...(await truthSince(sim, startedMs)).values()].filter((r) => r.id.startsWith(`${cellTag}-`));
  const after = (await simState(sim)).counters as typeof before;

  // the truth records are the sim's counters: every admitted request of the cell, scouts included
  const admitted = sums(truth, (r) => r.admittedMs !== undefined);
  expect(after.prefixHitsTokensTotal - before.prefixHitsTokensTotal).toBe(admitted.hit);
  expect(after.prefixQueriesTokensTotal - before.prefixQueriesTokensTotal).toBe(admitted.queried);

  const measured = prefixCacheFigures(raw);
  // the sim's own count over the requests the personality's source counts (metrics/prefix-cache.ts):
  // the counters count a request at its admission; llama.cpp's timings are read from the requests
  // whose first token came inside the window and that completed. With llama.cpp's slots a request
  // that waited for one was admitted in the window but first sampled after it, or the other way
  // round: counted on one side only, one request of 40 moved the truth by 2 points (CI, 2026-12-04).
  // The set follows the personality, not the source the tool answered with (a test of the tool).
  // The two sides still time a request differently (the sim's write, the client's arrival) and a
  // request done as the window's abort reached it has the sim's end but no timings: an edge request
  // can still fall on one side only, far rarer than a slot wait
  const within = (atMs: number | undefined): boolean => atMs !== undefined && atMs >= raw.windowStartMs && atMs <= raw.windowEndMs;
  const inWindow =
    EXPECTED_SOURCE[personality] === 'processed-tokens'
      ? (r: TruthJson): boolean => !r.id.includes('-scout') && r.end === 'done' && within(r.firstTokenMs)
      : (r: TruthJson): boolean => !r.id.includes('-scout') && within(r.admittedMs);
  const own = sums(truth, inWindow);
  const trueRate = own.hit / own.queried;
  const requests = truth.filter(inWindow).length;
  console.log(
    `[accuracy] prefix cache ${tag}: ${measured?.source ?? 'none'} ${fmt(measured?.hitRate, 4)} (${measured?.hitTokens}/${measured?.queriedTokens}) ` +
      `vs sim ${fmt(trueRate, 4)} (${own.hit}/${own.queried}, ${requests} requests in the window, ${raw.samples.length} samples)`,
  );
  const byId = new Map(truth.map((r) => [r.id, r]));
  const perRequestMismatches: string[] = [];
  let perRequestChecked = 0;
  for (const t of raw.timelines) {
    const promptN = raw.serverTimings?.get(t.id)?.promptN;
    const rec = byId.get(t.id);
    if (promptN === undefined || t.promptTokens === undefined || !rec) continue;
    perRequestChecked++;
    if (t.promptTokens - promptN !== rec.cachedTokens) perRequestMismatches.push(`${t.id}: ${t.promptTokens} − ${promptN} ≠ ${rec.cachedTokens}`);
  }
  return { tag, measured, trueRate, requests, failed: raw.timelines.filter((t) => t.end?.kind === 'error').length, perRequestMismatches, perRequestChecked };
}

describe('sharedPrefix: the window\'s prefix-cache hit rate against the simulator\'s own count', () => {
  const cases = PERSONALITIES.flatMap((p) => RATIOS.map(([prefix, suffix]) => [p, prefix, suffix] as const));
  test.each(cases)('%s, P/S = %i/%i: within 2 percentage points', { timeout: 120_000 }, async (personality, prefixTokens, suffixTokens) => {
    const m = await measureCell(personality, prefixTokens, suffixTokens);
    expect(m.failed).toBe(0);
    expect(m.requests).toBeGreaterThanOrEqual(20);
    expect(m.measured).toBeDefined();
    expect(m.measured!.source).toBe(EXPECTED_SOURCE[personality]);
    expect(Math.abs(m.measured!.hitRate - m.trueRate)).toBeLessThanOrEqual(0.02);
    if (personality === 'llamacpp') {
      // read from each request's timings (not the counter fallback): exact per request
      expect(m.perRequestMismatches).toEqual([]);
      expect(m.perRequestChecked).toBeGreaterThanOrEqual(20);
    }
    // and the load is the one asked for: on a shared block cache (vLLM, SGLang) about P of every
    // P + S prompt tokens come from the cache (the chat template's few tokens and the block
    // rounding move it by well under a point). llama.cpp keeps one prompt a slot and matches only
    // idle slots (sim/slot-cache.ts, as b4748): with 4 streams on 4 slots a request often finds its
    // group's slot busy, so its truth is lower (the real server: 43 % where P/(P+S) is 80 %), never higher
    const asked = prefixTokens / (prefixTokens + suffixTokens);
    if (personality === 'llamacpp') expect(m.trueRate).toBeLessThanOrEqual(asked + 0.02);
    else expect(Math.abs(m.trueRate - asked)).toBeLessThanOrEqual(0.02);
  });
});

/**
 * Beyond the done-when: 8 groups drawn per request and KV room for only a few prefixes beside the
 * running requests, so each request's hit is all or nothing (0 % or 75 %) and a window's rate
 * depends on which of its requests it counts (4 s windows here, ~80 requests): the counters'
 * sources count a slightly different set from the sim's admitted one (vLLM: admitted between the
 * first and the last sample, the last ≤ 200 ms before the end; SGLang: FINISHED between them, its
 * counters growing at the end of a request). Two or three requests more or fewer move the rate by a
 * few points (seen in 2 s windows: 0.4–4.3; the 4 s windows halve that), so the bound here is 6
 * points; the measurement itself is exact per request (llama.cpp below, whose truth is over the
 * set its timings count: it read 0.2160 against 0.2160 on 2026-12-04) and per counter (the sim's own).
 */
const THRASH_TOLERANCE = 0.06;

describe('a prefix cache that thrashes (8 groups drawn per request, KV for a few prefixes)', () => {
  test.each(PERSONALITIES.map((p) => [p] as const))('%s, P/S = 3072/1024', { timeout: 120_000 }, async (personality) => {
    const m = await measureCell(personality, 3072, 1024, { kvCapacityTokens: 24_000, groups: 8 });
    expect(m.failed).toBe(0);
    expect(m.measured).toBeDefined();
    expect(m.measured!.source).toBe(EXPECTED_SOURCE[personality]);
    // the cache does thrash: well below the 75 % of a warm one
    expect(m.trueRate).toBeLessThan(0.65);
    expect(Math.abs(m.measured!.hitRate - m.trueRate)).toBeLessThanOrEqual(THRASH_TOLERANCE);
    if (personality === 'llamacpp') {
      // per request, prompt tokens sent − timings.prompt_n is exactly the sim's cached tokens
      expect(m.perRequestMismatches).toEqual([]);
      expect(m.perRequestChecked).toBeGreaterThanOrEqual(20);
    }
  });
});
