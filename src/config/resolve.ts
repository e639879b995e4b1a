/**
 * Turns what the user wrote (suite + LLM_BENCH_* environment) into a fully resolved run
 * configuration, once, at the boundary. Every default comes from DEFAULTS or from the simulator
 * profile's reference matrix.
 */
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { DEFAULTS } from './defaults.js';
import { baseUrlOf, runNameOf, simProfileOf } from './names.js';
import { sloFromInput } from '../slo/slo.js';
import type { RateSettings, Slo } from '../shapes/result.js';
import { arrivalText, parseArrival, type Arrival } from '../shapes/arrival.js';
import { parseSweepText } from './sweep-input.js';
import { ConfigError } from '../errors.js';
import { readEnvOverrides, type EnvOverrides } from './env.js';
import { engineNameProblem, SuiteSchema, type SuiteInput } from './schema.js';
import { ENGINE_KINDS, type EndpointKind, type EngineKind } from '../shapes/engine.js';
import { nominalContext, type Workload } from '../shapes/workload.js';
import { contextLabel } from '../shapes/labels.js';
import { completeWorkload, parseWorkloadInput } from './workload-input.js';
import { PERCENTILES_DEFAULT_COLUMNS, type ExtraColumn } from '../shapes/columns.js';

export interface ResolvedMatrix {
  contexts: number[];
  concurrency: number[];
  prefill: number[];
  windowS: number;
  maxOutputTokens: number;
}

export interface ResolvedSuite {
  name: string;
  simulated: boolean;
  simProfile: string;
  target: {
    /** the base URL every request goes under (a gateway's path prefix kept, a trailing /v1 removed) */
    url?: string;
    /** said once when the run opens: how the given URL was understood (a trailing /v1) */
    urlNote?: string;
    model?: string;
    /** never printed; only sent as a header */
    apiKey?: string;
    engine?: EngineKind;
    endpoint: EndpointKind;
    kvCapacityTokens?: number;
    maxRunningRequests?: number;
    launchCommand?: string;
    hardware?: Record<string, string | number | undefined>;
    engineInfo?: Record<string, string | undefined>;
    revision?: string;
    /**
     * the local tokenizer: a tokenizer.json path (LLM_BENCH_TOKENIZER wins over target.tokenizer),
     * checked to be a readable file here and loaded when the run opens (src/tokenizer/local.ts)
     */
    tokenizer?: string;
  };
  matrix: ResolvedMatrix;
  timeouts: {
    headersMs: number;
    stallMs: number;
    drainMs: number;
    gateMs: number;
    gatePerContextTokenMs: number;
    gateSettleMs: number;
    /** how long setup calls (probe, tokenize) wait for a server that does not answer (LLM_BENCH_RETRY_S) */
    unreachableRetryMs: number;
  };
  /** LLM_BENCH_STALL_S in ms: the stall limit of every cell and of the warm-up (else derived per cell) */
  stallLimitMs?: number;
  metricsIntervalMs: number;
  thresholdsPath: string;
  clientLimitedLoopDelayMs: number;
  /** client threads for a cell's streams (LLM_BENCH_CLIENT_THREADS, suite clientThreads; load/thread-count.ts) */
  clientThreads: number | 'auto';
  /**
   * Client-limited cells pass (suite allowClientLimited; unset: false, but true for the embedded
   * simulator on a machine under DEFAULTS.simSharedMinCores cores, where the simulator takes the
   * client's cores: then `allowClientLimitedWhy` says so, and the run prints it at its start)
   */
  allowClientLimited: boolean;
  allowClientLimitedWhy?: string;
  /** cells with failed requests pass (suite allowErrors, LLM_BENCH_ALLOW_ERRORS=1) */
  allowErrors: boolean;
  promptMode: 'shared' | 'distinct';
  /** times each cell is measured (LLM_BENCH_REPEAT); its figures are the medians; default 1 */
  repeat: number;
  /** the all-measurements table's columns after METHOD's set (LLM_BENCH_COLUMNS); none by default */
  columns: ExtraColumn[];
  /** the percentiles each latency distribution reports beside METHOD's (LLM_BENCH_PERCENTILES), ascending; none by default */
  percentiles?: number[];
  /** result file every cell is compared with (LLM_BENCH_BASELINE) */
  baselinePath?: string;
  /** partial result to continue (LLM_BENCH_RESUME): its finished cells are kept, the rest measured */
  resumePath?: string;
  /** LLM_BENCH_REQUESTS_FILE: every measured request, one JSON line each (src/results/requests-file.ts) */
  requestsFile?: string;
  /** simulator profile fields overridden (LLM_BENCH_SIM_OVERRIDES), checked when the simulator starts */
  simOverrides?: Record<string, unknown>;
  /** the service-level objective (LLM_BENCH_SLO wins over the suite's slo): each context's capacity is searched against it */
  slo?: Slo;
  /**
   * the open-loop rate cells (matrix.rates, LLM_BENCH_RATES): rates ascending, the arrival process
   * as canonical text, seed, ramp and in-flight ceiling; absent when no rates are configured
   */
  rates?: RateSettings;
  /** rate-cell variables set for a run without rate cells (said at the start: they change nothing) */
  unusedRateSettingsNote?: string;
  /** contexts given for a run whose workload has its own one row (said at the start: they change nothing) */
  unusedContextsNote?: string;
  /**
   * what the requests look like (LLM_BENCH_WORKLOAD wins over the suite's workload); synthetic by
   * default; a lengths workload without `out` has the run's maxOutputTokens, fixed
   */
  workload: Workload;
}

