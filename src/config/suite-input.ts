/**
 * What a user writes in `defineSpeedMatrix(suite)`, as plain interfaces whose fields carry their
 * documentation: the unit, the default and an example of each, so an editor shows them on hover
 * and the emitted `.d.ts` keeps them (zod's `.describe()` reaches no declaration file).
 *
 * zod (schema.ts) stays the validator. These interfaces must describe exactly what it accepts:
 * schema.ts asserts at compile time that `SuiteInput` and `z.input<typeof SuiteSchema>` (and each
 * nested part) have the same fields and are assignable both ways, so a field added to one and not
 * the other fails `tsc`. test/config/suite-docs.test.ts reads the built declarations and fails on
 * a field without its comment, default or example.
 */
import type { EngineKind } from '../shapes/engine.js';
import type { SloInput } from './slo-input.js';
import type { WorkloadObject } from './workload-object.js';

export type { FileWorkloadInput, LengthsWorkloadInput, MultiTurnWorkloadInput, SharedPrefixWorkloadInput, SyntheticWorkloadInput, WorkloadObject } from './workload-object.js';
export type { MaxBoundInput, MaxLimit, MedianMax, MedianMin, MinBoundInput, MinLimit, P10Min, P1Min, P90Max, P95Max, P99Max, ItlBoundInput, SloInput } from './slo-input.js';

/**
 * The machine the server runs on, as shown on the page. Each field given here wins over what is
 * detected (nvidia-smi, /proc) for a server on this machine; a remote server's hardware is only
 * what is written here.
 */
export interface HardwareInput {
  /**
   * Kind of accelerator, free text.
   * @default detected for a local server, else not shown
   * @example 'Discrete GPU'
   */
  type?: string;
  /**
   * GPU model, free text.
   * @default detected for a local server (nvidia-smi), else not shown
   * @example 'H200 NVL'
   */
  gpu?: string;
  /**
   * Number of GPUs serving the model, a positive integer (count).
   * @default detected for a local server, else not shown
   * @example 4
   */
  gpuCount?: number;
  /**
   * GPU memory, free text with its unit.
   * @default detected for a local server, else not shown
   * @example '141 GB'
   */
  vram?: string;
  /**
   * CPU model, free text.
   * @default detected for a local server, else not shown
   * @example 'AMD EPYC 9654'
   */
  cpu?: string;
  /**
   * Host memory, free text with its unit.
   * @default detected for a local server, else not shown
   * @example '512 GB'
   */
  ram?: string;
  /**
   * Operating system, free text.
   * @default detected for a local server, else not shown
   * @example 'Ubuntu 24.04'
   */
  os?: string;
}

/** How the engine was built and run, as shown on the page beside its detected name and version. */
export interface EngineInfoInput {
  /**
   * Weight quantization, free text.
   * @default not shown
   * @example 'fp8'
   */
  quantization?: string;
  /**
   * Compute backend, free text.
   * @default not shown
   * @example 'CUDA 12.8'
   */
  backend?: string;
  /**
   * Where the engine's source comes from.
   * @default not shown
   * @example 'https://github.com/sgl-project/sglang'
   */
  repository?: string;
  /**
   * Build name or number.
   * @default not shown
   * @example 'b4748'
   */
  build?: string;
  /**
   * Source commit of the build.
   * @default not shown
   * @example '3f2a9c1'
   */
  commit?: string;
}

