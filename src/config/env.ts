/**
 * Environment overrides for CI and quick runs (LLM_BENCH_*). Each bad value is an error naming
 * the variable, what was wrong and an example of a good value.
 */
import { ConfigError } from '../errors.js';
import { decimalNumber } from '../shapes/decimal.js';
import { DAY_MS, MAX_WINDOW_S, MIN_OUTPUT_TOKENS, MIN_OUTPUT_TOKENS_WHY, MIN_WINDOW_S } from './defaults.js';
import { parseSweepText } from './sweep-input.js';
import { parseSloText } from '../slo/slo.js';
import type { Slo } from '../shapes/result.js';
import { parseArrival, type Arrival } from '../shapes/arrival.js';
import { editDistance } from '../spelling.js';
import { parseWorkloadInput, type WorkloadSpec } from './workload-input.js';
import { withoutUrlUserinfo } from '../redact.js';
import { urlPortProblem } from './schema.js';
import type { ExtraColumn } from '../shapes/columns.js';
import { parseColumns, parsePercentiles } from './columns-input.js';
import { intList, tokenList } from './env-lists.js';

export interface EnvOverrides {
  url?: string;
  model?: string;
  apiKey?: string;
  engine?: string;
  endpoint?: 'chat' | 'completions';
  contexts?: number[];
  concurrency?: number[];
  prefill?: number[];
  windowS?: number;
  maxOutputTokens?: number;
  outDir?: string;
  thresholds?: string;
  simProfile?: string;
  headroom?: number;
  /** LLM_BENCH_REPEAT: measure each cell this many times */
  repeat?: number;
  /** LLM_BENCH_BASELINE: speed-matrix.json to compare every cell with */
  baseline?: string;
  /** LLM_BENCH_SIM_OVERRIDES: simulator profile parameters (JSON object) */
  simOverrides?: Record<string, unknown>;
  /** LLM_BENCH_ALLOW_ERRORS=1: cells with failed requests pass */
  allowErrors?: boolean;
  /** LLM_BENCH_STALL_S: a request silent this long after its first token has stalled */
  stallS?: number;
  /** LLM_BENCH_RETRY_S: how long setup calls wait for a server that does not answer */
  retryS?: number;
  /** LLM_BENCH_UPDATE=all: `-u` rewrites every managed budget, moved or not */
  updateAll?: boolean;
  /** LLM_BENCH_RESUME: a partial speed-matrix.json to continue */
  resume?: string;
  /** LLM_BENCH_REQUESTS_FILE: where every measured request goes, one JSON line each */
  requestsFile?: string;
  /** LLM_BENCH_SLO: the service-level objective, e.g. perRequest>=20,ttftP90<=2000 */
  slo?: Slo;
  /** LLM_BENCH_COLUMNS: the all-measurements table's columns after METHOD's set ([] for `method`) */
  columns?: ExtraColumn[];
  /** LLM_BENCH_PERCENTILES: the percentiles each latency distribution reports beside METHOD's, ascending */
  percentiles?: number[];
  /** LLM_BENCH_TOKENIZER: path to a Hugging Face tokenizer.json (the local tokenizer) */
  tokenizer?: string;
  /** LLM_BENCH_RATES: open-loop rate cells' offered rates, requests/s ([] for `none`: no rate cells), or a sweep (`sweep`, `sweep:8`) */
  rates?: number[] | { sweep: number };
  /** LLM_BENCH_ARRIVAL: their arrival process (poisson, constant, gamma:B) */
  arrival?: Arrival;
  /** LLM_BENCH_RAMP_S: linear ramp-up before each rate cell's window, seconds */
  rampS?: number;
  /** LLM_BENCH_MAX_IN_FLIGHT: the client's ceiling on requests in flight in a rate cell */
  maxInFlight?: number;
  /** LLM_BENCH_RATE_SEED: seed of every rate cell's schedule */
  rateSeed?: number;
  /** LLM_BENCH_CLIENT_LIMIT_MS: the bound on the client's timing error estimate p99 (suite clientLimitedLoopDelayMs) */
  clientLimitMs?: number;
  /** LLM_BENCH_CLIENT_THREADS: client threads for a cell's streams (an integer ≥ 1, or auto) */
  clientThreads?: number | 'auto';
  /** LLM_BENCH_WORKLOAD: the workload (kind:key=value,…), parsed; lengths' missing `out` is filled in by resolve.ts */
  workload?: WorkloadSpec;
}

