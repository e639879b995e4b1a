import { configDefaults, defineConfig } from 'vitest/config';
import { JUnitReporter } from 'vitest/node';
import SpeedMatrixReporter from './reporters/speed-matrix.js';

/**
 * LLM_BENCH_JUNIT=reports/junit.xml adds Vitest's JUnit reporter (one <testcase> per cell and prefill
 * row; a failed cell's <failure> carries its failure lines) without replacing the speed-matrix
 * reporter, in `vitest bench` too (where reporters do not load by name).
 */
const junitPath = process.env.LLM_BENCH_JUNIT?.trim();
const reporters = () => [
  'default' as const,
  new SpeedMatrixReporter(),
  ...(junitPath ? [new JUnitReporter({ outputFile: junitPath, suiteName: 'speed-matrix' })] : []),
];

/** The project's own tests that measure time or run whole matrices (project `timing`). */
const timingTests = [
  'test/accuracy/**/*.test.ts',
  'test/e2e/**/*.test.ts',
  'test/shard/**/*.test.ts',
  'test/compare/seeded-regression.test.ts',
  'test/faults/**/*.test.ts',
  'test/**/*.e2e.test.ts',
];

/** Matrix suites: collected by both `vitest bench` and `vitest run --project matrix`. */
const matrixFiles = ['bench/**/*.bench.ts'];
/** Row-group files that split the matrix for `vitest run --project matrix-sharded --shard=i/n` (not part of `vitest bench`). */
const shardFiles = ['bench/shards/*.bench.ts'];

/** What both matrix projects share: plain test() cells, one at a time, long timeouts, the -u flag. */
const matrixProject = {
  // plain test() cells under `vitest bench` (see src/matrix/runner.ts)
  runner: './src/matrix/runner.ts',
  // cells must never overlap
  fileParallelism: false,
  // a cell's own timeout is set per test from its window; this is the ceiling for hooks
  testTimeout: 600_000,
  hookTimeout: 600_000,
  globalSetup: ['./src/matrix/global-setup.ts'],
};

export default defineConfig({
  test: {
    reporters: reporters(),
    // `vitest bench` reads its reporters from here; instances work in both lists
    benchmark: { reporters: reporters() },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...timingTests, 'test/real/**'],
          // the project's own tests never run as benchmarks
          benchmark: { include: [] },
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          // Tests that compare timings with the simulator's ground truth, or run whole matrices:
          // one file at a time, after the unit project, so other test files do not steal the CPU
          // they are measuring on a 2-core machine.
          name: 'timing',
          include: timingTests,
          benchmark: { include: [] },
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          testTimeout: 300_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          // The tool against a real server (LLM_BENCH_REAL_URL); without one it says why it skipped.
          name: 'real',
          include: ['test/real/**/*.test.ts'],
          benchmark: { include: [] },
          fileParallelism: false,
          sequence: { groupOrder: 2 },
          testTimeout: 600_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'matrix',
          include: matrixFiles,
          exclude: [...configDefaults.exclude, ...shardFiles],
          benchmark: { include: matrixFiles, exclude: [...configDefaults.exclude, ...shardFiles] },
          // plain test() cells under `vitest bench` (see src/matrix/runner.ts)
          runner: './src/matrix/runner.ts',
          // cells must never overlap
          fileParallelism: false,
          // a cell's own timeout is set per test from its window; this is the ceiling for hooks
          testTimeout: 600_000,
          hookTimeout: 600_000,
          globalSetup: ['./src/matrix/global-setup.ts'],
        },
      },
      {
        test: {
          name: 'matrix-sharded',
          include: shardFiles,
          // sharded runs use `vitest run` (the blob reporter loads by name only there)
          benchmark: { include: [] },
          ...matrixProject,
        },
      },
    ],
  },
});
