/**
 * Simulator profiles: every knob of the simulated engine, with the three named profiles.
 * How the reference profiles were fitted: docs/sim-profiles.md.
 */
import type { SimProfileName } from '../config/defaults.js';

/** The engine the sim imitates on the wire (surface.ts); the engine model underneath is shared. */
export type SimPersonality = 'vllm' | 'sglang' | 'llamacpp' | 'tgi' | 'trtllm' | 'ollama' | 'bare';

/** Fault rates applied to every request (0..1 each), drawn from a PRNG seeded by `seed`. */
export interface SimFaultRates {
  http500Rate: number;
  http429Rate: number;
  http503Rate: number;
  /** a stream goes silent for `stallMs` after `faultAfterTokens` tokens */
  stallRate: number;
  stallMs: number;
  /** an error event mid-stream (then [DONE]) */
  errorRate: number;
  /** the stream is closed without [DONE] */
  closeRate: number;
  /** the connection is closed before a byte of the answer (the request's resend draws the same) */
  closeBeforeRate: number;
  /** one chunk is not valid JSON */
  malformedRate: number;
  /** one chunk carries `hugeChunkBytes` of text */
  hugeChunkRate: number;
  hugeChunkBytes: number;
  /** response headers are delayed by `headersDelayMs` */
  headersDelayRate: number;
  headersDelayMs: number;
  /** the token index at which mid-stream faults strike */
  faultAfterTokens: number;
  /** the first this many completion requests the server receives draw no fault (a server that fails under load, not at start) */
  faultFreeRequests: number;
  /**
   * every usage the server reports says completion_tokens × this (total_tokens to match): 2 = a
   * server whose usage claims twice the tokens it streamed; 1 = honest. Not a rate: every request.
   */
  usageFactor: number;
}

/**
 * Wire behaviours of a server with none of the extras (issue 18; the `bare` personality has them
 * all). Each one can be set alone on any personality through the profile's `wire`; an unset knob
 * keeps the personality's own behaviour (surface.ts).
 */
export interface SimWireKnobs {
  /**
   * streamed responses go out as `HTTP/1.0 200 OK` without Content-Length or chunked encoding:
   * the body ends when the server closes the connection (a Python http.server stack)
   */
  closeDelimited: boolean;
  /** the stream's last bytes are `data: [DONE]` with no blank line (no newline at all) after them */
  unterminatedLastEvent: boolean;
  /** non-final chunks carry `"finish_reason":"null"`, the string */
  stringNullFinish: boolean;
  /**
   * tokens per chunk, [min, max]: each chunk holds tokens back until it has a count drawn from the
   * request's seed (deterministic per request); the last chunk takes what is left. [1, 1] = one
   * chunk per engine emission.
   */
  tokensPerChunk: readonly [number, number];
  /** no usage anywhere in a stream, even with `stream_options.include_usage` */
  noStreamUsage: boolean;
  /** every usage block is `{"prompt_tokens":100,"completion_tokens":100,"total_tokens":200}`, whatever was generated */
  constantUsage: boolean;
  /** no metrics endpoint (`/metrics`, TRT-LLM's `/prometheus/metrics`): 404 */
  noMetrics: boolean;
  /** no tokenize or detokenize endpoint: 404 */
  noTokenize: boolean;
  /** `GET /api/version` answers as Ollama's does (with `GET /api/tags`, enough to look like Ollama to a detector) */
  ollamaVersion: boolean;
  /** `/v1/models` owned_by says this (a gateway relaying its upstream's); unset = the personality's */
  ownedBy: string;
  /**
   * request fields outside the standard OpenAI ones are a 400 naming the field ("Unrecognized
   * request argument supplied", as OpenAI's own API and strict gateways answer)
   */
  strictFields: boolean;
  /**
   * requests must carry `Authorization: Bearer <apiKey>` (a server started with `--api-key`), else
   * 401, with each engine's open paths and 401 body (server.ts keyGuarded; docs/simulator.md)
   */
  apiKey?: string;
}

export const SIM_WIRE_KNOBS: readonly (keyof SimWireKnobs)[] = [
  'closeDelimited',
  'unterminatedLastEvent',
  'stringNullFinish',
  'tokensPerChunk',
  'noStreamUsage',
  'constantUsage',
  'noMetrics',
  'noTokenize',
  'ollamaVersion',
  'ownedBy',
  'strictFields',
  'apiKey',
];

