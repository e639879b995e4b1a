import type { PackageManager } from './package-manager.js';

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

/** The marker that finds the pull-request comment again, so each push updates one comment. */
export const COMMENT_MARKER = '<!-- llm-speed-matrix:pr-comment -->';

/**
 * The body of the comment job's actions/github-script step: it reads reports/speed-matrix-diff.md
 * (or says the run was ungated), then finds the comment that carries COMMENT_MARKER and updates
 * it, or creates one. It talks to the REST API with fetch (GITHUB_API_URL, the job's token) rather
 * than github-script's client, so a test can run this exact text against a local HTTP server.
 * github-script gives it `require`, `context` and `core`.
 */
export const COMMENT_SCRIPT = `const fs = require('fs');
const marker = '${COMMENT_MARKER}';
const api = process.env.GITHUB_API_URL || 'https://api.github.com';
const headers = { authorization: 'Bearer ' + process.env.GITHUB_TOKEN, accept: 'application/vnd.github+json', 'content-type': 'application/json' };
const call = async (method, path, body) => {
  const res = await fetch(api + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw new Error(method + ' ' + path + ': HTTP ' + res.status + ' ' + (await res.text()).slice(0, 300));
  return res.json();
};
const diff = 'reports/speed-matrix-diff.md';
const text = fs.existsSync(diff)
  ? fs.readFileSync(diff, 'utf8')
  : '**Ungated**: no baseline to compare with (main has no successful speed-matrix run yet), so no diff. The cells\\' own thresholds still applied.';
const run = context.serverUrl + '/' + context.repo.owner + '/' + context.repo.repo + '/actions/runs/' + context.runId;
// GitHub caps a comment at 65,536 characters; the full page is in the run's artifact
const limit = 60000;
const shown = text.length > limit ? text.slice(0, limit) + '\\n\\n… (cut; the whole diff is in the run\\'s speed-matrix artifact)' : text;
const body = marker + '\\n## Speed matrix\\n\\n' + shown + '\\n\\n[The run](' + run + ')\\n';
const base = '/repos/' + context.repo.owner + '/' + context.repo.repo + '/issues';
let found;
for (let page = 1; page <= 50 && !found; page++) {
  const comments = await call('GET', base + '/' + context.issue.number + '/comments?per_page=100&page=' + page);
  found = comments.find((c) => typeof c.body === 'string' && c.body.startsWith(marker));
  if (comments.length < 100) break;
}
if (found) {
  await call('PATCH', base + '/comments/' + found.id, { body });
  core.info('updated comment ' + found.id);
} else {
  const made = await call('POST', base + '/' + context.issue.number + '/comments', { body });
  core.info('created comment ' + made.id);
}
`;

/**
 * The steps that make Node and the project's package manager ready and install its dependencies.
 * Node 24: Vitest 5 needs 22.12+, and both Vitest 4.1 and 5 are checked on it.
 */
function installSteps(pm: PackageManager): string {
  const lines: string[] = ['      - uses: actions/checkout@v4'];
  if (pm.name === 'pnpm') {
    // pnpm/action-setup reads the version from packageManager; without the field it needs one
    lines.push(pm.source === 'the packageManager field' ? '      - uses: pnpm/action-setup@v4' : '      - uses: pnpm/action-setup@v4\n        with: { version: 10 }');
  }
  if (pm.name === 'yarn' && pm.install.includes('--immutable')) lines.push('      - run: corepack enable    # Yarn 2+ comes through Corepack');
  if (pm.name === 'bun') lines.push('      - uses: oven-sh/setup-bun@v2');
  lines.push('      - uses: actions/setup-node@v4');
  lines.push(`        with: { node-version: 24${pm.cache ? `, cache: ${pm.cache}` : ''} }`);
  lines.push(`      - run: ${pm.install}`);
  return lines.join('\n');
}

/**
 * The baseline step of a pull request. The rule (also written into the workflow): a pull request
 * is gated against the `speed-matrix` artifact of main's last successful run of this workflow.
 * When main has no successful run yet (the first run), it runs ungated and says so on the job
 * summary. When main has one but the artifact cannot be downloaded (expired, deleted, an API
 * error), the step fails with the reason: never ungated in silence.
 */
function baselineStep(): string {
  return `      - name: baseline (main's last successful run)
        if: github.event_name == 'pull_request'
        env:
          GH_TOKEN: \${{ github.token }}
        run: |
          run_id=$(gh run list --repo "$GITHUB_REPOSITORY" --workflow speed-matrix.yml --branch main --status success --limit 1 --json databaseId --jq '.[0].databaseId // empty') || {
            echo "::error::could not list main's runs of speed-matrix.yml (is actions: read granted?)"; exit 1; }
          if [ -z "$run_id" ]; then
            echo "::warning::ungated: main has no successful speed-matrix run yet, so this pull request has no baseline"
            echo "**Ungated**: main has no successful speed-matrix run yet; no baseline comparison." >> "$GITHUB_STEP_SUMMARY"
            exit 0
          fi
          gh run download "$run_id" --repo "$GITHUB_REPOSITORY" --name speed-matrix --dir baseline || {
            echo "::error::main's run $run_id has no downloadable speed-matrix artifact (expired or deleted?). Fix: re-run speed-matrix on main, then re-run this job"; exit 1; }
          test -s baseline/speed-matrix.json || { echo "::error::main's run $run_id artifact has no speed-matrix.json"; exit 1; }
          echo "LLM_BENCH_BASELINE=baseline/speed-matrix.json" >> "$GITHUB_ENV"
          echo "baseline: main's run $run_id"`;
}

