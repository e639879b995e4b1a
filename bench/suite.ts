/**
 * The suite of this project's speed matrix, shared by the one-machine file
 * (bench/speed-matrix.bench.ts) and the row-group files that shard it (bench/shards/*.bench.ts).
 * With no LLM_BENCH_URL it runs against the embedded simulated server (profile sglang-h200 unless
 * LLM_BENCH_SIM_PROFILE says otherwise). Point it at your server with LLM_BENCH_URL, or write the
 * target here. Every LLM_BENCH_* variable overrides this file.
 */
import type { SuiteInput } from 'llm-speed-matrix';

export const suite: SuiteInput = {
  // name: 'my-vllm',                       // threshold file thresholds/<name>.json
  // target: { url: 'http://127.0.0.1:8000', engine: 'vllm', hardware: { gpu: 'H200 NVL', gpuCount: 1 } },
  // matrix: { contexts: [0, 8192, 32768], concurrency: [1, 4, 16], prefill: [8192], windowS: 30, maxOutputTokens: 4096 },
};

/** Row-group files in bench/shards/ (row-group-1 … row-group-N); shard with `vitest --shard=i/n` for n ≤ N. */
export const ROW_GROUPS = 4;