export type Env = Record<string, string | undefined>;

/** The variables a user sets for a run (this file, resolve.ts, and settings.ts for the reporter, the progress lines and the command line); docs/running.md lists every one. */
export const RUN_ENV_VARIABLES: readonly string[] = [
  'LLM_BENCH_URL', 'LLM_BENCH_MODEL', 'LLM_BENCH_API_KEY', 'LLM_BENCH_ENGINE', 'LLM_BENCH_ENDPOINT',
  'LLM_BENCH_CONTEXTS', 'LLM_BENCH_CONCURRENCY', 'LLM_BENCH_PREFILL', 'LLM_BENCH_DURATION_S', 'LLM_BENCH_MAX_TOKENS',
  'LLM_BENCH_OUT', 'LLM_BENCH_THRESHOLDS', 'LLM_BENCH_SIM_PROFILE', 'LLM_BENCH_SIM_OVERRIDES', 'LLM_BENCH_HEADROOM',
  'LLM_BENCH_REPEAT', 'LLM_BENCH_BASELINE', 'LLM_BENCH_ALLOW_ERRORS', 'LLM_BENCH_STALL_S', 'LLM_BENCH_RETRY_S',
  'LLM_BENCH_UPDATE', 'LLM_BENCH_RESUME', 'LLM_BENCH_SLO', 'LLM_BENCH_NAME', 'LLM_BENCH_LAUNCH_COMMAND',
  'LLM_BENCH_TOKENIZER', 'LLM_BENCH_DEBUG', 'LLM_BENCH_QUIET', 'LLM_BENCH_JUNIT',
  'LLM_BENCH_RATES', 'LLM_BENCH_ARRIVAL', 'LLM_BENCH_RAMP_S', 'LLM_BENCH_MAX_IN_FLIGHT', 'LLM_BENCH_RATE_SEED',
  'LLM_BENCH_WORKLOAD', 'LLM_BENCH_CLIENT_THREADS', 'LLM_BENCH_CLIENT_LIMIT_MS', 'LLM_BENCH_COLUMNS',
  'LLM_BENCH_PERCENTILES', 'LLM_BENCH_REQUESTS_FILE',
];

/**
 * Every LLM_BENCH_* variable there is: the run's, and this repository's own (its tests and scripts
 * run the bench as a child with their environment; the perf scripts' CPU profiles). A name that is
 * not here is a typo (LLM_BENCH_CONCURENCY) and stops the run naming the nearest one, as an unknown
 * key of the suite does: a silently ignored variable runs the wrong matrix.
 */
export const KNOWN_ENV_VARIABLES: readonly string[] = [
  ...RUN_ENV_VARIABLES,
  'LLM_BENCH_REAL_URL', 'LLM_BENCH_REAL_CONTEXTS', 'LLM_BENCH_REAL_CONCURRENCY', 'LLM_BENCH_REAL_DURATION_S',
  'LLM_BENCH_ACCURACY', 'LLM_BENCH_SCREENSHOTS', 'LLM_BENCH_CHROMIUM', 'LLM_BENCH_REPLAY_SCALE', 'LLM_BENCH_REPLAY_REPORT',
  'LLM_BENCH_PERF_PROFILE',
];

/**
 * The known variable nearest to `name`, when it is near enough to be what was meant: a slip of a
 * letter or two in the part after LLM_BENCH_ (at most a third of that part's letters), or a word
 * short of one; a different word (LLM_BENCH_TIMEOUT) is "not a variable", not a wrong guess
 * (LLM_BENCH_OUT).
 */
export function nearestEnvVariable(name: string): string | undefined {
  const tail = (n: string): string => (n.startsWith('LLM_BENCH_') ? n.slice('LLM_BENCH_'.length) : n);
  // or a word short of a name (LLM_BENCH_STALL for LLM_BENCH_STALL_S, LLM_BENCH_THREADS for LLM_BENCH_CLIENT_THREADS)
  const part = tail(name);
  const longer = part.length >= 4 ? KNOWN_ENV_VARIABLES.filter((k) => tail(k).startsWith(part) || tail(k).endsWith(part)) : [];
  if (longer.length > 0) return longer.reduce((a, b) => (b.length < a.length ? b : a));
  let best: string | undefined;
  let bestD = Infinity;
  for (const known of KNOWN_ENV_VARIABLES) {
    const d = editDistance(tail(name), tail(known));
    if (d < bestD) {
      best = known;
      bestD = d;
    }
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(tail(name).length / 3)) ? best : undefined;
}