/** The server to measure. Without `url` the run measures the embedded simulator (`simProfile`). */
export interface TargetInput {
  /**
   * Base URL of the server, http(s). A gateway's path prefix is kept; a trailing `/v1` is
   * understood (and said once); whitespace inside it is refused. `LLM_BENCH_URL` wins over it.
   * @default none: the embedded simulator is measured
   * @example 'http://127.0.0.1:8000'
   */
  url?: string;
  /**
   * Served model id. `LLM_BENCH_MODEL` wins over it.
   * @default the first model of GET /v1/models
   * @example 'Qwen/Qwen3-8B'
   */
  model?: string;
  /**
   * Sent as `Authorization: Bearer …`; never stored or printed. `LLM_BENCH_API_KEY` wins over it.
   * @default none (no Authorization header)
   * @example process.env.MY_SERVER_KEY
   */
  apiKey?: string;
  /**
   * The adapter to use instead of auto-detection. `LLM_BENCH_ENGINE` wins over it.
   * @default detected from the server's endpoints; 'openai' (generic) when nothing tells it apart
   * @example 'sglang'
   */
  engine?: EngineKind;
  /**
   * Which OpenAI endpoint is measured: `/v1/chat/completions` or `/v1/completions`.
   * `LLM_BENCH_ENDPOINT` wins over it.
   * @default 'chat'
   * @example 'completions'
   */
  endpoint?: 'chat' | 'completions';
  /**
   * KV-cache capacity in tokens, when the server does not expose it (or to override it): cells
   * needing more (concurrency × (context + maxOutputTokens)) are Over capacity, not run.
   * @default read from the server where it exposes it, else unknown (every cell runs)
   * @example 1441792
   */
  kvCapacityTokens?: number;
  /**
   * Most requests the server runs at once (requests), when it does not expose it.
   * @default read from the server where it exposes it, else unknown
   * @example 256
   */
  maxRunningRequests?: number;
  /**
   * The server's launch command, shown on the page with secrets redacted.
   * `LLM_BENCH_LAUNCH_COMMAND` wins over it.
   * @default not shown
   * @example 'vllm serve Qwen/Qwen3-8B --max-num-seqs 256'
   */
  launchCommand?: string;
  /**
   * The machine the server runs on.
   * @default detected for a server on this machine, else not shown
   * @example { gpu: 'H200 NVL', gpuCount: 1, vram: '141 GB' }
   */
  hardware?: HardwareInput;
  /**
   * How the engine was built and run.
   * @default not shown
   * @example { quantization: 'fp8', build: 'b4748' }
   */
  engineInfo?: EngineInfoInput;
  /**
   * Revision of the model served (a Hugging Face commit or tag), stored in the run settings.
   * @default not stored
   * @example 'main'
   */
  revision?: string;
  /**
   * Path of the model's Hugging Face tokenizer.json, read from the local file only: sizes prompts
   * when the server has no tokenize endpoint, and counts output tokens from the streamed text when
   * the stream carries no usage or token ids (docs/tokenizer.md). `LLM_BENCH_TOKENIZER` wins over it.
   * @default none (the server's tokenize endpoint and usage)
   * @example './models/qwen3-8b/tokenizer.json'
   */
  tokenizer?: string;
  /**
   * Embedded simulator profile measured when `url` is absent (docs/sim-profiles.md).
   * `LLM_BENCH_SIM_PROFILE` wins over it.
   * @default 'sglang-h200'
   * @example 'tiny'
   */
  simProfile?: string;
}

/**
 * The matrix: rows are context lengths, columns concurrent requests, plus prefill rows. Every field
 * is optional; an absent one comes from the simulator profile's reference matrix (against the
 * simulator) or the default matrix (against a server), so `{ windowS: 10 }` alone shortens the
 * default run. The LLM_BENCH_CONTEXTS / _CONCURRENCY / _PREFILL / _DURATION_S / _MAX_TOKENS
 * variables win over them, and LLM_BENCH_RATES / _ARRIVAL / _RAMP_S / _MAX_IN_FLIGHT / _RATE_SEED
 * over the rate cells' fields.
 */