export interface SimProfileParams {
  /** served model id (`/v1/models`) */
  modelId: string;
  personality: SimPersonality;
  /** engine version reported by /version and /get_server_info */
  version: string;
  maxModelLen: number;
  /** scheduler cap on concurrently running requests (vLLM max_num_seqs) */
  maxRunningRequests: number;
  /** KV cache capacity in tokens (rounded down to whole blocks) */
  kvCapacityTokens: number;
  /** KV/prefix-cache block size in tokens */
  blockSize: number;
  prefixCaching: boolean;
  /** token budget of one step (chunked prefill; vLLM max_num_batched_tokens) */
  maxBatchedTokens: number;
  /** step time = stepBaseMs + stepPerRequestMs·batch + stepPerKvTokenMs·kvTokensInBatch + prefill */
  stepBaseMs: number;
  stepPerRequestMs: number;
  stepPerKvTokenMs: number;
  /** prefill cost per prompt token computed in the step */
  prefillPerTokenMs: number;
  /** extra prefill cost per token per 1,000 tokens of position (attention over the prefix) */
  prefillPerTokenPerKPositionMs: number;
  /** tokens each running stream gets per step (k > 1 imitates speculative decoding / stream interval) */
  tokensPerStep: number;
  /** latency from request arrival to the engine queue that requests do not share (HTTP, validation) */
  requestOverheadMs: number;
  /** the same, per prompt token (e.g. tokenization done in parallel) */
  requestMsPerToken: number;
  /** serial frontend cost per request (one request at a time: e.g. a single tokenizer loop) */
  frontendMsPerRequest: number;
  /** serial frontend cost per prompt token */
  frontendMsPerToken: number;
  /** while the frontend tokenizes, no chunk is written (SGLang's single tokenizer-manager loop) */
  frontendBlocksStreaming: boolean;
  /** probability per generated token of a simulated EOS when ignore_eos is false */
  eosProbability: number;
  /** the first N generated tokens are reasoning deltas (0 = no reasoning phase) */
  reasoningTokens: number;
  /** completions max_tokens default (vLLM: 16) */
  defaultCompletionMaxTokens: number;
  faults: SimFaultRates;
  /** PRNG seed for EOS and fault draws */
  seed: number;
  /** ground-truth records kept (oldest dropped first) */
  maxTruthRecords: number;
  /**
   * Extra server arguments the sim reports as its launch args (SGLang /get_server_info; vLLM
   * /server_info, which is served only when this is set, like VLLM_SERVER_DEV_MODE=1).
   */
  serverArgs?: Record<string, unknown>;
  /**
   * Admission limit: TGI answers 429 beyond this many requests in flight (its
   * --max-concurrent-requests, default 128); Ollama 503 and SGLang 503 beyond this many waiting.
   * Other personalities queue without limit.
   */
  admissionLimit?: number;
  /** wire knobs set on this profile (each unset one: the personality's own behaviour) */
  wire: Partial<SimWireKnobs>;
  /**
   * llama.cpp personality: the `/metrics` it serves. 'b4748' (default): the names of b4748, the
   * build our real checks run, decode counters included. 'current': today's upstream names
   * (`prompt_tokens_cached_total`, `n_tokens_max`, `spec_decode_*`; no `kv_cache_usage_ratio`)
   * without the decode counters `n_decode_total` and `n_busy_slots_per_decode`, and with
   * `kv_cache_tokens`, as the fork of issue 18 serves them. 'off': started without `--metrics`
   * (HTTP 501, as llama.cpp answers).
   */
  llamacppMetrics?: LlamacppMetricsNames;
  /** llama.cpp personality: `GET /slots` answers (default true; false: started without `--slots`, HTTP 501) */
  llamacppSlots?: boolean;
  /**
   * llama.cpp personality: the prompt cache keeps one prompt a slot, and a request re-uses only its
   * own slot's (slot-cache.ts, as b4748 does; default true). false: the shared block cache.
   */
  llamacppSlotCache?: boolean;
}

export const LLAMACPP_METRICS_NAMES = ['b4748', 'current', 'off'] as const;
export type LlamacppMetricsNames = (typeof LLAMACPP_METRICS_NAMES)[number];

/** What callers may override: any parameter, and any subset of the fault rates and wire knobs. */
export type SimProfileOverrides = Partial<Omit<SimProfileParams, 'faults' | 'wire'>> & { faults?: Partial<SimFaultRates>; wire?: Partial<SimWireKnobs> };

/** A resolved profile: a name and every parameter. */
export interface SimProfile extends SimProfileParams {
  name: string;
}

export const NO_FAULTS: SimFaultRates = {
  http500Rate: 0,
  http429Rate: 0,
  http503Rate: 0,
  stallRate: 0,
  stallMs: 2000,
  errorRate: 0,
  closeRate: 0,
  closeBeforeRate: 0,
  malformedRate: 0,
  hugeChunkRate: 0,
  hugeChunkBytes: 1 << 20,
  headersDelayRate: 0,
  headersDelayMs: 500,
  faultAfterTokens: 5,
  faultFreeRequests: 0,
  usageFactor: 1,
};

