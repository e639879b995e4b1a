/**
 * Simulator profiles: every knob of the simulated engine, with the three named profiles.
 * How the reference profiles were fitted: docs/sim-profiles.md.
 */
import type { SimProfileName } from '../config/defaults.js';
import { ConfigError } from '../errors.js';
import { checkFaults, checkWire, NO_FAULTS, type SimFaultRates, type SimWireKnobs } from './knobs.js';

/** The engine the sim imitates on the wire (surface.ts); the engine model underneath is shared. */
export type SimPersonality = 'vllm' | 'sglang' | 'llamacpp' | 'tgi' | 'trtllm' | 'ollama' | 'bare';

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

/**
 * Profile overrides checked against the profile (LLM_BENCH_SIM_OVERRIDES, the sim command's
 * --overrides): every key must be a profile field of the same type, and the resulting profile must
 * be valid. Errors name `source` and the fix.
 */
export function checkSimOverrides(profileName: string, raw: Record<string, unknown>, source: string): SimProfileOverrides {
  const base = getSimProfile(profileName) as unknown as Record<string, unknown>;
  const fields = Object.keys(base).filter((k) => k !== 'name');
  for (const [key, value] of Object.entries(raw)) {
    if (!fields.includes(key)) {
      throw new ConfigError(`${source}: "${key}" is not a simulator profile field; use one of ${fields.join(', ')}`);
    }
    if (typeof value !== typeof base[key] || value === null) {
      throw new ConfigError(`${source}: "${key}" must be a ${typeof base[key]} like the profile's ${JSON.stringify(base[key])}, got ${JSON.stringify(value)}`);
    }
  }
  const overrides = raw as SimProfileOverrides;
  try {
    resolveSimProfile(profileName, overrides);
  } catch (error) {
    throw new ConfigError(`${source}: ${(error as Error).message}`);
  }
  return overrides;
}
