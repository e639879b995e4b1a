/**
 * The one-line Vitest setup, as users import it: the built entry point llm-speed-matrix/vitest
 * (resolved through package.json `exports`; the config builds dist/ first).
 */
import { existsSync } from 'node:fs';
import { expect, test } from 'vitest';
import type { TestProjectInlineConfiguration } from 'vitest/config';
import { selectsProject, speedMatrixProjects, withSpeedMatrix } from 'llm-speed-matrix/vitest';
import SpeedMatrixReporter from 'llm-speed-matrix/reporter';

const names = (projects: unknown[] | undefined) => (projects ?? []).map((p) => (p as TestProjectInlineConfiguration).test?.name ?? '(root)');

test('the matrix projects run the package’s own runner and global setup, one file at a time', () => {
  const [matrix, sharded] = speedMatrixProjects({ argv: ['node', 'vitest', 'run', '--project', 'matrix-sharded', '--project=matrix'] });
  expect(matrix!.test!.name).toBe('matrix');
  expect(sharded!.test!.name).toBe('matrix-sharded');
  for (const p of [matrix!, sharded!]) {
    expect(existsSync(p.test!.runner!)).toBe(true);
    expect(p.test!.runner!).toMatch(/dist\/src\/matrix\/runner\.js$/);
    for (const setup of [p.test!.globalSetup].flat()) expect(existsSync(setup as string)).toBe(true);
    expect(p.test!.fileParallelism).toBe(false);
    expect(p.test!.testTimeout).toBeGreaterThanOrEqual(600_000);
  }
  // the one-machine suite under `vitest bench`; the row-group files only for sharded `vitest run`
  expect(matrix!.test!.benchmark!.include).toEqual(['bench/speed-matrix*.bench.ts']);
  expect(matrix!.test!.include).toEqual(['bench/speed-matrix*.bench.ts']);
  expect(matrix!.test!.exclude).toContain('bench/shards/*.bench.ts');
  expect(sharded!.test!.include).toEqual(['bench/shards/*.bench.ts']);
  expect(sharded!.test!.benchmark!.include).toEqual([]);
});

test('withSpeedMatrix keeps a config without projects as its own project, minus the matrix files', () => {
  const config = withSpeedMatrix({ test: { include: ['unit/**/*.test.ts'], reporters: ['verbose'], testTimeout: 1234 } });
  expect(config.test!.include).toEqual(['unit/**/*.test.ts']);
  expect(config.test!.testTimeout).toBe(1234);
  expect(names(config.test!.projects)).toEqual(['(root)', 'matrix', 'matrix-sharded']);
  const own = config.test!.projects![0] as TestProjectInlineConfiguration;
  expect(own.extends).toBe(true);
  expect(own.test!.exclude).toEqual(expect.arrayContaining(['bench/speed-matrix*.bench.ts', 'bench/shards/*.bench.ts']));
  expect(own.test!.benchmark!.exclude).toEqual(expect.arrayContaining(['bench/speed-matrix*.bench.ts']));
  // the user's reporter stays, the speed-matrix reporter is added, in both lists
  const reporters = config.test!.reporters as unknown[];
  expect(reporters[0]).toBe('verbose');
  expect(reporters.some((r) => r instanceof SpeedMatrixReporter)).toBe(true);
  const bench = config.test!.benchmark!.reporters as unknown[];
  expect(bench[0]).toBe('default');
  expect(bench.some((r) => r instanceof SpeedMatrixReporter)).toBe(true);
});

test('withSpeedMatrix appends to existing projects and honours custom file globs', () => {
  const config = withSpeedMatrix(
    { test: { projects: [{ test: { name: 'api', include: ['api/**/*.test.ts'] } }] } },
    { include: ['perf/matrix.bench.ts'], shards: ['perf/shards/*.bench.ts'] },
  );
  expect(names(config.test!.projects)).toEqual(['api', 'matrix', 'matrix-sharded']);
  // the user's inline project never collects a matrix file (under `vitest bench` it would measure alongside the matrix)
  const api = config.test!.projects![0] as TestProjectInlineConfiguration;
  expect(api.test!.include).toEqual(['api/**/*.test.ts']);
  expect(api.test!.exclude).toEqual(expect.arrayContaining(['**/node_modules/**', 'perf/matrix.bench.ts', 'perf/shards/*.bench.ts']));
  expect(api.test!.benchmark!.exclude).toEqual(expect.arrayContaining(['perf/matrix.bench.ts', 'perf/shards/*.bench.ts']));
  const matrix = config.test!.projects![1] as TestProjectInlineConfiguration;
  expect(matrix.test!.benchmark!.include).toEqual(['perf/matrix.bench.ts']);
  expect(matrix.test!.exclude).toContain('perf/shards/*.bench.ts');
  // with no reporters configured, Vitest's default one stays
  expect((config.test!.reporters as unknown[])[0]).toBe('default');
});

test('a plain `vitest run` (a project’s npm test) collects no matrix file; --project selects them', () => {
  const plain = speedMatrixProjects({ argv: ['node', 'vitest', 'run'] });
  expect(plain.map((p) => p.test!.include)).toEqual([[], []]);
  // `vitest bench` still collects the one-machine matrix
  expect(plain[0]!.test!.benchmark!.include).toEqual(['bench/speed-matrix*.bench.ts']);
  expect(selectsProject('matrix-sharded', ['vitest', 'run', '--project', 'matrix-sharded', '--shard=1/2'])).toBe(true);
  expect(selectsProject('matrix', ['vitest', 'run', '--project', 'matrix-sharded'])).toBe(false);
  expect(selectsProject('matrix-sharded', ['vitest', 'run', '--project=matrix*'])).toBe(true);
  expect(selectsProject('matrix', ['vitest', 'run', '--project=!matrix'])).toBe(false);
  expect(selectsProject('matrix', ['vitest', 'run', 'matrix'])).toBe(false);
});

test('in GitHub Actions, Vitest’s github-actions reporter stays when no reporters are configured', () => {
  const before = process.env.GITHUB_ACTIONS;
  process.env.GITHUB_ACTIONS = 'true';
  try {
    expect((withSpeedMatrix({}).test!.reporters as unknown[]).slice(0, 2)).toEqual(['default', 'github-actions']);
  } finally {
    if (before === undefined) delete process.env.GITHUB_ACTIONS;
    else process.env.GITHUB_ACTIONS = before;
  }
});

test('withSpeedMatrix resolves the reporter settings once, for both reporter lists', () => {
  const config = withSpeedMatrix({}, { reporter: { outDir: 'my-results', log: () => {} } });
  const ours = (list: unknown) => (list as unknown[]).filter((r): r is SpeedMatrixReporter => r instanceof SpeedMatrixReporter);
  const [run] = ours(config.test!.reporters);
  const [bench] = ours(config.test!.benchmark!.reporters);
  expect(run!.settings.outDir).toBe('my-results');
  expect(bench!.settings).toBe(run!.settings);
});