const K = 1024;

/** The matrix of each simulator profile's reference page, so the default run draws that page. */
export const SIM_REFERENCE_MATRICES: Record<string, Omit<ResolvedMatrix, 'windowS'>> = {
  'sglang-h200': {
    contexts: [8 * K, 16 * K, 32 * K, 64 * K, 123 * K],
    concurrency: [1, 2, 4, 8, 16, 32, 64, 128],
    prefill: [8 * K, 16 * K, 32 * K, 64 * K, 123 * K, 128 * K],
    maxOutputTokens: 4096,
  },
  'vllm-arc-b65x4': {
    contexts: [0, 8 * K, 32 * K, 64 * K],
    concurrency: [1, 2, 4, 8, 16],
    prefill: [8 * K, 32 * K, 64 * K],
    maxOutputTokens: 256,
  },
  tiny: {
    contexts: [0, 1 * K, 4 * K],
    concurrency: [1, 2, 4, 8],
    prefill: [1 * K, 4 * K],
    maxOutputTokens: 256,
  },
};

/** Matrix for a real server when the suite gives none. */
export const DEFAULT_MATRIX: Omit<ResolvedMatrix, 'windowS'> = {
  contexts: [0, 8 * K, 32 * K],
  concurrency: [1, 2, 4, 8, 16],
  prefill: [8 * K, 32 * K],
  maxOutputTokens: DEFAULTS.maxOutputTokens,
};

function sortedUnique(xs: number[]): number[] {
  return [...new Set(xs)].sort((a, b) => a - b);
}


/** The rate cells' variables set where the run has no rate cells: they change nothing, so the run says so (not an error: one CI environment may serve jobs with and without rates). */
function unusedRateSettings(o: EnvOverrides): Pick<ResolvedSuite, 'unusedRateSettingsNote'> {
  const set = (
    [
      ['LLM_BENCH_ARRIVAL', o.arrival],
      ['LLM_BENCH_RAMP_S', o.rampS],
      ['LLM_BENCH_MAX_IN_FLIGHT', o.maxInFlight],
      ['LLM_BENCH_RATE_SEED', o.rateSeed],
    ] as const
  )
    .filter(([, v]) => v !== undefined)
    .map(([name]) => name);
  if (set.length === 0) return {};
  return { unusedRateSettingsNote: `${set.join(', ')} ${set.length > 1 ? 'are' : 'is'} set, but this run has no rate cells (LLM_BENCH_RATES or matrix.rates), so ${set.length > 1 ? 'they change' : 'it changes'} nothing` };
}

/**
 * The rate cells' settings: each field from the environment, else the suite's matrix, else its
 * default; none without rates (an empty list, or LLM_BENCH_RATES=none). A ramp longer than the
 * window is an error naming the field it came from: the ramp lies before the window, so a ramp
 * longer than it would be most of the cell's time spent outside what is measured.
 */