/** Stops on any LLM_BENCH_* variable that is not one of KNOWN_ENV_VARIABLES, naming the nearest. */
export function checkEnvNames(env: Env): void {
  const unknown = Object.keys(env).filter((k) => k.startsWith('LLM_BENCH_') && !KNOWN_ENV_VARIABLES.includes(k)).sort();
  if (unknown.length === 0) return;
  const lines = unknown.map((k) => {
    const near = nearestEnvVariable(k);
    return `  - ${k}: ${near ? `did you mean ${near}?` : 'not a variable of llm-speed-matrix'}`;
  });
  throw new ConfigError(
    `unknown LLM_BENCH_* variable${unknown.length > 1 ? 's' : ''} (a typo would silently run another matrix):\n${lines.join('\n')}\n` +
      `  the variables are listed in docs/running.md; unset ${unknown.length > 1 ? 'these' : 'it'} or fix the name`,
  );
}

/** the values an on/off variable takes (LLM_BENCH_ALLOW_ERRORS, LLM_BENCH_QUIET, LLM_BENCH_DEBUG); readEnvOverrides stops on any other */
const FLAG = /^(0|1|true|false|yes|no|on|off)$/i;
const FLAG_ON = /^(1|true|yes|on)$/i;

/** An on/off variable is on (1, true, yes or on). */
export function flagOn(env: Env, name: string): boolean {
  return FLAG_ON.test(env[name]?.trim() ?? '');
}

/** LLM_BENCH_DEBUG=1: expected errors keep their stack trace (see asUserError in src/errors.ts). */
export function debugErrors(env: Env = process.env): boolean {
  return flagOn(env, 'LLM_BENCH_DEBUG');
}

/** The on/off variables whose value would otherwise be read as off without a word: each is 1/0, true/false, yes/no or on/off. */
function checkFlags(env: Env): void {
  const what: Record<string, string> = {
    LLM_BENCH_ALLOW_ERRORS: 'lets cells with failed requests pass',
    LLM_BENCH_QUIET: 'stops the progress lines from inside the cells',
    LLM_BENCH_DEBUG: 'keeps the stack trace of expected errors',
  };
  for (const [name, does] of Object.entries(what)) {
    const v = nonEmpty(env, name);
    if (v !== undefined && !FLAG.test(v)) throw new ConfigError(`${name}: "${v}" must be 1 or 0 (true/false, yes/no and on/off work too); e.g. ${name}=1 ${does}`);
  }
}

