/**
 * Project `real`: the tool against a real inference server, as a user runs it. Given
 * LLM_BENCH_REAL_URL (e.g. a llama.cpp server started by scripts/real-llamacpp/serve.sh) it
 *   1. probes the server with the adapter the tool detects, and checks what the probe found;
 *   2. runs a small speed matrix with `npx vitest bench --run` (contexts 0 and 2K; concurrency 1,
 *      the server's slots and twice that; a 2K prefill row; 6 s windows; 128 output tokens) and reads
 *      the JSON it wrote: no failed request, no Errors cell; cells within the server's running limit
 *      not queued, cells above it Requests queued; 0/1 never idles: its one stream in flight 95 % of
 *      the window or more, and total tok/s ≥ 90 % of what one stream streaming back to back gives
 *      (128 tokens per TTFT + 127 gaps, from the cell's own medians);
 *      per-request tok/s within 5 % of the server's own timings where the engine reports them.
 * Without LLM_BENCH_REAL_URL it says why it skipped. CI cannot reach a real server: there the
 * llama.cpp personality (test/accuracy/llamacpp-personality.test.ts) and the recorded transcripts
 * (test/client/replay-llamacpp.test.ts) stand in for it.
 *
 * LLM_BENCH_REAL_CONTEXTS, LLM_BENCH_REAL_CONCURRENCY, LLM_BENCH_REAL_DURATION_S change the matrix.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { detectEngine, getAdapter } from '../../src/engines/detect.js';
import { closeControlAgent } from '../../src/engines/http.js';
import type { ServerFacts } from '../../src/shapes/engine.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { boundForSharedCores } from './shared-cores.js';

const url = process.env.LLM_BENCH_REAL_URL?.trim().replace(/\/+$/, '') || undefined;
const SKIP_REASON =
  'no real server given: set LLM_BENCH_REAL_URL=http://127.0.0.1:8080 (scripts/real-llamacpp/serve.sh starts a llama.cpp server) to run the real-server checks';
if (!url) console.info(`[real] skipped: ${SKIP_REASON}`);

/** a per-request tok/s within this share of the server's own figure */
const CROSS_CHECK_SHARE = 0.05;

describe.skipIf(!url)(`real server at ${url ?? '(none)'}`, () => {
  let facts: ServerFacts;
  let result: SpeedMatrixResult;
  let benchLog = '';

  beforeAll(async () => {
    const target = { baseUrl: url! };
    const found = await detectEngine(target);
    facts = await getAdapter(found.kind).probe(target);
  }, 60_000);
  afterAll(closeControlAgent);

  test('the probe finds the engine, the model, the running limit, metrics and a tokenizer', () => {
    expect(facts.engine.value).not.toBe('openai');
    expect(facts.model.value).not.toBe('');
    expect(facts.maxRunningRequests?.value, 'max running requests (slots)').toBeGreaterThan(0);
    expect(facts.maxModelLen?.value, 'max model length').toBeGreaterThan(2048 + 128);
    expect(facts.metricsPath, 'a metrics endpoint (llama.cpp: start it with --metrics)').toBeDefined();
    expect(facts.tokenizePath, 'a tokenize endpoint').toBeDefined();
  });

  test('a small speed matrix runs clean', async () => {
    const slots = facts.maxRunningRequests?.value ?? 4;
    const out = mkdtempSync(join(tmpdir(), 'lsm-real-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      LLM_BENCH_URL: url!,
      LLM_BENCH_CONTEXTS: process.env.LLM_BENCH_REAL_CONTEXTS ?? '0,2K',
      LLM_BENCH_CONCURRENCY: process.env.LLM_BENCH_REAL_CONCURRENCY ?? `1,${slots},${2 * slots}`,
      LLM_BENCH_PREFILL: '2K',
      LLM_BENCH_DURATION_S: process.env.LLM_BENCH_REAL_DURATION_S ?? '6',
      LLM_BENCH_MAX_TOKENS: '128',
      LLM_BENCH_OUT: out,
    };
    delete env.LLM_BENCH_THRESHOLDS;
    delete env.LLM_BENCH_BASELINE;
    boundForSharedCores(env, 'the small matrix');
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn('npx', ['vitest', 'bench', '--run', '--project', 'matrix'], { env, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (d: Buffer) => (benchLog += d.toString()));
      child.stderr.on('data', (d: Buffer) => (benchLog += d.toString()));
      child.on('close', resolve);
    });
    console.info(benchLog.split('\n').filter((l) => l.startsWith('[speed-matrix]')).join('\n'));
    expect(code, `npx vitest bench exited ${code}:\n${benchLog.slice(-3000)}`).toBe(0);
    result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    expect(result.partial).toBe(false);
    expect(result.prefill.every((p) => p.status === 'valid')).toBe(true);
  }, 600_000);

  test('no failed request and no Errors cell', () => {
    expect(result.cells.length).toBeGreaterThan(0);
    for (const c of result.cells) {
      expect(c.figures?.failedRequests, `${c.contextLabel}/${c.concurrency} failed requests`).toBe(0);
      expect(c.statuses, `${c.contextLabel}/${c.concurrency}`).not.toContain('errors');
    }
  });

  test('cells within the running limit are not queued; cells above it are Requests queued', () => {
    const limit = facts.maxRunningRequests?.value;
    expect(limit).toBeDefined();
    for (const c of result.cells) {
      const key = `${c.contextLabel}/${c.concurrency}`;
      if (c.status === 'over-capacity') continue;
      if (c.concurrency <= limit!) expect(c.statuses, key).toEqual(['valid']);
      else expect(c.statuses, key).toContain('requests-queued');
    }
  });

  // Per-request tok/s counts the gaps after the first token; a request also waits its TTFT, which on a
  // fast CPU server (a token a millisecond, TTFT 3-12 ms) is 2-9 % of a 128-token request: the bound
  // of 90 % of per-request tok/s failed there at 89.5 % with the stream never idle. It is held to
  // what one stream streaming back to back gives, from the cell's own medians.
  test('0/1 never idles: its stream is in flight 95 % of the window, and total tok/s is at least 90 % of back-to-back requests', () => {
    const f = result.cells.find((c) => c.context === 0 && c.concurrency === 1)?.figures;
    expect(f?.perRequestTokensPerSecond).toBeDefined();
    expect(f!.clientActiveRequests).toBeGreaterThanOrEqual(0.95);
    const tokens = 128;
    const backToBack = tokens / ((f!.ttftMs!.median + (tokens - 1) * f!.timeBetweenTokensMs!.median) / 1000);
    expect(f!.totalTokensPerSecond, `back to back: ${backToBack.toFixed(1)} tok/s`).toBeGreaterThanOrEqual(0.9 * backToBack);
  });

  test(`per-request tok/s within ${CROSS_CHECK_SHARE * 100} % of the server's own timings, where it reports them`, () => {
    const checked = result.cells.filter((c) => c.serverCrossCheck?.items.some((i) => i.figure === 'perRequestTokensPerSecond'));
    if (facts.engine.value === 'llamacpp') expect(checked.length, 'llama.cpp reports per-request timings').toBe(result.cells.filter((c) => c.figures).length);
    for (const c of checked) {
      const i = c.serverCrossCheck!.items.find((x) => x.figure === 'perRequestTokensPerSecond')!;
      expect(Math.abs(i.client - i.server) / i.server, `${c.contextLabel}/${c.concurrency}: client ${i.client}, server ${i.server}`).toBeLessThan(CROSS_CHECK_SHARE);
    }
  });
});

// the reason, in the test list of every run without a real server
if (!url) test.skip(`real server checks: ${SKIP_REASON}`, () => {});
