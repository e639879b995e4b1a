/**
 * Project `real`, issue 23: a `sharedPrefix` workload against a real server (LLM_BENCH_REAL_URL)
 * shows its prefix cache, as a user runs it (`npx vitest bench --run` with LLM_BENCH_WORKLOAD).
 *
 * 1. Groups that fit: G = min(4, slots) groups of P = 1024 shared + S = 256 unique tokens, one
 *    stream. Each group keeps a slot (llama.cpp picks an idle slot by prompt similarity, then the
 *    least recently used), so every request after its group's first re-uses the group's prefix and
 *    the hit rate is about P / (P + S) = 0.8. Measured on llama.cpp b4748 (CPU, -np 4): 79.8 % in
 *    two runs, 1,021 of each request's 1,280 tokens (the prefix less the tokens that merge at its
 *    boundary with the suffix). The bound, > 0.6, lets a quarter of the requests miss.
 * 2. Groups that thrash (llama.cpp only: its cache is one prompt a slot): G = 4 × slots groups, one
 *    stream. A request finds its group in a slot only when it is one of the 4 groups the slots
 *    hold (1 in 4); measured 5.4 % on b4748 (1 of 16 requests hit). The bound: below the first
 *    run's rate by at least 0.3, so the figure follows the cache and is not a constant.
 *
 * Where the rate comes from: llama.cpp's prompt tokens processed (its final chunk's
 * `timings.prompt_n`) against those sent (`processed-tokens`); vLLM and SGLang's own counters
 * (`server-counters`). Without LLM_BENCH_REAL_URL it says why it skipped.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { detectEngine, getAdapter } from '../../src/engines/detect.js';
import { closeControlAgent } from '../../src/engines/http.js';
import type { ServerFacts } from '../../src/shapes/engine.js';
import type { CellResult, SpeedMatrixResult } from '../../src/shapes/result.js';
import { boundForSharedCores } from './shared-cores.js';

const url = process.env.LLM_BENCH_REAL_URL?.trim().replace(/\/+$/, '') || undefined;
const SKIP_REASON =
  'no real server given: set LLM_BENCH_REAL_URL=http://127.0.0.1:8080 (scripts/real-llamacpp/serve.sh starts a llama.cpp server) to run the real sharedPrefix checks';
if (!url) console.info(`[real] skipped: ${SKIP_REASON}`);

const PREFIX = 1024;
const SUFFIX = 256;
/** groups that fit, one stream: the hit rate is above this (P / (P + S) = 0.8; see the file comment) */
const FITTING_HIT_RATE_BOUND = 0.6;
/** groups that thrash: at least this far below the fitting run's rate */
const THRASH_DROP = 0.3;

/** Runs the matrix with a sharedPrefix workload of `groups` groups at one stream; its one cell. */
async function sharedPrefixCell(groups: number): Promise<{ cell: CellResult; result: SpeedMatrixResult }> {
  const out = mkdtempSync(join(tmpdir(), 'lsm-real-sp-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LLM_BENCH_URL: url!,
    LLM_BENCH_WORKLOAD: `sharedPrefix:groups=${groups},prefix=${PREFIX},suffix=${SUFFIX}`,
    LLM_BENCH_CONCURRENCY: '1',
    LLM_BENCH_DURATION_S: process.env.LLM_BENCH_REAL_DURATION_S ?? '8',
    LLM_BENCH_MAX_TOKENS: '32',
    LLM_BENCH_OUT: out,
  };
  for (const k of ['LLM_BENCH_THRESHOLDS', 'LLM_BENCH_BASELINE', 'LLM_BENCH_CONTEXTS', 'LLM_BENCH_PREFILL', 'LLM_BENCH_RATES']) delete env[k];
  boundForSharedCores(env, `the sharedPrefix run of ${groups} groups`);
  let log = '';
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn('npx', ['vitest', 'bench', '--run', '--project', 'matrix'], { env, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.on('close', resolve);
  });
  console.info(log.split('\n').filter((l) => l.startsWith('[speed-matrix]')).join('\n'));
  expect(code, `npx vitest bench exited ${code}:\n${log.slice(-3000)}`).toBe(0);
  const result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
  expect(result.cells, 'one row (the nominal context P + S) and one column').toHaveLength(1);
  return { cell: result.cells[0]!, result };
}

describe.skipIf(!url)(`sharedPrefix against the real server at ${url ?? '(none)'}`, () => {
  let facts: ServerFacts;
  let fittingRate: number | undefined;

  beforeAll(async () => {
    const target = { baseUrl: url! };
    facts = await getAdapter((await detectEngine(target)).kind).probe(target);
  }, 60_000);
  afterAll(closeControlAgent);

  /** where the engine's hit rate must come from */
  const expectedSource = (): string | undefined =>
    ({ llamacpp: 'processed-tokens', vllm: 'server-counters', sglang: 'server-counters' })[facts.engine.value as string];

  test(`groups that fit the slots: the hit rate is present and above ${FITTING_HIT_RATE_BOUND} (P / (P + S) = ${PREFIX / (PREFIX + SUFFIX)})`, async () => {
    const slots = facts.maxRunningRequests?.value ?? 4;
    const groups = Math.max(1, Math.min(4, slots));
    const { cell, result } = await sharedPrefixCell(groups);
    expect(result.info.run.workload?.text).toBe(`sharedPrefix:groups=${groups},prefix=${PREFIX},suffix=${SUFFIX},seed=1`);
    expect(cell.figures?.failedRequests, 'failed requests').toBe(0);
    const pc = cell.workload?.prefixCache;
    expect(pc, `${cell.contextLabel}/1 has a prefix-cache hit rate (engine ${facts.engine.value}: --metrics, usage and timings)`).toBeDefined();
    const source = expectedSource();
    if (source) expect(pc!.source).toBe(source);
    console.info(`[real] sharedPrefix ${groups} groups, 1 stream: hit rate ${(pc!.hitRate * 100).toFixed(1)} % (${pc!.hitTokens} of ${pc!.queriedTokens} tokens, ${pc!.source})`);
    expect(pc!.hitRate).toBeGreaterThan(FITTING_HIT_RATE_BOUND);
    expect(pc!.hitRate).toBeLessThanOrEqual(1);
    fittingRate = pc!.hitRate;
  }, 600_000);

  test(`llama.cpp, 4 × slots groups: the cache thrashes and the hit rate falls by at least ${THRASH_DROP}`, async (ctx) => {
    if (facts.engine.value !== 'llamacpp') return ctx.skip(`the server is ${facts.engine.value}: only llama.cpp keeps one prompt a slot, so only there do 4 × slots groups thrash`);
    if (fittingRate === undefined) return ctx.skip('the fitting run gave no hit rate to compare with (see the test before)');
    const slots = facts.maxRunningRequests?.value ?? 4;
    const { cell } = await sharedPrefixCell(4 * slots);
    const pc = cell.workload?.prefixCache;
    expect(pc, 'the thrashing cell has a hit rate').toBeDefined();
    expect(pc!.source).toBe('processed-tokens');
    console.info(`[real] sharedPrefix ${4 * slots} groups, 1 stream: hit rate ${(pc!.hitRate * 100).toFixed(1)} % (${pc!.hitTokens} of ${pc!.queriedTokens} tokens)`);
    expect(pc!.hitRate).toBeLessThan(fittingRate - THRASH_DROP);
  }, 600_000);
});

// the reason, in the test list of every run without a real server
if (!url) test.skip(`real sharedPrefix checks: ${SKIP_REASON}`, () => {});