function nonEmpty(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** A positive number (whole with `integer`), at most `max` where given: a bad value names the variable, the rule and an example. */
function positiveNumber(env: Env, name: string, example: string, integer: boolean, max?: { value: number; why: string }): number | undefined {
  const raw = nonEmpty(env, name);
  if (raw === undefined) return undefined;
  const n = decimalNumber(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new ConfigError(`${name}: "${raw}" must be a positive ${integer ? 'whole number' : 'number'}; e.g. ${name}=${example}`);
  }
  if (max !== undefined && n > max.value) throw new ConfigError(`${name}: "${raw}" is over ${max.value}${max.why}; e.g. ${name}=${example}`);
  return n;
}

/** LLM_BENCH_MAX_TOKENS: a whole number, at least MIN_OUTPUT_TOKENS */
function outputCap(env: Env): number | undefined {
  const maxTokens = positiveNumber(env, 'LLM_BENCH_MAX_TOKENS', '4096', true);
  if (maxTokens !== undefined && maxTokens < MIN_OUTPUT_TOKENS) {
    throw new ConfigError(`LLM_BENCH_MAX_TOKENS: "${env.LLM_BENCH_MAX_TOKENS!.trim()}" must be at least ${MIN_OUTPUT_TOKENS}: ${MIN_OUTPUT_TOKENS_WHY}; e.g. LLM_BENCH_MAX_TOKENS=256`);
  }
  return maxTokens;
}

const DAY_S = DAY_MS / 1000;

/** LLM_BENCH_DURATION_S: from MIN_WINDOW_S to MAX_WINDOW_S */
function windowSeconds(env: Env): number | undefined {
  const windowS = positiveNumber(env, 'LLM_BENCH_DURATION_S', '30', false, { value: MAX_WINDOW_S, why: ' s, the longest window (an hour, as the suite\'s matrix.windowS)' });
  if (windowS !== undefined && windowS < MIN_WINDOW_S) {
    throw new ConfigError(
      `LLM_BENCH_DURATION_S: "${env.LLM_BENCH_DURATION_S!.trim()}" is under ${MIN_WINDOW_S} s, the shortest window that measures anything (the server's counts are sampled about once a second); e.g. LLM_BENCH_DURATION_S=30 (the default), or 2 for a quick look`,
    );
  }
  return windowS;
}

export function readEnvOverrides(env: Env = process.env): EnvOverrides {
  checkEnvNames(env);
  checkFlags(env);
  const out: EnvOverrides = {};
  const url = nonEmpty(env, 'LLM_BENCH_URL');
  if (url !== undefined) {
    const portProblem = urlPortProblem(url);
    if (portProblem !== undefined) throw new ConfigError(`LLM_BENCH_URL: ${JSON.stringify(withoutUrlUserinfo(url))} ${portProblem}`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      // quoted without its credentials: a URL that does not parse still carries them
      throw new ConfigError(`LLM_BENCH_URL: ${JSON.stringify(withoutUrlUserinfo(url))} is not a URL; e.g. LLM_BENCH_URL=http://127.0.0.1:8000`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new ConfigError(`LLM_BENCH_URL must start with http:// or https://; e.g. LLM_BENCH_URL=http://127.0.0.1:8000`);
    }
    out.url = url;
  }
  const model = nonEmpty(env, 'LLM_BENCH_MODEL');
  if (model !== undefined) out.model = model;
  const apiKey = nonEmpty(env, 'LLM_BENCH_API_KEY');
  if (apiKey !== undefined) out.apiKey = apiKey;
  const engine = nonEmpty(env, 'LLM_BENCH_ENGINE');
  if (engine !== undefined) out.engine = engine;
  const endpoint = nonEmpty(env, 'LLM_BENCH_ENDPOINT');
  if (endpoint !== undefined) {
    if (endpoint !== 'chat' && endpoint !== 'completions') {
      throw new ConfigError(`LLM_BENCH_ENDPOINT: "${endpoint}" must be chat or completions; e.g. LLM_BENCH_ENDPOINT=completions`);
    }
    out.endpoint = endpoint;
  }
  const contexts = tokenList(env, 'LLM_BENCH_CONTEXTS', '0,8K,64K', false);
  if (contexts) out.contexts = contexts;
  const concurrency = intList(env, 'LLM_BENCH_CONCURRENCY', '1,4,16');
  if (concurrency) out.concurrency = concurrency;
  const prefill = tokenList(env, 'LLM_BENCH_PREFILL', '8K,32K (or none)', true);
  if (prefill) {
    if (prefill.some((p) => p <= 0)) throw new ConfigError('LLM_BENCH_PREFILL: prefill contexts must be above 0; e.g. LLM_BENCH_PREFILL=8K,32K');
    out.prefill = prefill;
  }
  const windowS = windowSeconds(env);
  if (windowS !== undefined) out.windowS = windowS;
  const maxTokens = outputCap(env);
  if (maxTokens !== undefined) out.maxOutputTokens = maxTokens;
  const outDir = nonEmpty(env, 'LLM_BENCH_OUT');
  if (outDir !== undefined) out.outDir = outDir;
  const thresholds = nonEmpty(env, 'LLM_BENCH_THRESHOLDS');
  if (thresholds !== undefined) out.thresholds = thresholds;
  const simProfile = nonEmpty(env, 'LLM_BENCH_SIM_PROFILE');
  if (simProfile !== undefined) out.simProfile = simProfile;
  const headroom = nonEmpty(env, 'LLM_BENCH_HEADROOM');
  if (headroom !== undefined) {
    const h = decimalNumber(headroom);
    if (!Number.isFinite(h) || h < 0 || h >= 1) throw new ConfigError(`LLM_BENCH_HEADROOM: "${headroom}" must be a fraction in [0, 1); e.g. LLM_BENCH_HEADROOM=0.1`);
    out.headroom = h;
  }
  const clientLimit = nonEmpty(env, 'LLM_BENCH_CLIENT_LIMIT_MS');
  if (clientLimit !== undefined) {
    const ms = decimalNumber(clientLimit);
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new ConfigError(`LLM_BENCH_CLIENT_LIMIT_MS: "${clientLimit}" must be a number of ms > 0; e.g. LLM_BENCH_CLIENT_LIMIT_MS=10 (a cell is Client-limited above it; default 5)`);
    }
    out.clientLimitMs = ms;
  }
  const threads = nonEmpty(env, 'LLM_BENCH_CLIENT_THREADS');
  if (threads !== undefined) {
    const n = /^\d+$/.test(threads) ? Number(threads) : Number.NaN;
    if (threads !== 'auto' && !(Number.isInteger(n) && n >= 1 && n <= 64)) {
      throw new ConfigError(`LLM_BENCH_CLIENT_THREADS: "${threads}" must be an integer from 1 to 64, or auto; e.g. LLM_BENCH_CLIENT_THREADS=4 (1: the streams stay on the cell's own thread)`);
    }
    out.clientThreads = threads === 'auto' ? 'auto' : n;
  }
  const repeat = positiveNumber(env, 'LLM_BENCH_REPEAT', '3', true, { value: 1000, why: ' measurements of each cell' });
  if (repeat !== undefined) out.repeat = repeat;
  const baseline = nonEmpty(env, 'LLM_BENCH_BASELINE');
  if (baseline !== undefined) out.baseline = baseline;
  if (nonEmpty(env, 'LLM_BENCH_ALLOW_ERRORS') !== undefined) out.allowErrors = flagOn(env, 'LLM_BENCH_ALLOW_ERRORS');
  const stallS = positiveNumber(env, 'LLM_BENCH_STALL_S', '10', false, { value: DAY_S, why: ' s (a day)' });
  if (stallS !== undefined) out.stallS = stallS;
  const resume = nonEmpty(env, 'LLM_BENCH_RESUME');
  if (resume !== undefined) out.resume = resume;
  const requestsFile = nonEmpty(env, 'LLM_BENCH_REQUESTS_FILE');
  if (requestsFile !== undefined) out.requestsFile = requestsFile;
  const update = nonEmpty(env, 'LLM_BENCH_UPDATE');
  if (update !== undefined) {
    if (update !== 'all' && update !== 'moved') {
      throw new ConfigError(`LLM_BENCH_UPDATE: "${update}" must be all or moved; e.g. LLM_BENCH_UPDATE=all makes -u rewrite every budget`);
    }
    out.updateAll = update === 'all';
  }
  const retryRaw = nonEmpty(env, 'LLM_BENCH_RETRY_S');
  if (retryRaw !== undefined) {
    const r = decimalNumber(retryRaw);
    if (!Number.isFinite(r) || r < 0 || r > DAY_S) throw new ConfigError(`LLM_BENCH_RETRY_S: "${retryRaw}" must be a number of seconds from 0 to ${DAY_S} (a day); e.g. LLM_BENCH_RETRY_S=30 (0: no retry)`);
    out.retryS = r;
  }
  const simOverrides = nonEmpty(env, 'LLM_BENCH_SIM_OVERRIDES');
  if (simOverrides !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(simOverrides);
    } catch (error) {
      throw new ConfigError(
        `LLM_BENCH_SIM_OVERRIDES is not valid JSON (${(error as Error).message}); give a JSON object of simulator profile fields, e.g. LLM_BENCH_SIM_OVERRIDES='{"stepBaseMs":12}'`,
      );
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(`LLM_BENCH_SIM_OVERRIDES must be a JSON object of simulator profile fields, e.g. LLM_BENCH_SIM_OVERRIDES='{"stepBaseMs":12}'`);
    }
    out.simOverrides = parsed as Record<string, unknown>;
  }
  const tokenizer = nonEmpty(env, 'LLM_BENCH_TOKENIZER');
  if (tokenizer !== undefined) out.tokenizer = tokenizer;
  const slo = nonEmpty(env, 'LLM_BENCH_SLO');
  if (slo !== undefined) out.slo = parseSloText(slo);
  const workload = nonEmpty(env, 'LLM_BENCH_WORKLOAD');
  return { ...out, ...readTableOverrides(env), ...readRateOverrides(env), ...(workload !== undefined ? { workload: parseWorkloadInput(workload, 'LLM_BENCH_WORKLOAD') } : {}) };
}

