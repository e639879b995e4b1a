/**
 * `llm-speed-matrix init [--force] [--shards N] [--dir PATH]`: sets up the speed matrix in a
 * user's repository. It writes the bench files, a Vitest config (or prints the one line to add to
 * the existing one), thresholds/, and a GitHub Actions workflow; it never overwrites a file
 * without --force, and it says what it did with each.
 */
import { copyFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import { MISSING_VITEST, vitestSupport } from '../meta/peer.js';
import { parseCommandArgs, type OptionSpec } from '../meta/cli-args.js';
import { ensureDir } from '../results/write.js';
import { detectPackageManager } from './package-manager.js';
import { BENCH, configInstructions, SHARD, SUITE, THRESHOLDS_README, VITEST_CONFIG, VITEST_CONFIG_NAMES, WORKFLOW } from './templates.js';

export const INIT_USAGE =
  'usage: llm-speed-matrix init [--force] [--shards N] [--dir PATH]\n' +
  '  --force     overwrite files that exist (an existing Vitest config is kept as <name>.bak)\n' +
  '  --shards N  row-group files and CI machines for the sharded matrix (default 4, 1–32)\n' +
  '  --dir PATH  the project folder (default: the current folder)\n' +
  '  -h, --help  this text';

export interface InitOptions {
  dir: string;
  force: boolean;
  /** row groups (CI machines); default: an existing bench/suite.ts's ROW_GROUPS, else 4 */
  shards?: number;
}

const DEFAULT_SHARDS = 4;
/** the sample prompt file, at the same path in a project as in this package (the build copies it into dist/) */
export const SAMPLE_PROMPTS = 'bench/workloads/sample.jsonl';

export type InitAction = 'wrote' | 'overwrote' | 'kept' | 'unchanged';

export interface InitReport {
  /** what happened to each file, by path relative to the project */
  files: { path: string; action: InitAction }[];
  /** set when an existing Vitest config must be edited by hand */
  configToEdit?: string;
  lines: string[];
}

/** init's options, for the shared parser (src/meta/cli-args.ts). */
const INIT_OPTIONS: Record<string, OptionSpec> = {
  force: { type: 'boolean' },
  shards: { type: 'string', what: 'a number', example: '--shards 4' },
  dir: { type: 'string', what: 'a folder', example: '--dir packages/infra' },
};

/** init's arguments; `--help` gives `'help'` (the caller prints INIT_USAGE, exit 0). */
export function parseInitArgs(argv: readonly string[]): InitOptions;
export function parseInitArgs(argv: readonly string[], help: 'allow-help'): InitOptions | 'help';
export function parseInitArgs(argv: readonly string[], help?: 'allow-help'): InitOptions | 'help' {
  const parsed = parseCommandArgs(argv, INIT_OPTIONS, false);
  if (parsed.kind === 'help') {
    if (help) return 'help';
    throw new ConfigError(INIT_USAGE);
  }
  if (parsed.kind === 'error') throw new ConfigError(`init: ${parsed.message}\n${INIT_USAGE}`);
  const { force, shards, dir } = parsed.values as { force?: boolean; shards?: string; dir?: string };
  const out: InitOptions = { dir: dir === undefined ? process.cwd() : resolve(dir), force: force === true };
  if (shards !== undefined) {
    const n = Number(shards);
    if (!Number.isInteger(n) || n < 1 || n > 32) throw new ConfigError(`init --shards ${shards} is invalid: use an integer 1–32 (the number of CI machines)`);
    out.shards = n;
  }
  return out;
}

/**
 * The Vitest version the project's files will import, or a ConfigError naming the fix: the first
 * node_modules/vitest from the project folder up, as Node's ESM resolution finds it (which, unlike
 * require, ignores NODE_PATH and global folders).
 */
export function installedVitest(dir: string): string {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const manifest = join(at, 'node_modules', 'vitest', 'package.json');
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    if (dirname(at) === at) throw new ConfigError(MISSING_VITEST);
  }
}

/** ROW_GROUPS of an existing bench/suite.ts, when it has one. */
function existingRowGroups(dir: string): number | undefined {
  const suite = join(dir, 'bench', 'suite.ts');
  if (!existsSync(suite)) return undefined;
  const m = /ROW_GROUPS\s*=\s*(\d+)/.exec(readFileSync(suite, 'utf8'));
  return m ? Number(m[1]) : undefined;
}