const COMMON = {
  prefixCaching: true,
  tokensPerStep: 1,
  eosProbability: 0.002,
  reasoningTokens: 0,
  defaultCompletionMaxTokens: 16,
  faults: NO_FAULTS,
  wire: {},
  seed: 1,
  maxTruthRecords: 20_000,
} as const;

/** The small fast profile the tests and the first look use; `bare` is it with one slot. */
const TINY: SimProfile = {
  ...COMMON,
  name: 'tiny',
  modelId: 'sim-tiny',
  personality: 'vllm',
  version: '0.0.0-sim',
  maxModelLen: 32_768,
  maxRunningRequests: 8,
  kvCapacityTokens: 65_536,
  blockSize: 16,
  maxBatchedTokens: 8_192,
  stepBaseMs: 10,
  stepPerRequestMs: 0,
  stepPerKvTokenMs: 0,
  prefillPerTokenMs: 0.002,
  prefillPerTokenPerKPositionMs: 0,
  requestOverheadMs: 0,
  requestMsPerToken: 0,
  frontendMsPerRequest: 0,
  frontendMsPerToken: 0,
  frontendBlocksStreaming: false,
};

export const SIM_PROFILES: Record<string, SimProfile> = {
  tiny: TINY,
  'sglang-h200': {
    ...COMMON,
    name: 'sglang-h200',
    modelId: 'muse-glimmer',
    personality: 'sglang',
    version: '0.5.6.post3.dev9265+g05c584c44',
    maxModelLen: 131_072,
    maxRunningRequests: 256,
    kvCapacityTokens: 1_441_792,
    // SGLang matches per token (page size 1); 16 keeps hashing cheap (hit rounded down to 16)
    blockSize: 16,
    maxBatchedTokens: 8_192,
    stepBaseMs: 16.7,
    stepPerRequestMs: 0.093,
    stepPerKvTokenMs: 3.0e-6,
    prefillPerTokenMs: 0.0799,
    prefillPerTokenPerKPositionMs: 0.000444,
    requestOverheadMs: 75,
    requestMsPerToken: 0.0009,
    frontendMsPerRequest: 0,
    frontendMsPerToken: 0.0026,
    frontendBlocksStreaming: true,
  },
  'vllm-arc-b65x4': {
    ...COMMON,
    name: 'vllm-arc-b65x4',
    modelId: 'muse',
    personality: 'vllm',
    version: '0.31.0+xpu.llmscaler',
    maxModelLen: 131_072,
    maxRunningRequests: 16,
    kvCapacityTokens: 1_310_720,
    blockSize: 64,
    maxBatchedTokens: 8_192,
    stepBaseMs: 26.9,
    stepPerRequestMs: 0.31,
    stepPerKvTokenMs: 8.1e-6,
    prefillPerTokenMs: 0.3547,
    prefillPerTokenPerKPositionMs: 0.000694,
    requestOverheadMs: 50,
    requestMsPerToken: 0.0023,
    frontendMsPerRequest: 20,
    frontendMsPerToken: 0,
    frontendBlocksStreaming: false,
  },
  // a llama.cpp-derived server with its own Python HTTP stack (issue 18): one request at a time,
  // the rest queued; its context is its one slot's
  bare: {
    ...TINY,
    name: 'bare',
    modelId: 'sim-bare',
    personality: 'bare',
    maxRunningRequests: 1,
    kvCapacityTokens: 32_768,
  },
} satisfies Record<SimProfileName, SimProfile>;

export const SIM_PERSONALITY_NAMES: readonly SimPersonality[] = ['vllm', 'sglang', 'llamacpp', 'tgi', 'trtllm', 'ollama', 'bare'];

/** TGI's default --max-concurrent-requests. */
export const TGI_DEFAULT_MAX_CONCURRENT_REQUESTS = 128;

/**
 * The longest request the server takes (prompt + output). llama.cpp splits its context over its
 * slots (`-c` / `-np`), so a slot holds kvCapacityTokens / maxRunningRequests at most.
 */
export function servedMaxModelLen(p: SimProfile): number {
  if (p.personality !== 'llamacpp') return p.maxModelLen;
  return Math.min(p.maxModelLen, Math.floor(p.kvCapacityTokens / p.maxRunningRequests));
}

