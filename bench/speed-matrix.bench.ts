/**
 * The speed matrix on one machine: `npx vitest bench --run`. The suite (target, matrix) is in
 * bench/suite.ts, shared with the row-group files of bench/shards/ that split it over CI machines
 * (`npx vitest run --project matrix-sharded --shard=1/2 --reporter=blob`, then `npx vitest --merge-reports`).
 * With no LLM_BENCH_URL it runs against the embedded simulated server. Every LLM_BENCH_* variable
 * overrides the suite.
 */
import { defineSpeedMatrix } from 'llm-speed-matrix';
import { suite } from './suite.js';

await defineSpeedMatrix(suite);