export interface MatrixInput {
  /**
   * Decode rows: context lengths in tokens (integers ≥ 0; 0 = a short prompt), at least one.
   * @default the profile's reference contexts against the simulator; [0, 8192, 32768] against a server
   * @example [0, 8192, 65536]
   */
  contexts?: number[];
  /**
   * Columns: simultaneous requests (positive integers), at least one.
   * @default the profile's reference levels against the simulator; [1, 2, 4, 8, 16] against a server
   * @example [1, 4, 16, 64]
   */
  concurrency?: number[];
  /**
   * Prefill rows: prompt lengths in tokens (positive integers), each measured by one cold request;
   * may be empty.
   * @default [] when `contexts` is given (the rows are the user's); else the profile's reference
   * prefill rows against the simulator, [8192, 32768] against a server
   * @example [8192, 65536]
   */
  prefill?: number[];
  /**
   * Measurement window of each cell, in seconds (> 0, at most 3600).
   * @default 30; 5 against the simulator
   * @example 60
   */
  windowS?: number;
  /**
   * `max_tokens` of every decode request, in tokens (positive integer).
   * @default the profile's against the simulator; 4096 against a server
   * @example 1024
   */
  maxOutputTokens?: number;
  /**
   * Open-loop rate cells: offered rates in requests/s (numbers > 0), one rate cell per context row
   * and rate; requests are sent at the times a seeded schedule says, whether or not the server
   * has finished the earlier ones. `LLM_BENCH_RATES` wins over it (`none` turns them off).
   * `'sweep'` (5 rates) or `'sweep:N'` (N rates, 2…20): per context, N rates spread evenly from
   * the synchronous rate (the decode cell at concurrency 1's completed requests/s) to the
   * throughput limit (the highest over the context's decode cells); needs concurrency 1.
   * @default none (no rate cells)
   * @example [0.5, 1, 2, 4]
   */
  rates?: number[] | string;
  /**
   * Arrival process of the rate cells: 'poisson', 'constant' or 'gamma:B' with a burstiness
   * B > 0 (vLLM's convention: below 1 burstier than Poisson, above 1 smoother).
   * `LLM_BENCH_ARRIVAL` wins over it.
   * @default 'poisson'
   * @example 'gamma:0.5'
   */
  arrival?: string;
  /**
   * Linear ramp-up before each rate cell's window, in seconds (≥ 0, at most the window): the rate
   * climbs from 0 to the cell's; ramp requests are sent and lie outside the window.
   * `LLM_BENCH_RAMP_S` wins over it.
   * @default 0 (no ramp)
   * @example 5
   */
  rampS?: number;
  /**
   * The client's ceiling on requests in flight in a rate cell (integer ≥ 1); a due request that
   * finds it reached waits, and the wait is counted. `LLM_BENCH_MAX_IN_FLIGHT` wins over it.
   * @default 512
   * @example 2048
   */
  maxInFlight?: number;
  /**
   * Seed of every rate cell's schedule, an integer ≥ 0 (no unit); each cell's own seed derives from it, its
   * context and its rate, so a rerun sends at the same times. `LLM_BENCH_RATE_SEED` wins over it.
   * @default 1
   * @example 42
   */
  rateSeed?: number;
}

/** Limits of the phases around a cell, in milliseconds. */
export interface TimeoutsInput {
  /**
   * A request with no response headers this long has failed (`headers-timeout`), in ms.
   * @default 120000
   * @example 300000
   */
  headersMs?: number;
  /**
   * The transport gives up on a request whose body sends no byte this long, in ms. Long, because a
   * server that sends its headers first is silent while it prefills (the cell's own stall limit is
   * LLM_BENCH_STALL_S or derived per cell).
   * @default 60000
   * @example 180000
   */
  stallMs?: number;
  /**
   * Before a cell, wait at most this long for the server to go idle (drain barrier), in ms.
   * @default 120000
   * @example 300000
   */
  drainMs?: number;
  /**
   * Readiness gate: base time for every request of a cell to start streaming before the window
   * opens, in ms; 0.05 ms per context token per request is added.
   * @default 60000
   * @example 120000
   */
  gateMs?: number;
  /**
   * Readiness gate: how long everything must have been running before the window opens, in ms
   * (integer ≥ 0).
   * @default 500
   * @example 1000
   */
  gateSettleMs?: number;
}