export function resolveRates(
  o: EnvOverrides,
  given: NonNullable<SuiteInput['matrix']>,
  windowS: number,
  concurrency: readonly number[],
): Pick<ResolvedSuite, 'rates' | 'unusedRateSettingsNote'> {
  const chosen = o.rates ?? given.rates ?? [];
  let sweep: { points: number } | undefined;
  if (typeof chosen === 'string') {
    const parsed = parseSweepText(chosen);
    if (!parsed || 'error' in parsed) throw new ConfigError(`matrix.rates: ${parsed ? parsed.error : `"${chosen}" is not a sweep; e.g. 'sweep:8'`}`);
    sweep = parsed;
  } else if (!Array.isArray(chosen)) sweep = { points: chosen.sweep };
  const rates = sweep ? [] : sortedUnique(chosen as number[]);
  if (rates.length === 0 && !sweep) return unusedRateSettings(o);
  if (sweep) sweepNeedsColumns(o.rates !== undefined ? 'LLM_BENCH_RATES' : 'matrix.rates', concurrency);
  let arrival: Arrival = o.arrival ?? { kind: DEFAULTS.rateArrival };
  if (o.arrival === undefined && given.arrival !== undefined) {
    const parsed = parseArrival(given.arrival);
    if ('error' in parsed) throw new ConfigError(`matrix.arrival: ${parsed.error}`);
    arrival = parsed;
  }
  const rampS = o.rampS ?? given.rampS ?? DEFAULTS.rateRampS;
  if (rampS > windowS) {
    const field = o.rampS !== undefined ? 'LLM_BENCH_RAMP_S' : 'matrix.rampS';
    throw new ConfigError(
      `${field}: a ramp of ${rampS} s is longer than the ${windowS} s window; shorten the ramp to at most the window (e.g. ${field === 'LLM_BENCH_RAMP_S' ? 'LLM_BENCH_RAMP_S=' : 'rampS: '}${Math.min(5, windowS)}) or lengthen the window`,
    );
  }
  return {
    rates: {
      rates,
      arrival: arrivalText(arrival),
      seed: o.rateSeed ?? given.rateSeed ?? DEFAULTS.rateSeed,
      rampS,
      maxInFlight: o.maxInFlight ?? given.maxInFlight ?? DEFAULTS.rateMaxInFlight,
      ...(sweep ? { sweep } : {}),
    },
  };
}

/**
 * A sweep's anchors are decode cells of the run: the synchronous rate is the cell at concurrency 1,
 * the throughput limit the best of the others, so both must be among the columns.
 */
function sweepNeedsColumns(field: string, concurrency: readonly number[]): void {
  const fix = 'add it to LLM_BENCH_CONCURRENCY or matrix.concurrency (e.g. LLM_BENCH_CONCURRENCY=1,4,16), or give rates as a list';
  if (!concurrency.includes(1)) {
    throw new ConfigError(`${field}: a sweep starts at the synchronous rate, measured by the decode cell at concurrency 1, which the columns (${concurrency.join(', ')}) lack; ${fix}`);
  }
  if (concurrency.length < 2) {
    throw new ConfigError(`${field}: a sweep ends at the throughput limit, the best of the decode cells above concurrency 1, and the columns are only 1; add more to LLM_BENCH_CONCURRENCY or matrix.concurrency (e.g. LLM_BENCH_CONCURRENCY=1,4,16), or give rates as a list`);
  }
}

/** The local tokenizer's path, checked to be a file: a ConfigError names the field and the fix. */
function tokenizerPath(fromEnv: string | undefined, fromSuite: string | undefined): { tokenizer?: string } {
  const path = fromEnv ?? fromSuite;
  if (path === undefined) return {};
  const field = fromEnv !== undefined ? 'LLM_BENCH_TOKENIZER' : 'target.tokenizer';
  let stat: ReturnType<typeof statSync> | undefined;
  try {
    stat = statSync(path);
  } catch {
    stat = undefined;
  }
  if (!stat?.isFile()) {
    throw new ConfigError(
      `${field}: ${path} ${stat ? 'is not a file' : 'does not exist'}; give the path of the model's Hugging Face tokenizer.json ` +
        `(the file beside its weights), e.g. ${field === 'LLM_BENCH_TOKENIZER' ? 'LLM_BENCH_TOKENIZER=' : 'target.tokenizer: '}./models/my-model/tokenizer.json`,
    );
  }
  return { tokenizer: path };
}