/** The named profile; throws naming the valid profiles when unknown. */
export function getSimProfile(name: string): SimProfile {
  const p = Object.hasOwn(SIM_PROFILES, name) ? SIM_PROFILES[name] : undefined;
  if (!p) {
    throw new Error(
      `unknown sim profile "${name}": profile must be one of ${Object.keys(SIM_PROFILES).join(', ')}; ` +
        `pick one of those (e.g. --profile tiny)`,
    );
  }
  return p;
}

/** Profile + overrides + personality, checked. */
export function resolveSimProfile(
  name: string,
  overrides: SimProfileOverrides = {},
  personality?: SimPersonality,
): SimProfile {
  const base = getSimProfile(name);
  const p: SimProfile = {
    ...base,
    ...overrides,
    faults: { ...base.faults, ...(overrides.faults ?? {}) },
    wire: { ...base.wire, ...(overrides.wire ?? {}) },
    name,
  };
  if (personality !== undefined) p.personality = personality;
  if (!(SIM_PERSONALITY_NAMES as readonly string[]).includes(p.personality)) {
    throw new Error(`sim personality "${String(p.personality)}" is invalid: use one of ${SIM_PERSONALITY_NAMES.join(', ')}`);
  }
  for (const key of ['maxRunningRequests', 'kvCapacityTokens', 'blockSize', 'maxBatchedTokens', 'tokensPerStep', 'maxModelLen'] as const) {
    const v = p[key];
    if (!Number.isInteger(v) || v < 1) {
      throw new Error(`sim profile field ${key} = ${String(v)} is invalid: it must be an integer ≥ 1`);
    }
  }
  if (p.llamacppMetrics !== undefined && !(LLAMACPP_METRICS_NAMES as readonly string[]).includes(p.llamacppMetrics)) {
    throw new Error(`sim profile field llamacppMetrics = ${String(p.llamacppMetrics)} is invalid: use one of ${LLAMACPP_METRICS_NAMES.join(', ')}`);
  }
  if (!(p.stepBaseMs > 0)) throw new Error(`sim profile field stepBaseMs = ${p.stepBaseMs} is invalid: it must be > 0`);
  if (!(Number.isFinite(p.faults.usageFactor) && p.faults.usageFactor >= 0)) {
    throw new Error(`sim profile field faults.usageFactor = ${String(p.faults.usageFactor)} is invalid: it must be a number ≥ 0 (1 = honest usage)`);
  }
  checkFaults(overrides.faults);
  checkWire(p.wire);
  return p;
}

/** Throws naming the field and the fix when an overridden fault is unknown (it would never be injected) or not a number. */
function checkFaults(faults: Partial<SimFaultRates> | undefined): void {
  if (faults === undefined) return;
  if (faults === null || typeof faults !== 'object' || Array.isArray(faults)) throw new Error(`sim profile field faults must be an object of fault rates (${Object.keys(NO_FAULTS).join(', ')})`);
  for (const [key, value] of Object.entries(faults)) {
    if (value === undefined) continue;
    if (!Object.hasOwn(NO_FAULTS, key)) throw new Error(`sim fault "${key}" is unknown: use one of ${Object.keys(NO_FAULTS).join(', ')}`);
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new Error(`sim fault ${key} = ${JSON.stringify(value)} is invalid: it must be a number ≥ 0`);
  }
}

/** Throws naming the knob and the fix when a wire knob is unknown or of the wrong type. */
function checkWire(wire: Partial<SimWireKnobs>): void {
  if (wire === null || typeof wire !== 'object' || Array.isArray(wire)) {
    throw new Error(`sim profile field wire must be an object of wire knobs (${SIM_WIRE_KNOBS.join(', ')})`);
  }
  for (const [key, value] of Object.entries(wire)) {
    if (!(SIM_WIRE_KNOBS as readonly string[]).includes(key)) {
      throw new Error(`sim wire knob "${key}" is unknown: use one of ${SIM_WIRE_KNOBS.join(', ')}`);
    }
    if (value === undefined) continue;
    if (key === 'tokensPerChunk') {
      const ok = Array.isArray(value) && value.length === 2 && value.every((n) => Number.isInteger(n) && n >= 1) && value[0] <= value[1];
      if (!ok) throw new Error(`sim wire knob tokensPerChunk = ${JSON.stringify(value)} is invalid: give [min, max], integers with 1 ≤ min ≤ max (e.g. [2, 4])`);
    } else if (key === 'ownedBy' || key === 'apiKey') {
      if (typeof value !== 'string' || value === '') throw new Error(`sim wire knob ${key} = ${JSON.stringify(value)} is invalid: give a non-empty string`);
    } else if (typeof value !== 'boolean') {
      throw new Error(`sim wire knob ${key} = ${JSON.stringify(value)} is invalid: it must be true or false`);
    }
  }
}
