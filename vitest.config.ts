import { defineConfig } from 'vitest/config';
import SpeedMatrixReporter from './reporters/speed-matrix.js';

/** Matrix suites: collected by both `vitest bench` and `vitest run --project matrix`. */
const matrixFiles = ['bench/**/*.bench.ts'];

export default defineConfig({
  test: {
    reporters: ['default', new SpeedMatrixReporter()],
    // `vitest bench` reads its reporters from here; instances work in both lists
    benchmark: { reporters: ['default', new SpeedMatrixReporter()] },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          // the project's own tests never run as benchmarks
          benchmark: { include: [] },
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'matrix',
          include: matrixFiles,
          benchmark: { include: matrixFiles },
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
    ],
  },
});