export function runInit(options: InitOptions): InitReport {
  const { dir, force } = options;
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new ConfigError(`--dir ${dir} is a file, not a folder. Fix: give your project's root folder, e.g. --dir .`);
  if (!existsSync(dir)) throw new ConfigError(`--dir ${dir}: no such folder. Fix: give your project's root folder, e.g. --dir .`);
  if (!existsSync(join(dir, 'package.json'))) {
    throw new ConfigError(`no package.json in ${dir}. Fix: run init in your project's root folder (or --dir PATH), or create one with \`npm init -y\``);
  }
  const vitestVersion = installedVitest(dir);
  const support = vitestSupport(vitestVersion);
  if (support === 'old') {
    throw new ConfigError(`vitest ${vitestVersion} is installed; llm-speed-matrix needs Vitest 4.1 or later (4.x or 5.x). Fix: npm i -D vitest@latest (Vitest 5 needs Node 22.12+; on Node 20: npm i -D vitest@^4.1.0)`);
  }

  // the row-group files, ROW_GROUPS and the workflow's shard list must agree: a kept suite decides
  const kept = force ? undefined : existingRowGroups(dir);
  if (kept !== undefined && options.shards !== undefined && options.shards !== kept) {
    throw new ConfigError(
      `init --shards ${options.shards}: bench/suite.ts says ROW_GROUPS = ${kept}, and init does not overwrite it. ` +
        `Fix: set ROW_GROUPS = ${options.shards} there, ${rowGroupFilesChange(kept, options.shards)} and set the shard list of .github/workflows/speed-matrix.yml to match; or run init --shards ${options.shards} --force`,
    );
  }
  const shards = kept ?? options.shards ?? DEFAULT_SHARDS;

  const report: InitReport = { files: [], lines: [] };
  if (support === 'newer') report.lines.push(`note: vitest ${vitestVersion} is newer than the versions llm-speed-matrix was checked with (4.1+, 5.x); if a cell misbehaves, try vitest@5`, '');
  const put = (path: string, text: string): void => {
    const full = join(dir, path);
    let action: InitAction;
    if (!existsSync(full)) action = 'wrote';
    else if (readFileSync(full, 'utf8') === text) action = 'unchanged';
    else action = force ? 'overwrote' : 'kept';
    if (action === 'wrote' || action === 'overwrote') {
      ensureDir(dirname(full));
      writeFileSync(full, text);
    }
    report.files.push({ path, action });
  };

  put('bench/suite.ts', SUITE(shards));
  put('bench/speed-matrix.bench.ts', BENCH);
  for (let g = 1; g <= shards; g++) put(`bench/shards/row-group-${g}.bench.ts`, SHARD(g));
  put('thresholds/README.md', THRESHOLDS_README);
  // the workload sample docs/workloads.md and the README run (file:bench/workloads/sample.jsonl)
  put(SAMPLE_PROMPTS, readFileSync(new URL(`../../${SAMPLE_PROMPTS}`, import.meta.url), 'utf8'));
  const pm = detectPackageManager(dir);
  put('.github/workflows/speed-matrix.yml', WORKFLOW(shards, pm));

  const existing = VITEST_CONFIG_NAMES.find((name) => existsSync(join(dir, name)));
  // an .mts config in a CommonJS package, so Vite loads its import syntax without a warning
  const esm = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { type?: string }).type === 'module';
  if (existing === undefined) put(esm ? 'vitest.config.ts' : 'vitest.config.mts', VITEST_CONFIG);
  else if (readFileSync(join(dir, existing), 'utf8').includes('llm-speed-matrix/vitest')) report.files.push({ path: existing, action: 'unchanged' });
  else if (force) {
    copyFileSync(join(dir, existing), join(dir, `${existing}.bak`));
    writeFileSync(join(dir, existing), VITEST_CONFIG);
    report.files.push({ path: existing, action: 'overwrote' });
    report.lines.push(`${existing}: replaced (--force); your previous config is in ${existing}.bak`);
  } else {
    report.files.push({ path: existing, action: 'kept' });
    report.configToEdit = existing;
  }

  for (const { path, action } of report.files) {
    if (path === report.configToEdit) continue;
    const note = action === 'kept' ? ' (it exists and differs; --force overwrites it)' : '';
    report.lines.push(`${action.padEnd(9)} ${path}${note}`);
  }
  report.lines.push(`the workflow installs with ${pm.name} (\`${pm.install}\`, from ${pm.source})`);
  if (report.configToEdit) {
    // the matrix cannot run before the config has the line: say only what comes first
    report.lines.push(
      '',
      configInstructions(report.configToEdit),
      '',
      `first: add withSpeedMatrix to ${report.configToEdit} as above (or \`npx llm-speed-matrix init --force\`), then run \`npx llm-speed-matrix init\` again:`,
      `  it reports ${report.configToEdit} as unchanged and prints the commands that run the matrix.`,
    );
    return report;
  }
  report.lines.push(
    '',
    'next:',
    '  LLM_BENCH_SIM_PROFILE=tiny npx vitest bench --run    the matrix against the embedded simulator (about a minute)',
    '  LLM_BENCH_URL=http://127.0.0.1:8000 npx vitest bench --run    against your server (or set target in bench/suite.ts)',
    '  LLM_BENCH_SIM_PROFILE=tiny npx vitest bench --run -u    write thresholds/sim-tiny.json, the file the workflow\'s simulator job gates on, then commit it',
    '  LLM_BENCH_URL=http://127.0.0.1:8000 npx vitest bench --run -u    the same for your server: thresholds/<name>.json (the suite\'s name, or LLM_BENCH_NAME)',
    '  the pages: reports/speed-matrix.md, reports/speed-matrix.html (open it in a browser) and reports/speed-matrix.json',
    `  LLM_BENCH_WORKLOAD=file:${SAMPLE_PROMPTS} LLM_BENCH_SIM_PROFILE=tiny LLM_BENCH_NAME=sim-tiny-sample npx vitest bench --run    a sample of chat prompts in one row (a workload gets its own threshold file, here thresholds/sim-tiny-sample.json; docs: workloads)`,
  );
  return report;
}

/** The command: prints the report; exit 1 when the Vitest config still needs the line added. */
export function runInitCli(argv: readonly string[]): number {
  const options = parseInitArgs(argv, 'allow-help');
  if (options === 'help') {
    console.log(INIT_USAGE);
    return 0;
  }
  const report = runInit(options);
  console.log(report.lines.join('\n'));
  return report.configToEdit ? 1 : 0;
}

/** What changes in bench/shards/ when ROW_GROUPS goes from `was` to `now` (files row-group-<i>.bench.ts). */
function rowGroupFilesChange(was: number, now: number): string {
  const span = (from: number, to: number): string =>
    from === to ? `bench/shards/row-group-${from}.bench.ts` : `bench/shards/row-group-${from}.bench.ts … row-group-${to}.bench.ts`;
  return now < was
    ? `remove ${span(now + 1, was)}`
    : `add ${span(was + 1, now)} (each a copy of row-group-1.bench.ts with its own index)`;
}
