/**
 * `llm-speed-matrix/vitest`: the speed matrix in a user's own Vitest config, in one line.
 *
 *   import { defineConfig } from 'vitest/config';
 *   import { withSpeedMatrix } from 'llm-speed-matrix/vitest';
 *   export default defineConfig(withSpeedMatrix({ ...what you already have }));
 *
 * It adds two projects (`matrix`: the bench files, one cell at a time, under `vitest bench`;
 * `matrix-sharded`: row-group files for `vitest run --shard`), each with the plain test runner
 * the cells need, the global setup that passes `-u` on, and long timeouts; and the speed-matrix
 * reporter (results page, JSON, threshold updates) next to the reporters already configured, in
 * `test.reporters` and `test.benchmark.reporters` (Vitest reads the latter under `vitest bench`).
 * Your own tests stay a project of their own that extends the root config, with the matrix files
 * left out of it. For finer control, `speedMatrixProjects()` and `speedMatrixReporters()` give the
 * parts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProjectInlineConfiguration, ViteUserConfig } from 'vitest/config';
import { JUnitReporter, type Reporter } from 'vitest/node';
import SpeedMatrixReporter, { type SpeedMatrixReporterOptions } from '../reporters/speed-matrix.js';
import { resolveRunSettings, type RunSettings } from './config/settings.js';

/**
 * The matrix suites users run with `vitest bench` (one file per target: bench/speed-matrix.bench.ts,
 * bench/speed-matrix-h200.bench.ts, …); narrow, so a project's own Vitest bench() files stay its own.
 */
export const DEFAULT_MATRIX_FILES = ['bench/speed-matrix*.bench.ts'];
/** Row-group files that split the matrix over CI machines (`vitest run --project matrix-sharded --shard=i/n`). */
export const DEFAULT_SHARD_FILES = ['bench/shards/*.bench.ts'];
/** The ceiling for hooks; each cell sets its own timeout from its window. */
const MATRIX_TIMEOUT_MS = 600_000;
/** Vitest's own default excludes (node_modules and .git), kept when ours are added */
const VITEST_EXCLUDES = ['**/node_modules/**', '**/.git/**'];

export interface SpeedMatrixVitestOptions {
  /** bench files of the matrix; default bench/speed-matrix*.bench.ts */
  include?: string[];
  /** row-group files for sharded runs; default bench/shards/*.bench.ts */
  shards?: string[];
  /** options of the speed-matrix reporter (results folder, threshold file, log, or its settings already resolved) */
  reporter?: SpeedMatrixReporterOptions;
  /** the command line Vitest was started with (default process.argv), to see which projects it selects */
  argv?: readonly string[];
}

/** This package's own module, as a path Vitest can load (the runner, the global setup). */
function own(path: string): string {
  return fileURLToPath(new URL(path, import.meta.url));
}

/**
 * Whether the command line selects the project by name (`--project NAME`, `--project=NAME`,
 * wildcards as Vitest allows them). Without a selection it is false: the matrix runs under
 * `vitest bench`, or when asked for by name, never as a side effect of a plain `vitest run`.
 */
