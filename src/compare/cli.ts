/**
 * `llm-speed-matrix compare <base.json> <new.json> [--out diff.md] [--thresholds file]`
 * Exit 0: no regression; 1: at least one figure regressed beyond its tolerance; 2: usage error,
 * unreadable or invalid file, different schema versions or different matrices.
 * Without --out the diff page is printed; with it, a one-line verdict and the regressions.
 * When GITHUB_STEP_SUMMARY is set the diff page is appended to it.
 */
import { parseCommandArgs, type OptionSpec } from '../meta/cli-args.js';
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { ensureDir } from '../results/write.js';
import { dirname } from 'node:path';
import { ConfigError } from '../errors.js';
import type { Env } from '../config/env.js';
import { processSettings, resolveRunSettings } from '../config/settings.js';
import { loadThresholds } from '../thresholds/load.js';
import { compareResults, matrixDifferences } from '../judge/compare.js';
import { NOT_COMPARED_SCHEDULE, rateScheduleDifference } from '../judge/compare-rate.js';
import { checkResultFile, readResultJson } from './load.js';
import { renderDiffMarkdown } from '../pages/diff-markdown.js';
import { resolveTolerances } from '../thresholds/tolerances.js';

export const COMPARE_USAGE = `usage: llm-speed-matrix compare <base.json> <new.json> [--out diff.md] [--thresholds thresholds.json]

Compares two speed-matrix.json files cell by cell. Exit 0: no regression; 1: a figure regressed
beyond its tolerance; 2: usage error or files that cannot be compared.
  --out FILE         write the Markdown diff page to FILE (default: print it)
  --thresholds FILE  take regression tolerances from FILE's "tolerances.regression" block
  -h, --help         this text`;

export interface CompareIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** the environment the settings are resolved from (src/config/settings.ts); default this process's */
  env?: Env;
}

const defaultIo: CompareIo = {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
};

interface CompareArgs {
  base: string;
  next: string;
  out?: string;
  thresholds?: string;
}

const COMPARE_OPTIONS: Record<string, OptionSpec> = {
  out: { type: 'string', what: 'a file name', example: '--out diff.md' },
  thresholds: { type: 'string', what: 'a file name', example: '--thresholds thresholds/my-server.json' },
};

/** The arguments, `'help'` for --help/-h, or a message (the shared parser: src/meta/cli-args.ts). */
function parseArgs(argv: readonly string[]): CompareArgs | 'help' | { error: string } {
  const parsed = parseCommandArgs(argv, COMPARE_OPTIONS, true);
  if (parsed.kind === 'help') return 'help';
  if (parsed.kind === 'error') return { error: parsed.message };
  const { out, thresholds } = parsed.values as { out?: string; thresholds?: string };
  if (parsed.positionals.length !== 2) return { error: `expected two result files (base and new), got ${parsed.positionals.length}` };
  return { base: parsed.positionals[0]!, next: parsed.positionals[1]!, ...(out ? { out } : {}), ...(thresholds ? { thresholds } : {}) };
}

export async function runCompareCli(argv: string[], io: CompareIo = defaultIo): Promise<number> {
  const args = parseArgs(argv);
  if (args === 'help') {
    io.out(COMPARE_USAGE);
    return 0;
  }
  if ('error' in args) {
    io.err(`llm-speed-matrix compare: ${args.error}\n\n${COMPARE_USAGE}`);
    return 2;
  }
  try {
    const baseFile = readResultJson(args.base, 'base');
    const nextFile = readResultJson(args.next, 'new');
    if (baseFile.schemaVersion !== nextFile.schemaVersion) {
      throw new ConfigError(
        `the files have different schema versions: ${args.base} has ${JSON.stringify(baseFile.schemaVersion)}, ` +
          `${args.next} has ${JSON.stringify(nextFile.schemaVersion)}; compare results written by the same version of llm-speed-matrix`,
      );
    }
    const base = checkResultFile(baseFile, 'base');
    const next = checkResultFile(nextFile, 'new');
    const differences = matrixDifferences(base.info, next.info, 'matrix');
    if (differences.length > 0) {
      throw new ConfigError(
        `${args.base} and ${args.next} are runs of different matrices, so their cells cannot be compared:\n  ` +
          `${differences.join('\n  ')}\nRun the new matrix with the baseline's settings (LLM_BENCH_CONTEXTS, LLM_BENCH_CONCURRENCY, ` +
          'LLM_BENCH_PREFILL, LLM_BENCH_MAX_TOKENS, LLM_BENCH_DURATION_S, LLM_BENCH_ENDPOINT, LLM_BENCH_WORKLOAD)',
      );
    }
    // compare reads only the file's tolerances: a file that is not there is a wrong path, not "no budgets yet"
    if (args.thresholds !== undefined && !existsSync(args.thresholds)) {
      throw new ConfigError(`--thresholds ${args.thresholds}: no such file; give the threshold file whose tolerances.regression to use, e.g. --thresholds thresholds/my-server.json (or leave --thresholds out for the default tolerances)`);
    }
    const thresholds = args.thresholds ? loadThresholds(args.thresholds, { cellKeys: [], prefillKeys: [], allowUnknown: true }) : undefined;
    const comparison = compareResults(base, next, resolveTolerances(thresholds?.tolerances?.regression));
    const page = renderDiffMarkdown({ base: base.info, next: next.info, comparison, baseLabel: args.base, nextLabel: args.next });

    const notes: string[] = [];
    if (base.partial) notes.push(`note: ${args.base} is a partial result (its run had not finished)`);
    if (next.partial) notes.push(`note: ${args.next} is a partial result (its run had not finished)`);
    // a schedule that differs run-wide is said once; a cell's own reason (Client-limited) per cell
    const schedule = rateScheduleDifference(base.info, next.info);
    if (schedule) notes.push(`note: ${schedule}`);
    for (const r of comparison.rates) if (r.note && !(schedule && r.note.startsWith(NOT_COMPARED_SCHEDULE))) notes.push(`note: ${r.key}/s ${r.note}`);
    if (comparison.rateSweepNote) notes.push(`note: ${comparison.rateSweepNote}`);
    if (args.out) {
      try {
        ensureDir(dirname(args.out));
        writeFileSync(args.out, page);
      } catch (error) {
        throw new ConfigError(`--out ${args.out}: cannot write the diff page there (${(error as Error).message}); give a path in a folder you can write, e.g. --out diff.md`);
      }
      const c = comparison.counts;
      io.out(
        `${comparison.failures.length === 0 ? 'PASS' : 'FAIL'}: ${c.regressed} regressed, ${c.improved} improved, ` +
          `${c['within-noise']} within noise, ${c.missing} missing; diff page: ${args.out}`,
      );
      for (const f of comparison.failures) io.out(`  ${f}`);
    } else {
      io.out(page);
    }
    for (const n of notes) io.err(n);
    const summary = (io.env ? resolveRunSettings({}, io.env) : processSettings()).stepSummaryPath;
    if (summary) appendFileSync(summary, `${page}\n`);
    return comparison.failures.length > 0 ? 1 : 0;
  } catch (error) {
    if (error instanceof ConfigError || (error instanceof Error && error.name === 'ThresholdsError')) {
      io.err(`llm-speed-matrix compare: ${error.message}`);
      return 2;
    }
    throw error;
  }
}
