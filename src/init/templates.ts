/**
 * The files `llm-speed-matrix init` writes into a user's repository. They import only the
 * package's entry points, and run the same matrix as this repository's own bench/ folder.
 */

/** The config files Vitest reads, in its own order of preference. */
export const VITEST_CONFIG_NAMES = [
  'vitest.config.ts',
  'vitest.config.mts',
  'vitest.config.cts',
  'vitest.config.js',
  'vitest.config.mjs',
  'vitest.config.cjs',
  'vite.config.ts',
  'vite.config.mts',
  'vite.config.cts',
  'vite.config.js',
  'vite.config.mjs',
  'vite.config.cjs',
];

export const VITEST_CONFIG = `import { defineConfig } from 'vitest/config';
import { withSpeedMatrix } from 'llm-speed-matrix/vitest';

// withSpeedMatrix adds the speed-matrix projects (bench/**/*.bench.ts under \`vitest bench\`,
// bench/shards/ for sharded CI runs) and the speed-matrix reporter to your own configuration.
export default defineConfig(withSpeedMatrix({}));
`;

/** What to add to a Vitest config that init does not overwrite. */
export function configInstructions(name: string): string {
  return [
    `${name} exists, so init left it as it is. Add the speed matrix to it:`,
    ``,
    `  import { withSpeedMatrix } from 'llm-speed-matrix/vitest';`,
    `  export default defineConfig(withSpeedMatrix({ /* your configuration as it is */ }));`,
    ``,
    `(withSpeedMatrix keeps your projects and reporters and adds its own; \`init --force\` replaces the file, keeping a .bak copy).`,
  ].join('\n');
}

export const SUITE = (shards: number): string => `/**
 * Your speed matrix: the target server and the matrix, shared by bench/speed-matrix.bench.ts (one
 * machine: \`npx vitest bench --run\`) and the row-group files of bench/shards/ (CI machines:
 * \`npx vitest run --project matrix-sharded --shard=i/n\`). With no target and no LLM_BENCH_URL it
 * runs against the embedded simulated server. Every LLM_BENCH_* variable overrides this file.
 */
import type { SuiteInput } from 'llm-speed-matrix';

export const suite: SuiteInput = {
  // name: 'my-vllm',                       // threshold file thresholds/<name>.json
  // target: { url: 'http://127.0.0.1:8000', engine: 'vllm', hardware: { gpu: 'H200 NVL', gpuCount: 1 } },
  // matrix: { contexts: [0, 8192, 32768], concurrency: [1, 4, 16], prefill: [8192], windowS: 30, maxOutputTokens: 4096 },
};

/** Row-group files in bench/shards/ (row-group-1 … row-group-${shards}); shard with \`vitest --shard=i/n\` for n ≤ ${shards}. */
export const ROW_GROUPS = ${shards};
`;

export const BENCH = `/**
 * The speed matrix on one machine: \`npx vitest bench --run\` (the suite is in ./suite.ts).
 * Results: reports/speed-matrix.md and reports/speed-matrix.json. \`-u\` writes the threshold file.
 */
import { defineSpeedMatrix } from 'llm-speed-matrix';
import { suite } from './suite.js';

await defineSpeedMatrix(suite);
`;

export const SHARD = (index: number): string => `/**
 * Row group ${index} of the speed matrix in bench/suite.ts, for sharded runs (project matrix-sharded).
 */
import { defineSpeedMatrix } from 'llm-speed-matrix';
import { ROW_GROUPS, suite } from '../suite.js';

await defineSpeedMatrix(suite, { rows: { index: ${index}, of: ROW_GROUPS } });
`;

export const THRESHOLDS_README = `# Threshold files

One file per suite name: \`thresholds/<name>.json\` (the name is \`name\` in bench/suite.ts, or
\`sim-<profile>\` against the embedded simulator). Each cell's budgets (for example
\`"64K/16": { "min": { "perRequestTokensPerSecond": 24 } }\`) are asserted by its test, so a breach
fails the run and CI.

- \`npx vitest bench --run -u\` writes the file from measured results, with headroom (as snapshot
  updates do); review the change in the pull request.
- A budget you write by hand is kept by \`-u\` as long as the run still meets it.
- With an SLO (\`LLM_BENCH_SLO="perRequest>=20,ttftP90<=2000"\`), \`"capacity": { "32K": { "min": 20 } }\`
  gates how many users each context row holds at it.
- Editors check the file against the \`$schema\` it names (shipped with llm-speed-matrix).
`;

/**
 * GitHub Actions: the matrix split over machines by row group, one merged page, and a baseline
 * taken from the last run on main (a regression against it fails the merge job).
 */
export const WORKFLOW = (shards: number): string => {
  const list = Array.from({ length: shards }, (_, i) => i + 1).join(', ');
  return `# The speed matrix in CI, written by \`npx llm-speed-matrix init\`: shards run the row groups of
# bench/suite.ts on ${shards} machines, the merge job writes one page and fails on any failed cell
# (threshold breach, or a regression against the baseline: the last run on main). It installs with
# \`npm ci\` (a package-lock.json is needed; adapt the install steps for pnpm or yarn).
name: speed-matrix
on:
  pull_request:
  push:
    branches: [main]
permissions:
  contents: read
  actions: read        # to download main's last result (the baseline)
jobs:
  matrix:
    # one machine per shard; each must reach its own identical server (LLM_BENCH_URL), or drop
    # LLM_BENCH_URL to run the embedded simulator (LLM_BENCH_SIM_PROFILE=tiny is quick)
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix:
        shard: [${list}]
    env:
      # LLM_BENCH_URL: http://127.0.0.1:8000
      # LLM_BENCH_API_KEY: \${{ secrets.LLM_BENCH_API_KEY }}
      LLM_BENCH_SIM_PROFILE: tiny
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with: { node-version: 20, cache: npm }
      - run: npm ci
      - name: baseline from main
        if: github.event_name == 'pull_request'
        uses: dawidd6/action-download-artifact@v6
        with: { workflow: speed-matrix.yml, branch: main, name: speed-matrix, path: baseline }
        continue-on-error: true
      - name: shard \${{ matrix.shard }} of ${shards}
        run: |
          # gate on the baseline when main has one (the first run has none)
          if [ -f baseline/speed-matrix.json ]; then export LLM_BENCH_BASELINE=baseline/speed-matrix.json; fi
          npx vitest run --project matrix-sharded --shard=\${{ matrix.shard }}/${shards} --reporter=blob --outputFile=.vitest-reports/blob-\${{ matrix.shard }}-${shards}.json
      - uses: actions/upload-artifact@v4
        if: \${{ !cancelled() }}
        with:
          name: blob-\${{ matrix.shard }}
          path: .vitest-reports/*
          include-hidden-files: true
          retention-days: 1

  merge:
    # one page from every shard (+ job summary, JUnit); fails when any cell failed on its shard
    if: \${{ !cancelled() }}
    needs: [matrix]
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with: { node-version: 20, cache: npm }
      - run: npm ci
      - uses: actions/download-artifact@v4
        with: { path: .vitest-reports, pattern: blob-*, merge-multiple: true }
      - run: npx vitest --merge-reports=.vitest-reports
        env:
          LLM_BENCH_OUT: reports
          LLM_BENCH_JUNIT: reports/junit.xml
      # on main this artifact is the next pull request's baseline
      - uses: actions/upload-artifact@v4
        if: \${{ !cancelled() }}
        with: { name: speed-matrix, path: reports/ }
`;
};
