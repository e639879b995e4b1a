/**
 * User-facing configuration of a speed-matrix suite (what `defineSpeedMatrix` takes), validated
 * with zod. Input types and resolved types are kept apart: `SuiteInput` is what a user writes
 * (documented field by field in suite-input.ts, checked below to match these schemas),
 * `ResolvedSuite` has every default filled in (see resolve.ts).
 */
import { z } from 'zod';
import type { EngineInfoInput, HardwareInput, MatrixInput, SloInput, SuiteInput, TargetInput, TimeoutsInput, WorkloadObject } from './suite-input.js';

import { ENGINE_KINDS, type EngineKind } from '../shapes/engine.js';
import { nearestName } from '../spelling.js';
import { parseSweepText } from './sweep-input.js';
import { parseArrival } from '../shapes/arrival.js';
import { SloSchema } from '../slo/slo.js';
import { ConfigError } from '../errors.js';
import { DAY_MS, MAX_WINDOW_S, MIN_OUTPUT_TOKENS, MIN_OUTPUT_TOKENS_WHY, MIN_WINDOW_S } from './defaults.js';
import { parseWorkloadInput } from './workload-input.js';

/** the engines' other names, with case, dots, dashes and underscores dropped: what users write for them */
const ENGINE_OTHER_NAMES: Record<string, EngineKind> = {
  llamaserver: 'llamacpp',
  tensorrtllm: 'trtllm',
  textgenerationinference: 'tgi',
  openaicompatible: 'openai',
};

/**
 * Why `given` is not an engine (target.engine, LLM_BENCH_ENGINE): the names, and the one meant where
 * it is another spelling of one (`llama.cpp`, `TensorRT-LLM`) or a likely typo.
 */
export function engineNameProblem(given: string): string {
  const squeezed = given.toLowerCase().replace(/[^a-z0-9]/g, '');
  const meant = (ENGINE_KINDS as readonly string[]).includes(squeezed) ? (squeezed as EngineKind) : (ENGINE_OTHER_NAMES[squeezed] ?? nearestName(given, ENGINE_KINDS));
  const hint = meant !== undefined ? `; did you mean "${meant}"?` : '';
  return `${JSON.stringify(given)} is not an engine name; use one of ${ENGINE_KINDS.join(', ')}, or leave it out (the engine is detected)${hint}`;
}

const positiveInt = z.int().positive();
const tokens = z.int().nonnegative();

export const HardwareSchema = z.strictObject({
  type: z.string().optional(),
  gpu: z.string().optional(),
  gpuCount: z.int().positive({ error: 'must be 1 or more; for a server without a GPU leave gpu and gpuCount out, and say what it runs on in type or cpu (e.g. cpu: "2 × EPYC 9654")' }).optional(),
  vram: z.string().optional(),
  cpu: z.string().optional(),
  ram: z.string().optional(),
  os: z.string().optional(),
});

export const EngineInfoSchema = z.strictObject({
  quantization: z.string().optional(),
  backend: z.string().optional(),
  repository: z.string().optional(),
  build: z.string().optional(),
  commit: z.string().optional(),
});

/** what a server URL with whitespace inside it is told (the suite's target.url here, LLM_BENCH_URL in names.ts baseUrlOf) */
export const URL_WHITESPACE_RULE = 'was given with whitespace inside it (a space, tab or line break); remove it, or write %20 where the path really holds a space';

/**
 * Why a URL's port cannot be used, or undefined: the URL parser says only "Invalid URL" for a port
 * above 65535, and takes port 0, which no server listens on (the suite's target.url here,
 * LLM_BENCH_URL in env.ts)
 */
