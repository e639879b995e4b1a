/**
 * The `file` workload end to end (issue 23, done when: "The same file and seed send the same
 * requests in the same order in two runs"; "A malformed JSONL line gets an error naming the file
 * and the line number"; "An unknown format or kind is an error naming the field").
 *
 * `npx vitest bench --run` with LLM_BENCH_WORKLOAD=file:bench/workloads/sample.jsonl (the shipped
 * sample), C = 1, a 2 s window, against a simulator this test starts (LLM_BENCH_URL), so its ground
 * truth outlives the runs: each record has the FNV-1a of the prompt the sim received
 * (`promptHash`, the rendered chat). Two runs of seed 1 send the same prompts in the same order,
 * and that order is the file's seeded order (workload/prompt-file.ts seededOrder) line by line;
 * seed 2 sends another order. Bad input fails the run before any cell, as a user sees it; a line
 * too long for the server is never sent and is counted (the rule of workload/file-requests.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fnv1a } from '../../src/random.js';
import { renderChat } from '../../src/sim/chat-template.js';
import { startSim, type SimHandle } from '../../src/sim/index.js';
import { validateResult } from '../../src/results/validate.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { readPromptFile, seededOrder } from '../../src/workload/prompt-file.js';
import { getJson, type TruthJson } from '../accuracy/harness.js';
import { root, runVitest } from '../compare/run-vitest.js';

const SAMPLE = join(root, 'bench', 'workloads', 'sample.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'lsm-wl-files-'));
let sim: SimHandle;

beforeAll(async () => {
  // 2 ms steps: the sample's longest outputs (512 tokens) take about a second, so a 2 s window
  // at C = 1 sends tens of requests; no EOS, so each streams its own output length
  sim = await startSim({ profile: 'tiny', personality: 'vllm', thread: true, overrides: { stepBaseMs: 2, eosProbability: 0 } });
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

const matrix = (out: string) => ({
  LLM_BENCH_CONCURRENCY: '1',
  LLM_BENCH_DURATION_S: '2',
  LLM_BENCH_MAX_TOKENS: '16',
  LLM_BENCH_OUT: join(dir, out),
  LLM_BENCH_THRESHOLDS: join(dir, `${out}-thresholds.json`),
});

/** One run of the file workload against the test's sim: the prompt hashes its cell's requests carried, in the order the sim received them. */
async function fileRun(seed: number, out: string): Promise<{ hashes: string[]; result: SpeedMatrixResult }> {
  await fetch(`${sim.url}/_sim/reset`, { method: 'POST' });
  const r = runVitest(['bench', '--run'], { ...matrix(out), LLM_BENCH_URL: sim.url, LLM_BENCH_WORKLOAD: `file:${SAMPLE},seed=${seed}` });
  expect(r.code, r.out).toBe(0);
  const result = JSON.parse(readFileSync(join(dir, out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
  expect(validateResult(result).ok).toBe(true);
  const truth = await getJson<TruthJson[]>(`${sim.url}/_sim/truth`);
  // the cell's workers' requests (a file's one row is context 0): not the warm-up, not the calibration
  const cell = truth.filter((t) => /-c0x1-w0-r\d+$/.test(t.id)).sort((a, b) => a.receivedMs - b.receivedMs);
  // C = 1: request r<n> is the worker's n-th, so the received order is the sent order
  expect(cell.map((t) => Number(/-r(\d+)$/.exec(t.id)![1]))).toEqual(cell.map((_, i) => i));
  return { hashes: cell.map((t) => t.promptHash!), result };
}

/** What the sim's hashes of the file's requests 0 … n−1 in seed `seed`'s order must be. */
function expectedHashes(seed: number, n: number): string[] {
  const file = readPromptFile(SAMPLE);
  const order = seededOrder(file.lines.length, seed);
  return Array.from({ length: n }, (_, i) => fnv1a(renderChat(file.lines[order(i)]!.messages)).toString(16).padStart(8, '0'));
}

describe('file workload: the same file and seed send the same requests in the same order', () => {
  test('two runs of seed 1 send the file seed 1 order; seed 2 another', { timeout: 120_000 }, async () => {
    const first = await fileRun(1, 'seed1-a');
    const second = await fileRun(1, 'seed1-b');
    const other = await fileRun(2, 'seed2');
    const n = Math.min(first.hashes.length, second.hashes.length, other.hashes.length);
    console.log(`[files] requests in the cells: ${first.hashes.length}, ${second.hashes.length}, ${other.hashes.length} (seed 2)`);
    // enough requests for the order to say something: 8 of the file's 300 lines in one order by
    // chance is (1/300)^8. (A bound of 20 failed at 19 beside a spinning process and a compiler: the
    // count is the machine's speed, the order is the assertion)
    expect(n).toBeGreaterThanOrEqual(8);
    // the runs' windows end at different requests: compare the requests both sent
    expect(second.hashes.slice(0, n)).toEqual(first.hashes.slice(0, n));
    expect(first.hashes.slice(0, n)).toEqual(expectedHashes(1, n));
    expect(new Set(first.hashes).size).toBe(first.hashes.length);
    expect(other.hashes.slice(0, n)).toEqual(expectedHashes(2, n));
    expect(other.hashes.slice(0, n)).not.toEqual(first.hashes.slice(0, n));

    // the result names the file by name, content hash and seed
    const sha = first.result.info.run.workload?.file?.sha256;
    expect(first.result.info.run.workload).toMatchObject({ kind: 'file', text: 'file:sample.jsonl,seed=1', file: { name: 'sample.jsonl', lines: 300, used: 300, skipped: 0 } });
    expect(sha).toMatch(/^[0-9a-f]{64}$/);
    expect(second.result.info.run.workload?.file?.sha256).toBe(sha);
    expect(other.result.info.run.workload?.text).toBe('file:sample.jsonl,seed=2');
    const cell = first.result.cells[0]!;
    expect(`${cell.contextLabel}/${cell.concurrency}`).toBe('0/1');
    expect(cell.workload?.inputTokens?.requests).toBeGreaterThan(10);
  });
});

describe('bad workload input fails the run before any cell, naming where', () => {
  test('a malformed JSONL line: the file and the line number', { timeout: 60_000 }, () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"text": "one"}\n\n{"messages": [{"role": "user", "content": "two"}]}\n{"text": "three",}\n{"text": "four"}\n');
    const r = runVitest(['bench', '--run'], { ...matrix('bad'), LLM_BENCH_QUIET: '0', LLM_BENCH_SIM_PROFILE: 'tiny', LLM_BENCH_WORKLOAD: `file:${bad}` });
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toContain(`prompt file ${bad}, line 4: not JSON`);
    // the file is read before the server is reached
    expect(r.out).not.toMatch(/warm-up request|running (decode )?\d+\/\d+/);
  });

  test("a line longer than the server's max model length is never sent, and is counted on the page and in the JSON", { timeout: 60_000 }, () => {
    const file = join(dir, 'long.jsonl');
    const long = Array.from({ length: 800 }, (_, i) => `word${i % 50}`).join(' ');
    writeFileSync(file, ['{"text": "Say one thing."}', `{"text": "${long}"}`, '{"text": "Say another thing."}', '{"messages": [{"role": "user", "content": "And a third."}]}'].join('\n') + '\n');
    const r = runVitest(['bench', '--run'], { ...matrix('long'), LLM_BENCH_SIM_PROFILE: 'tiny', LLM_BENCH_SIM_OVERRIDES: '{"maxModelLen":512}', LLM_BENCH_WORKLOAD: `file:${file}` });
    expect(r.code, r.out).toBe(0);
    const result = JSON.parse(readFileSync(join(dir, 'long', 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    expect(result.info.run.workload?.file).toMatchObject({ name: 'long.jsonl', lines: 4, used: 3, skipped: 1 });
    const cell = result.cells[0]!;
    // sent, it would have been refused by the server: a failed request
    expect(cell.status).toBe('valid');
    expect(cell.figures?.failedRequests).toBe(0);
    expect(cell.workload?.inputTokens?.max).toBeLessThan(100);
    expect(readFileSync(join(dir, 'long', 'speed-matrix.md'), 'utf8')).toContain("3 of 4 lines usable, 1 skipped as longer than the server's max model length");
  });

  test('an unknown kind and an unknown key name LLM_BENCH_WORKLOAD', { timeout: 60_000 }, () => {
    const kind = runVitest(['bench', '--run'], { ...matrix('kind'), LLM_BENCH_SIM_PROFILE: 'tiny', LLM_BENCH_WORKLOAD: 'sharedPrefx:groups=4' });
    expect(kind.code, kind.out).not.toBe(0);
    expect(kind.out).toContain('LLM_BENCH_WORKLOAD: "sharedPrefx" is not a workload kind (did you mean sharedPrefix?)');
    const key = runVitest(['bench', '--run'], { ...matrix('key'), LLM_BENCH_SIM_PROFILE: 'tiny', LLM_BENCH_WORKLOAD: 'sharedPrefix:groups=4,prefx=1024' });
    expect(key.code, key.out).not.toBe(0);
    expect(key.out).toContain('LLM_BENCH_WORKLOAD: "prefx" is not a key of sharedPrefix (did you mean prefix?)');
  });
});