export function selectsProject(name: string, argv: readonly string[] = process.argv): boolean {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    let value: string | undefined;
    if (arg === '--project') value = argv[i + 1];
    else if (arg.startsWith('--project=')) value = arg.slice('--project='.length);
    if (value === undefined || value.startsWith('!')) continue;
    const pattern = new RegExp(`^${value.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    if (pattern.test(name)) return true;
  }
  return false;
}

/**
 * The `matrix` and `matrix-sharded` projects: plain test() cells under `vitest bench` (the plain
 * TestRunner), never two files at once (measurements must not overlap), long timeouts, and the
 * global setup that tells the cells whether the run updates threshold files (`-u`). Under
 * `vitest run` (a project's `npm test`) they collect nothing unless selected with --project.
 */
export function speedMatrixProjects(options: SpeedMatrixVitestOptions = {}): TestProjectInlineConfiguration[] {
  const include = options.include ?? DEFAULT_MATRIX_FILES;
  const shards = options.shards ?? DEFAULT_SHARD_FILES;
  const argv = options.argv ?? process.argv;
  const shared = {
    runner: own('./matrix/runner.js'),
    fileParallelism: false,
    testTimeout: MATRIX_TIMEOUT_MS,
    hookTimeout: MATRIX_TIMEOUT_MS,
    globalSetup: [own('./matrix/global-setup.js')],
  };
  return [
    {
      test: {
        name: 'matrix',
        // `vitest run --project matrix` runs the same cells in test mode
        include: selectsProject('matrix', argv) ? include : [],
        exclude: [...VITEST_EXCLUDES, ...shards],
        benchmark: { include, exclude: [...VITEST_EXCLUDES, ...shards] },
        ...shared,
      },
    },
    {
      test: {
        name: 'matrix-sharded',
        // sharded runs use `vitest run` (the blob reporter loads by name only there)
        include: selectsProject('matrix-sharded', argv) ? shards : [],
        benchmark: { include: [] },
        ...shared,
      },
    },
  ];
}

type TestOptions = NonNullable<ViteUserConfig['test']>;
/** `test.reporters`: names, [name, options] pairs or instances */
export type Reporters = NonNullable<TestOptions['reporters']>;
type BenchmarkOptions = NonNullable<TestOptions['benchmark']>;
/**
 * `test.benchmark.reporters` (what Vitest 4's `vitest bench` reads): names or instances. Vitest 5
 * dropped the option (its `vitest bench` reads `test.reporters`), so under Vitest 5's types this is
 * the same as `Reporters`; written so the emitted .d.ts compiles against either major.
 */
export type BenchmarkReporters = ReportersOf<BenchmarkOptions>;
type ReportersOf<B> = B extends { reporters?: infer R } ? (unknown extends R ? Reporters : NonNullable<R>) : Reporters;

/** The reporter's settings: those already resolved (withSpeedMatrix), else resolved here, once. */
function settingsOf(options: SpeedMatrixVitestOptions): RunSettings {
  return options.reporter?.settings ?? resolveRunSettings(options.reporter);
}

/**
 * What is added to the configured reporters: the speed-matrix reporter, and with LLM_BENCH_JUNIT=PATH
 * Vitest's JUnit reporter (one <testcase> per cell and prefill row), as an instance because
 * `vitest bench` does not load reporters by name.
 */
function addedReporters(options: SpeedMatrixVitestOptions, settings: RunSettings): Reporter[] {
  return [
    new SpeedMatrixReporter({ ...options.reporter, settings }),
    ...(settings.junitPath ? [new JUnitReporter({ outputFile: settings.junitPath, suiteName: 'speed-matrix' })] : []),
  ];
}

/**
 * The reporters: those given, else Vitest's own defaults (`default`, and `github-actions` in
 * GitHub Actions, whose annotations a user would otherwise lose), and the speed-matrix reporter.
 */
export function speedMatrixReporters(existing?: Reporters, options: SpeedMatrixVitestOptions = {}): Reporters {
  const settings = settingsOf(options);
  const defaults: Reporters = ['default', ...(settings.githubActions ? (['github-actions'] as const) : [])];
  const list: Reporters = existing === undefined ? defaults : Array.isArray(existing) ? [...existing] : [existing];
  return [...list, ...addedReporters(options, settings)];
}

/** The same for `test.benchmark.reporters`, read by `vitest bench`. */
export function speedMatrixBenchmarkReporters(existing?: BenchmarkReporters, options: SpeedMatrixVitestOptions = {}): BenchmarkReporters {
  const list: BenchmarkReporters = existing === undefined ? ['default'] : Array.isArray(existing) ? [...existing] : [existing];
  return [...list, ...addedReporters(options, settingsOf(options))];
}

/** Whether the command line or the config turns Vitest's UI on (`--ui`, `--ui=true`, `test.ui: true`). */
export function wantsUi(argv: readonly string[], configUi?: boolean): boolean {
  let ui = configUi === true;
  for (const arg of argv) {
    if (arg === '--ui' || arg === '--ui=true') ui = true;
    else if (arg === '--no-ui' || arg === '--ui=false') ui = false;
  }
  return ui;
}

/** The version of a package as Node finds it from `dir` up (node_modules/<name>/package.json), or undefined. */
function installedVersion(dir: string, name: string): string | undefined {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const manifest = join(at, 'node_modules', name, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version ?? '';
      } catch {
        return '';
      }
    }
    if (dirname(at) === at) return undefined;
  }
}

/**
 * The one line for `vitest --ui` (or `vitest bench --watch --ui`) in a project without @vitest/ui,
 * an optional peer: Vitest itself says only "Cannot find dependency '@vitest/ui'". It names the
 * install at Vitest's own version (the UI must match it). Undefined when the UI is not asked for,
 * is installed, or Yarn PnP resolves packages (no node_modules to look in).
 */
export function uiHint(argv: readonly string[], configUi: boolean | undefined, root: string): string | undefined {
  if (!wantsUi(argv, configUi) || process.versions.pnp) return undefined;
  if (installedVersion(root, '@vitest/ui') !== undefined) return undefined;
  const vitest = installedVersion(root, 'vitest');
  return `[speed-matrix] --ui needs @vitest/ui, an optional peer that is not installed. Fix: npm i -D @vitest/ui${vitest ? `@${vitest}` : ''}`;
}

/**
 * A user's Vitest config with the speed matrix added: the matrix projects, and the speed-matrix
 * reporter beside the configured ones (both for `vitest run` and `vitest bench`). A config without
 * `test.projects` keeps its own tests as a project extending the root config, minus the matrix
 * files; a config with projects gets the matrix projects appended, and each inline project
 * (an object) leaves the matrix files out, so `vitest bench` never collects a matrix file twice.
 * A project given as a path to its own config file is not changed: exclude the matrix files there.
 */
export function withSpeedMatrix(config: ViteUserConfig = {}, options: SpeedMatrixVitestOptions = {}): ViteUserConfig {
  const test = config.test ?? {};
  const matrixFiles = [...(options.include ?? DEFAULT_MATRIX_FILES), ...(options.shards ?? DEFAULT_SHARD_FILES)];
  const own: TestProjectInlineConfiguration = {
    extends: true,
    test: {
      exclude: [...(test.exclude ?? VITEST_EXCLUDES), ...matrixFiles],
      benchmark: { exclude: [...(test.benchmark?.exclude ?? VITEST_EXCLUDES), ...matrixFiles] },
    },
  };
  const withoutMatrix = (project: NonNullable<TestOptions['projects']>[number]) => {
    // a path (string), a function or a promise of a config is left as it is
    if (typeof project !== 'object' || project === null || 'then' in project) return project;
    const t = project.test ?? {};
    return {
      ...project,
      test: {
        ...t,
        exclude: [...(t.exclude ?? VITEST_EXCLUDES), ...matrixFiles],
        benchmark: { ...t.benchmark, exclude: [...(t.benchmark?.exclude ?? VITEST_EXCLUDES), ...matrixFiles] },
      },
    };
  };
  const projects = test.projects ? test.projects.map(withoutMatrix) : [own];
  const hint = uiHint(options.argv ?? process.argv, test.ui, typeof config.root === 'string' ? resolve(config.root) : process.cwd());
  if (hint) process.stderr.write(`${hint}\n`);
  // the reporter's settings, resolved once here in Vitest's main process, for both reporter lists
  const resolved: SpeedMatrixVitestOptions = { ...options, reporter: { ...options.reporter, settings: settingsOf(options) } };
  const reporters = speedMatrixReporters(test.reporters, resolved);
  return {
    ...config,
    test: {
      ...test,
      reporters,
      benchmark: { ...test.benchmark, reporters: speedMatrixBenchmarkReporters(test.benchmark?.reporters, resolved) },
      projects: [...projects, ...speedMatrixProjects(options)],
    },
  };
}