/** The all-measurements table's variables: LLM_BENCH_COLUMNS and LLM_BENCH_PERCENTILES (columns-input.ts). */
function readTableOverrides(env: Env): Pick<EnvOverrides, 'columns' | 'percentiles'> {
  const out: Pick<EnvOverrides, 'columns' | 'percentiles'> = {};
  const columns = nonEmpty(env, 'LLM_BENCH_COLUMNS');
  if (columns !== undefined) out.columns = parseColumns(columns);
  const percentiles = nonEmpty(env, 'LLM_BENCH_PERCENTILES');
  if (percentiles !== undefined) out.percentiles = parsePercentiles(percentiles);
  return out;
}

/**
 * The open-loop rate cells' variables: LLM_BENCH_RATES (requests/s above 0, comma-separated;
 * `none` or empty: no rate cells, like LLM_BENCH_PREFILL; `sweep` or `sweep:N`: a sweep of N rates), LLM_BENCH_ARRIVAL (the shared parser's
 * processes), LLM_BENCH_RAMP_S (seconds ≥ 0), LLM_BENCH_MAX_IN_FLIGHT (a whole number ≥ 1),
 * LLM_BENCH_RATE_SEED (a whole number ≥ 0).
 */
export function readRateOverrides(env: Env): Pick<EnvOverrides, 'rates' | 'arrival' | 'rampS' | 'maxInFlight' | 'rateSeed'> {
  const out: Pick<EnvOverrides, 'rates' | 'arrival' | 'rampS' | 'maxInFlight' | 'rateSeed'> = {};
  const rates = env.LLM_BENCH_RATES;
  if (rates !== undefined) {
    const trimmed = rates.trim();
    const example = 'e.g. LLM_BENCH_RATES=0.5,1,2,4 (or none)';
    const sweep = parseSweepText(trimmed);
    if (sweep && 'error' in sweep) throw new ConfigError(`LLM_BENCH_RATES: ${sweep.error}`);
    if (trimmed === '' || trimmed.toLowerCase() === 'none') out.rates = [];
    else if (sweep) out.rates = { sweep: sweep.points };
    else {
      const parts = trimmed.split(',').map((p) => p.trim());
      out.rates = parts.map((p) => {
        const n = decimalNumber(p);
        if (!Number.isFinite(n)) throw new ConfigError(`LLM_BENCH_RATES: "${p}" is not a rate; give requests/s as numbers, ${example}`);
        if (n <= 0) throw new ConfigError(`LLM_BENCH_RATES: "${p}" must be above 0 requests/s; ${example}`);
        return n;
      });
    }
  }
  const arrival = nonEmpty(env, 'LLM_BENCH_ARRIVAL');
  if (arrival !== undefined) {
    const a = parseArrival(arrival);
    if ('error' in a) throw new ConfigError(`LLM_BENCH_ARRIVAL: ${a.error}`);
    out.arrival = a;
  }
  const ramp = nonEmpty(env, 'LLM_BENCH_RAMP_S');
  if (ramp !== undefined) {
    const r = decimalNumber(ramp);
    if (!Number.isFinite(r) || r < 0) throw new ConfigError(`LLM_BENCH_RAMP_S: "${ramp}" must be a number of seconds ≥ 0; e.g. LLM_BENCH_RAMP_S=5 (0: no ramp)`);
    out.rampS = r;
  }
  const maxInFlight = positiveNumber(env, 'LLM_BENCH_MAX_IN_FLIGHT', '512', true);
  if (maxInFlight !== undefined) out.maxInFlight = maxInFlight;
  const seed = nonEmpty(env, 'LLM_BENCH_RATE_SEED');
  if (seed !== undefined) {
    if (!/^\d+$/.test(seed)) throw new ConfigError(`LLM_BENCH_RATE_SEED: "${seed}" must be a whole number ≥ 0; e.g. LLM_BENCH_RATE_SEED=1`);
    out.rateSeed = Number(seed);
  }
  return out;
}