/**
 * GitHub Actions: the matrix split over machines by row group, one merged page, a baseline taken
 * from main's last successful run (a regression against it fails the merge job), and on pull
 * requests one comment with the diff, updated on each push. Install, cache and run steps use the
 * project's package manager.
 */
export const WORKFLOW = (shards: number, pm: PackageManager = detectedNpm): string => {
  const list = Array.from({ length: shards }, (_, i) => i + 1).join(', ');
  const x = pm.exec;
  return `# The speed matrix in CI, written by \`llm-speed-matrix init\`: shards run the row groups of
# bench/suite.ts on ${shards} machines, the merge job writes one page and fails on any failed cell
# (threshold breach, or a regression against the baseline), and on a pull request one comment shows
# the diff against the baseline, updated on each push. It installs with ${pm.name} (\`${pm.install}\`;
# detected from ${pm.source}).
#
# The baseline rule: a pull request is compared with the speed-matrix artifact of main's last
# successful run of this workflow. While main has none (the first run), the pull request runs
# ungated and the job summary and the comment say so. When main has one but it cannot be
# downloaded (expired, deleted, an API error), the job fails with the reason; it never runs
# ungated in silence.
name: speed-matrix
on:
  pull_request:
  push:
    branches: [main]
# one run per branch or pull request at a time: a new push cancels the one in flight
concurrency:
  group: speed-matrix-\${{ github.event.pull_request.number || github.ref }}
  cancel-in-progress: true
permissions:
  contents: read
  actions: read        # to find and download main's last result (the baseline)
jobs:
  matrix:
    # one machine per shard; each must reach its own identical server (LLM_BENCH_URL), or drop
    # LLM_BENCH_URL to run the embedded simulator (LLM_BENCH_SIM_PROFILE=tiny is quick)
    runs-on: ubuntu-latest
    timeout-minutes: 60
    strategy:
      fail-fast: false
      matrix:
        shard: [${list}]
    env:
      # LLM_BENCH_URL: http://127.0.0.1:8000
      # LLM_BENCH_API_KEY: \${{ secrets.LLM_BENCH_API_KEY }}
      LLM_BENCH_SIM_PROFILE: tiny
    steps:
${installSteps(pm)}
${baselineStep()}
      - name: shard \${{ matrix.shard }} of ${shards}
        run: ${x} vitest run --project matrix-sharded --shard=\${{ matrix.shard }}/${shards} --reporter=blob --reporter=default --outputFile.blob=.vitest-reports/blob-\${{ matrix.shard }}-${shards}.json
      - uses: actions/upload-artifact@v4
        if: \${{ !cancelled() }}
        with:
          name: blob-\${{ matrix.shard }}
          path: .vitest-reports/*
          include-hidden-files: true
          retention-days: 1

  merge:
    # one page from every shard (+ job summary, JUnit, and the diff page against the baseline);
    # fails when any cell failed on its shard
    if: \${{ !cancelled() }}
    needs: [matrix]
    runs-on: ubuntu-latest
    timeout-minutes: 15
    steps:
${installSteps(pm)}
${baselineStep()}
      - uses: actions/download-artifact@v4
        with: { path: .vitest-reports, pattern: blob-*, merge-multiple: true }
      - run: ${x} vitest --merge-reports=.vitest-reports
        env:
          LLM_BENCH_OUT: reports
          LLM_BENCH_JUNIT: reports/junit.xml
      # on main this artifact is the next pull request's baseline
      - uses: actions/upload-artifact@v4
        if: \${{ !cancelled() }}
        with: { name: speed-matrix, path: reports/ }

  comment:
    # one comment on the pull request with the diff (reports/speed-matrix-diff.md), found again by
    # its marker and updated on each push. Only this job may write to pull requests; a pull request
    # from a fork gets a read-only token, so there the comment is skipped (the matrix still runs).
    if: \${{ !cancelled() && github.event_name == 'pull_request' && github.event.pull_request.head.repo.full_name == github.repository }}
    needs: [merge]
    runs-on: ubuntu-latest
    timeout-minutes: 5
    permissions:
      pull-requests: write
    steps:
      - uses: actions/download-artifact@v4
        with: { name: speed-matrix, path: reports }
      - uses: actions/github-script@v7
        env:
          GITHUB_TOKEN: \${{ github.token }}
        with:
          script: |
${COMMENT_SCRIPT.trimEnd()
  .split('\n')
  .map((line) => (line ? `            ${line}` : ''))
  .join('\n')}
`;
};

/** npm with a lock file: what a project created with `npm init` and `npm i` has. */
const detectedNpm: PackageManager = { name: 'npm', source: 'package-lock.json', locked: true, install: 'npm ci', exec: 'npx', cache: 'npm' };