export function urlPortProblem(url: string): string | undefined {
  const port = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*):(\d+)(?:[/?#]|$)/i.exec(url.trim())?.[1];
  if (port === undefined) return undefined;
  const n = Number(port);
  return n >= 1 && n <= 65535 ? undefined : `has port ${port}, outside 1 … 65535; give the port the server listens on, e.g. http://127.0.0.1:8000`;
}

export const TargetSchema = z.strictObject({
  /** base URL of the server, e.g. http://127.0.0.1:8000 (no /v1) */
  url: z
    .string()
    .trim()
    // checked before z.url, which hands back the input with its tabs and line breaks removed (and
    // new URL later sends a space in the path as %20)
    .refine((s) => !/\s/.test(s), { error: URL_WHITESPACE_RULE })
    .refine((s) => urlPortProblem(s) === undefined, { error: (issue) => urlPortProblem(String(issue.input)) })
    .pipe(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:8000' }))
    .optional(),
  /** served model id; default: the first from /v1/models */
  model: z.string().min(1).optional(),
  /** sent as a Bearer header, never stored or printed */
  apiKey: z.string().min(1).optional(),
  /** force an adapter instead of auto-detection */
  engine: z.enum(ENGINE_KINDS, { error: (issue) => (typeof issue.input === 'string' ? engineNameProblem(issue.input) : undefined) }).optional(),
  endpoint: z.enum(['chat', 'completions']).optional(),
  /** KV-cache capacity in tokens, when the server does not expose it (or to override it) */
  kvCapacityTokens: positiveInt.optional(),
  maxRunningRequests: positiveInt.optional(),
  /** shown on the page; secrets are redacted */
  launchCommand: z.string().optional(),
  hardware: HardwareSchema.optional(),
  engineInfo: EngineInfoSchema.optional(),
  revision: z.string().optional(),
  /**
   * path to the model's Hugging Face tokenizer.json (also LLM_BENCH_TOKENIZER): sizes prompts when
   * the server has no tokenize endpoint, and counts output tokens from the streamed text when the
   * stream carries no usage or token ids (docs/tokenizer.md); read from the local file only
   */
  tokenizer: z.string().min(1, 'give the path of a tokenizer.json').optional(),
  /** name of the embedded simulator profile used when url is absent */
  simProfile: z.string().min(1).optional(),
});

const RateList = z.array(z.number({ error: 'a rate is a number of requests/s, e.g. [0.5, 1, 2, 4]' }).positive('a rate must be above 0 requests/s, e.g. [0.5, 1, 2, 4]'), {
  error: "rates are a list of requests/s or a sweep, e.g. [0.5, 1, 2, 4], 'sweep' or 'sweep:8'",
});
const SweepText = z.string().superRefine((text, ctx) => {
  const s = parseSweepText(text);
  if (!s) ctx.addIssue({ code: 'custom', message: `"${text}" is neither a list of rates nor a sweep; e.g. [0.5, 1, 2, 4], 'sweep' or 'sweep:8'` });
  else if ('error' in s) ctx.addIssue({ code: 'custom', message: s.error });
});

/** Every field optional: an absent one comes from the profile's or the default matrix (resolve.ts). */
export const MatrixSchema = z.strictObject({
  /** rows: context lengths in tokens */
  contexts: z.array(tokens).min(1, 'needs at least one context, e.g. [0, 8192]').optional(),
  /** columns: simultaneous requests */
  concurrency: z.array(positiveInt).min(1, 'needs at least one level, e.g. [1, 4, 16]').optional(),
  /** prefill rows: context lengths in tokens (may be empty) */
  prefill: z.array(positiveInt).optional(),
  windowS: z.number().positive().min(MIN_WINDOW_S, `must be at least ${MIN_WINDOW_S} s, the shortest window that measures anything (the server's counts are sampled about once a second), e.g. 30`).max(MAX_WINDOW_S).optional(),
  maxOutputTokens: positiveInt.min(MIN_OUTPUT_TOKENS, `must be at least ${MIN_OUTPUT_TOKENS}: ${MIN_OUTPUT_TOKENS_WHY}; e.g. 256`).optional(),
  /** open-loop rate cells: offered rates, requests/s; [] = none; or a sweep ('sweep', 'sweep:N') */
  rates: z
    .custom<number[] | string>()
    .superRefine((value, ctx) => {
      // a list is checked rate by rate (issues at rates.<i>), a string as a sweep
      const r = (typeof value === 'string' ? SweepText : RateList).safeParse(value);
      for (const issue of r.success ? [] : r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    })
    .optional(),
  /** the rate cells' arrival process: poisson, constant or gamma:B (checked by the shared parser) */
  arrival: z
    .string()
    .superRefine((text, ctx) => {
      const a = parseArrival(text);
      if ('error' in a) ctx.addIssue({ code: 'custom', message: a.error });
    })
    .optional(),
  /** linear ramp-up before each rate cell's window, seconds (at most the window: resolve.ts) */
  rampS: z.number({ error: 'the ramp is a number of seconds ≥ 0, e.g. 5' }).nonnegative('the ramp is a number of seconds ≥ 0 (0: none), e.g. 5').optional(),
  /** the client's ceiling on requests in flight */
  maxInFlight: z.int({ error: 'the in-flight ceiling is a whole number of requests ≥ 1, e.g. 512' }).min(1, 'the in-flight ceiling is a whole number of requests ≥ 1, e.g. 512').optional(),
  /** seed of every schedule */
  rateSeed: z.int({ error: 'the seed is a whole number ≥ 0, e.g. 1' }).nonnegative('the seed is a whole number ≥ 0, e.g. 1').optional(),
});

/** a timeout in ms: at most a day, which keeps it (and the test time limits made from it) within what a timer can wait */
const timeoutMs = positiveInt.max(DAY_MS, 'at most a day (86400000 ms)');

export const TimeoutsSchema = z.strictObject({
  headersMs: timeoutMs.optional(),
  stallMs: timeoutMs.optional(),
  drainMs: timeoutMs.optional(),
  gateMs: timeoutMs.optional(),
  gateSettleMs: z.int().nonnegative().max(DAY_MS, 'at most a day (86400000 ms)').optional(),
});

/** a run's name (suite `name`, LLM_BENCH_NAME): it names the threshold file thresholds/<name>.json and the page */
export const RUN_NAME = /^[A-Za-z0-9._-]+$/;
export const RUN_NAME_RULE = 'use letters, digits, ".", "_" or "-"';

/**
 * The workload, text or object, checked by its own parser (config/workload-input.ts), whose
 * messages name the key, what was given and a right value; resolve.ts parses it again for the run.
 */
export const WorkloadSchema = z.custom<string | WorkloadObject>().superRefine((value, ctx) => {
  try {
    parseWorkloadInput(value, 'workload');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // zod's issue path already says "workload: "
    ctx.addIssue({ code: 'custom', message: error.message.replace(/^workload: /, '') });
  }
});

export const SuiteSchema = z.strictObject({
  /** names the threshold file thresholds/<name>.json and the page */
  name: z.string().regex(RUN_NAME, RUN_NAME_RULE).optional(),
  target: TargetSchema.default({}),
  /** the matrix; when absent against the simulator, the profile's reference matrix is used */
  matrix: MatrixSchema.optional(),
  timeouts: TimeoutsSchema.default({}),
  /** threshold file path; default thresholds/<name>.json */
  thresholds: z.string().optional(),
  /** event-loop delay p99 (ms) above which a cell is Client-limited */
  clientLimitedLoopDelayMs: z.number().positive().optional(),
  /** client threads for a cell's streams: an integer 1-64, or 'auto' */
  clientThreads: z.union([z.number().int().min(1).max(64), z.literal('auto')]).optional(),
  /** allow Client-limited cells to pass their threshold check */
  allowClientLimited: z.boolean().optional(),
  /**
   * let cells with failed requests pass (also LLM_BENCH_ALLOW_ERRORS=1); by default a cell with a
   * failed request fails unless its threshold budget sets max.failedRequests
   */
  allowErrors: z.boolean().default(false),
  /**
   * the service-level objective capacity is measured against (also LLM_BENCH_SLO): per context, the
   * most simultaneous requests whose cell meets it, e.g. { perRequestTokensPerSecond: { min: 20 }, ttftMs: { p90: { max: 2000 } } }
   */
  slo: SloSchema.optional(),
  /** one shared context per cell (prefix-cache friendly, the reference method) or one per stream */
  promptMode: z.enum(['shared', 'distinct']).default('shared'),
  /** the workload (also LLM_BENCH_WORKLOAD): text kind:key=value,… or an object of the same keys */
  workload: WorkloadSchema.optional(),
});

export type { SuiteInput };

/**
 * The documented interfaces (suite-input.ts) and what zod accepts, kept the same at compile time:
 * the same field names at every level, and each assignable to the other. A field added to a schema
 * and not to its interface (or the other way round), or a changed field type, fails `tsc`.
 */
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : false;
type Assignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type InSync<Doc, Schema extends z.ZodType> = SameKeys<Doc, z.input<Schema>> extends true ? Assignable<Doc, z.input<Schema>> : false;
type Check<T extends true> = T;
/** compile-time only: each line fails to type-check when an interface and its schema drift apart */
export type SuiteInputInSync = [
  Check<InSync<SuiteInput, typeof SuiteSchema>>,
  Check<InSync<TargetInput, typeof TargetSchema>>,
  Check<InSync<MatrixInput, typeof MatrixSchema>>,
  Check<InSync<TimeoutsInput, typeof TimeoutsSchema>>,
  Check<InSync<HardwareInput, typeof HardwareSchema>>,
  Check<InSync<EngineInfoInput, typeof EngineInfoSchema>>,
  Check<InSync<SloInput, typeof SloSchema>>,
  Check<SameKeys<NonNullable<SloInput['failedRequests']>, NonNullable<z.input<typeof SloSchema>['failedRequests']>>>,
  Check<SameKeys<NonNullable<SloInput['goodput']>, NonNullable<z.input<typeof SloSchema>['goodput']>>>,
];