/**
 * `machine.cores`: the cores this run may use (os.availableParallelism(); tests give their own).
 */
export function resolveSuite(
  input: SuiteInput = {},
  env: Record<string, string | undefined> = process.env,
  machine: { cores: number } = { cores: availableParallelism() },
): ResolvedSuite {
  const parsed = SuiteSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  - ${i.path.join('.') || '(suite)'}: ${i.message}`);
    throw new ConfigError(`invalid speed-matrix suite (defineSpeedMatrix):\n${lines.join('\n')}`);
  }
  const suite = parsed.data;
  const o: EnvOverrides = readEnvOverrides(env);

  const base_ = baseUrlOf(o.url ?? suite.target.url);
  const url = base_?.url;
  const simulated = url === undefined;
  // checked where it is used: a real server's run does not stop on a profile it never starts
  const simProfile = simProfileOf(o.simProfile, suite.target.simProfile, simulated);

  // field by field: the environment, the suite's matrix, then the profile's reference matrix
  // (simulator) or the default one; `{ windowS: 10 }` alone keeps the rest of the default run.
  // Prefill rows given no value where the user chose the rows (LLM_BENCH_CONTEXTS or the suite's
  // matrix.contexts) are none: the base's prefill lengths belong to the base's rows, not to the user's.
  const given = suite.matrix ?? {};
  const base = (simulated ? SIM_REFERENCE_MATRICES[simProfile] : undefined) ?? DEFAULT_MATRIX;
  const windowS = o.windowS ?? given.windowS ?? (simulated ? DEFAULTS.simWindowS : DEFAULTS.windowS);
  const matrix: ResolvedMatrix = {
    contexts: sortedUnique(o.contexts ?? given.contexts ?? base.contexts),
    concurrency: sortedUnique(o.concurrency ?? given.concurrency ?? base.concurrency),
    prefill: sortedUnique(o.prefill ?? given.prefill ?? (o.contexts !== undefined || given.contexts !== undefined ? [] : base.prefill)),
    windowS,
    maxOutputTokens: o.maxOutputTokens ?? given.maxOutputTokens ?? base.maxOutputTokens,
  };
  const workload = completeWorkload(o.workload ?? (suite.workload !== undefined ? parseWorkloadInput(suite.workload, 'workload') : { kind: 'synthetic' }), matrix.maxOutputTokens);
  const unusedContextsNote = workloadRow(matrix, workload, o.prefill ?? given.prefill, o.contexts !== undefined ? 'LLM_BENCH_CONTEXTS' : given.contexts !== undefined ? 'matrix.contexts' : undefined);

  let engine = suite.target.engine;
  if (o.engine !== undefined) {
    if (!(ENGINE_KINDS as readonly string[]).includes(o.engine)) {
      throw new ConfigError(`LLM_BENCH_ENGINE: ${engineNameProblem(o.engine)}`);
    }
    engine = o.engine as EngineKind;
  }

  // the suite's slo is normalized (and its mistakes reported) even where LLM_BENCH_SLO replaces it
  const suiteSlo = suite.slo ? sloFromInput(suite.slo) : undefined;
  const slo = o.slo ?? suiteSlo;
  const name = runNameOf(env.LLM_BENCH_NAME) ?? suite.name ?? (simulated ? `sim-${simProfile}` : 'target');
  const t = suite.timeouts;
  return {
    name,
    simulated,
    simProfile,
    target: {
      url,
      ...(base_?.note !== undefined ? { urlNote: base_.note } : {}),
      model: o.model ?? suite.target.model,
      apiKey: o.apiKey ?? suite.target.apiKey,
      engine,
      endpoint: o.endpoint ?? suite.target.endpoint ?? DEFAULTS.endpoint,
      kvCapacityTokens: suite.target.kvCapacityTokens,
      maxRunningRequests: suite.target.maxRunningRequests,
      // LLM_BENCH_LAUNCH_COMMAND: the server's launch command for the page (secrets are redacted there)
      launchCommand: env.LLM_BENCH_LAUNCH_COMMAND?.trim() || suite.target.launchCommand,
      hardware: suite.target.hardware,
      engineInfo: suite.target.engineInfo,
      revision: suite.target.revision,
      ...tokenizerPath(o.tokenizer, suite.target.tokenizer),
    },
    matrix,
    timeouts: {
      headersMs: t.headersMs ?? DEFAULTS.headersTimeoutMs,
      stallMs: t.stallMs ?? DEFAULTS.stallTimeoutMs,
      drainMs: t.drainMs ?? DEFAULTS.drainTimeoutMs,
      gateMs: t.gateMs ?? DEFAULTS.gateTimeoutMs,
      gatePerContextTokenMs: DEFAULTS.gatePerContextTokenMs,
      gateSettleMs: t.gateSettleMs ?? DEFAULTS.gateSettleMs,
      unreachableRetryMs: o.retryS !== undefined ? o.retryS * 1000 : DEFAULTS.unreachableRetryMs,
    },
    ...(o.stallS !== undefined ? { stallLimitMs: o.stallS * 1000 } : {}),
    metricsIntervalMs: DEFAULTS.metricsIntervalMs,
    thresholdsPath: o.thresholds ?? suite.thresholds ?? `thresholds/${name}.json`,
    clientLimitedLoopDelayMs: o.clientLimitMs ?? suite.clientLimitedLoopDelayMs ?? DEFAULTS.clientLimitedLoopDelayMs,
    clientThreads: o.clientThreads ?? suite.clientThreads ?? 'auto',
    ...allowClientLimited(suite.allowClientLimited, simulated, machine.cores),
    allowErrors: o.allowErrors ?? suite.allowErrors,
    promptMode: suite.promptMode,
    repeat: o.repeat ?? 1,
    // LLM_BENCH_PERCENTILES alone shows the latencies vLLM's benchmark prints, at those percentiles
    columns: o.columns ?? (o.percentiles ? [...PERCENTILES_DEFAULT_COLUMNS] : []),
    ...(o.percentiles !== undefined ? { percentiles: o.percentiles } : {}),
    ...(o.baseline !== undefined ? { baselinePath: o.baseline } : {}),
    ...(o.resume !== undefined ? { resumePath: o.resume } : {}),
    ...(o.requestsFile !== undefined ? { requestsFile: o.requestsFile } : {}),
    ...(o.simOverrides !== undefined ? { simOverrides: o.simOverrides } : {}),
    ...(slo !== undefined ? { slo } : {}),
    ...resolveRates(o, given, windowS, matrix.concurrency),
    ...(unusedContextsNote !== undefined ? { unusedContextsNote } : {}),
    workload,
  };
}

/**
 * A non-synthetic workload replaces the context rows with its one row (shapes/workload.ts
 * `nominalContext`); its prefill rows are only those asked for by name (LLM_BENCH_PREFILL or the
 * suite's matrix.prefill), the synthetic prefill phase beside the workload's cells.
 */
function workloadRow(matrix: ResolvedMatrix, workload: Workload, explicitPrefill: readonly number[] | undefined, contextsFrom: string | undefined): string | undefined {
  if (workload.kind === 'synthetic') return undefined;
  const given = matrix.contexts;
  matrix.contexts = [nominalContext(workload)];
  matrix.prefill = sortedUnique([...(explicitPrefill ?? [])]);
  if (contextsFrom === undefined) return undefined;
  // said at the start, as unused rate settings are: the user asked for rows the run will not have
  return (
    `${contextsFrom} (${given.map(contextLabel).join(', ')}) is set, but the ${workload.kind} workload sends lengths of its own: ` +
    `the run has its one row, ${contextLabel(matrix.contexts[0]!)}, and the contexts change nothing`
  );
}

/** suite allowClientLimited, or its default: see ResolvedSuite.allowClientLimited */
function allowClientLimited(given: boolean | undefined, simulated: boolean, cores: number): Pick<ResolvedSuite, 'allowClientLimited' | 'allowClientLimitedWhy'> {
  if (given !== undefined || !simulated || cores >= DEFAULTS.simSharedMinCores) return { allowClientLimited: given ?? false };
  return {
    allowClientLimited: true,
    allowClientLimitedWhy:
      `the embedded simulator shares this machine's ${cores} core${cores === 1 ? '' : 's'} with the client, so a Client-limited cell ` +
      `is shown but does not fail the run (a real server, ${DEFAULTS.simSharedMinCores} or more cores, or allowClientLimited: false makes it fail)`,
  };
}