/**
 * A speed-matrix suite, what `defineSpeedMatrix` takes. Every field is optional: `{}` measures the
 * embedded simulator with its reference matrix. Unknown fields are an error naming the field.
 */
export interface SuiteInput {
  /**
   * Names the threshold file (thresholds/<name>.json) and the page; letters, digits, ".", "_", "-".
   * `LLM_BENCH_NAME` wins over it.
   * @default 'sim-<profile>' against the simulator, else 'target'
   * @example 'h200-sglang'
   */
  name?: string;
  /**
   * The server to measure.
   * @default {} (the embedded simulator)
   * @example { url: 'http://127.0.0.1:8000', engine: 'sglang' }
   */
  target?: TargetInput;
  /**
   * Rows, columns, prefill rows, window and output length; an absent field comes from the
   * simulator profile or the default matrix.
   * @default the profile's reference matrix against the simulator; contexts [0, 8192, 32768] ×
   * concurrency [1, 2, 4, 8, 16], prefill [8192, 32768], 30 s windows against a server
   * @example { contexts: [8192, 65536], concurrency: [1, 8, 32], windowS: 30 }
   */
  matrix?: MatrixInput;
  /**
   * Limits of the phases around a cell, in ms.
   * @default {} (each limit's own default)
   * @example { headersMs: 300000 }
   */
  timeouts?: TimeoutsInput;
  /**
   * Path of the threshold file. `LLM_BENCH_THRESHOLDS` wins over it.
   * @default 'thresholds/<name>.json'
   * @example 'thresholds/h200.json'
   */
  thresholds?: string;
  /**
   * The client's timing error estimate p99 above which a cell is Client-limited, in ms (> 0): √ of
   * its event-loop delay p99² + its reads' lag p99², on its worst thread (see
   * docs/accuracy.md; LLM_BENCH_CLIENT_LIMIT_MS wins). METHOD.md's 50 ms bounds the loop delay.
   * @default 5
   * @example 10
   */
  clientLimitedLoopDelayMs?: number;
  /**
   * Client threads for a cell's streams (also LLM_BENCH_CLIENT_THREADS): 1 = the cell's own thread;
   * N = N worker threads; `auto` = one per 256 streams within the cores the server leaves free.
   * @default 'auto'
   * @example 4
   */
  clientThreads?: number | 'auto';
  /**
   * Let Client-limited cells pass their threshold check.
   * @default false; true for the embedded simulator on a machine with fewer than 4 cores, where it takes the client's cores (the run says so at its start); that default does not excuse a rate cell the in-flight ceiling held back
   * @example true
   */
  allowClientLimited?: boolean;
  /**
   * Let cells with failed requests pass (also LLM_BENCH_ALLOW_ERRORS=1); otherwise a cell with a
   * failed request fails unless its threshold budget sets max.failedRequests.
   * @default false
   * @example true
   */
  allowErrors?: boolean;
  /**
   * The service-level objective capacity is measured against: per context, the most simultaneous
   * requests whose cell meets it. `LLM_BENCH_SLO` wins over it.
   * @default none (no capacity search)
   * @example { perRequestTokensPerSecond: { min: 20 }, ttftMs: { p90: { max: 2000 } } }
   */
  slo?: SloInput;
  /**
   * One shared context per cell (prefix-cache friendly, the reference method) or one per stream.
   * @default 'shared'
   * @example 'distinct'
   */
  promptMode?: 'shared' | 'distinct';
  /**
   * What the requests look like (docs/workloads.md): text `kind:key=value,…` or an object of the
   * same keys; a non-synthetic workload measures one row of its own. `LLM_BENCH_WORKLOAD` wins.
   * @default 'synthetic' (the method's exact-length prompts, one row per context)
   * @example 'sharedPrefix:groups=4,prefix=3072,suffix=1024'
   */
  workload?: string | WorkloadObject;
}
