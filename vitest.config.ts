import { defineConfig } from 'vitest/config';
import SpeedMatrixReporter from './reporters/speed-matrix.js';

const matrixFiles = ['bench/**/*.bench.ts'];

export default defineConfig({
  test: {
    reporters: ['default', new SpeedMatrixReporter()],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'matrix',
          include: matrixFiles,
          benchmark: { include: matrixFiles },
          runner: './src/matrix/runner.ts',
          fileParallelism: false,
          // a cell's own timeout is set per test from its window; this is the ceiling for probes
          testTimeout: 600_000,
          hookTimeout: 600_000,
          globalSetup: ['./src/matrix/global-setup.ts'],
        },
      },
    ],
  },
  benchmark: {},
});
