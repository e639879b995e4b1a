/**
 * The reporter's settings, resolved once from the reporter's options and the environment: where
 * results go, the threshold file and what `-u` takes (headroom, LLM_BENCH_UPDATE), the baseline,
 * the job summary, JUnit, quiet progress and debug stacks. `withSpeedMatrix` (src/vitest.ts)
 * resolves them in Vitest's main process and hands the same object to every reporter it builds; a
 * reporter added by hand resolves them once when it is constructed. Code with no handle on them
 * (the progress printer inside a cell, the command line) takes this process's, resolved once.
 * Resolving never throws: a bad LLM_BENCH_HEADROOM or LLM_BENCH_UPDATE is kept as the reason `-u`
 * leaves the threshold file alone (the cells stop on it themselves, src/config/resolve.ts).
 */
import { DEFAULTS } from './defaults.js';
import { debugErrors, flagOn, readEnvOverrides, type Env } from './env.js';

/** What a reporter may be given instead of the environment (src/vitest.ts, reporters/speed-matrix.ts). */
export interface SettingsOptions {
  /** output folder; default $LLM_BENCH_OUT, else "reports" (relative to the Vitest root) */
  outDir?: string;
  /** threshold file rewritten under -u; default $LLM_BENCH_THRESHOLDS, else the run meta's thresholdsPath */
  thresholdsPath?: string;
  /** file the job summary is appended to; default $GITHUB_STEP_SUMMARY (unset: none) */
  stepSummaryPath?: string;
}

export interface RunSettings {
  /** the results folder, relative to the Vitest root: the option, else LLM_BENCH_OUT, else reports */
  outDir: string;
  /** the threshold file -u rewrites: the option, else LLM_BENCH_THRESHOLDS (else, at run end, the run's own) */
  thresholdsPath?: string;
  /** LLM_BENCH_BASELINE: the diff page is drawn against it (else against the run's own baseline) */
  baseline?: string;
  /** LLM_BENCH_RESUME: the partial result the run continues (never set aside when the run measures nothing) */
  resume?: string;
  /** what -u takes from LLM_BENCH_HEADROOM and LLM_BENCH_UPDATE=all, or why they could not be read */
  update: { headroom?: number; all: boolean } | { error: string };
  /** the job summary appended at run end: the option, else GITHUB_STEP_SUMMARY */
  stepSummaryPath?: string;
  /** LLM_BENCH_QUIET=1 (or true, yes, on): no progress lines from inside the cells */
  quiet: boolean;
  /** LLM_BENCH_JUNIT: Vitest's JUnit reporter writes this file too */
  junitPath?: string;
  /** LLM_BENCH_DEBUG=1: expected errors keep their stack trace */
  debug: boolean;
  /** GITHUB_ACTIONS=true: Vitest's github-actions reporter is one of the defaults */
  githubActions: boolean;
}

/** a variable's value, trimmed; unset when empty */
function text(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

/** -u's settings from the environment (read as the cells read them), or the error that stops -u. */
function updateSettings(env: Env): RunSettings['update'] {
  try {
    const o = readEnvOverrides(env);
    return { ...(o.headroom !== undefined ? { headroom: o.headroom } : {}), all: o.updateAll === true };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** The settings, once: the options win over the environment, which wins over DEFAULTS. */
export function resolveRunSettings(options: SettingsOptions = {}, env: Env = process.env): RunSettings {
  const thresholdsPath = options.thresholdsPath ?? text(env, 'LLM_BENCH_THRESHOLDS');
  const baseline = text(env, 'LLM_BENCH_BASELINE');
  const resume = text(env, 'LLM_BENCH_RESUME');
  const stepSummaryPath = options.stepSummaryPath ?? (env.GITHUB_STEP_SUMMARY || undefined);
  const junitPath = text(env, 'LLM_BENCH_JUNIT');
  return {
    outDir: options.outDir ?? text(env, 'LLM_BENCH_OUT') ?? DEFAULTS.outDir,
    ...(thresholdsPath !== undefined ? { thresholdsPath } : {}),
    ...(baseline !== undefined ? { baseline } : {}),
    ...(resume !== undefined ? { resume } : {}),
    update: updateSettings(env),
    ...(stepSummaryPath !== undefined ? { stepSummaryPath } : {}),
    quiet: flagOn(env, 'LLM_BENCH_QUIET'),
    ...(junitPath !== undefined ? { junitPath } : {}),
    debug: debugErrors(env),
    githubActions: env.GITHUB_ACTIONS === 'true',
  };
}

let own: RunSettings | undefined;

/** This process's settings from its environment, resolved on first use and kept (no reporter options). */
export function processSettings(): RunSettings {
  own ??= resolveRunSettings();
  return own;
}
