import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { ensureBuilt } from './scripts/build.mjs';

// This repository uses its own package as users do: the entry point llm-speed-matrix/vitest,
// resolved through package.json `exports` to the build, not src/ paths. The build (dist/) is
// brought up to date with the sources first, so every `npx vitest …` here runs the current code;
// hence the import after it, resolved from this folder (Vite runs this file from node_modules/).
ensureBuilt();
const entry = createRequire(new URL('./package.json', import.meta.url)).resolve('llm-speed-matrix/vitest');
const { speedMatrixBenchmarkReporters, speedMatrixProjects, speedMatrixReporters } = (await import(
  pathToFileURL(entry).href
)) as typeof import('llm-speed-matrix/vitest');

/**
 * The fast tier's live checks (project `core`, in `npm test`): the few that decide the core
 * figures against the simulator's truth (TTFT, time between tokens, total and per-request tok/s,
 * output tokens; Over capacity and Requests queued where the sim's settings put them; cells that
 * never overlap) and one user's run end to end (a breach, -u, a rerun). One file at a time, after
 * the unit files, so no other file of the run takes the CPU they measure on.
 */
const coreTests = [
  'test/accuracy/timing.test.ts',
  'test/accuracy/tokens.test.ts',
  'test/accuracy/capacity.test.ts',
  'test/accuracy/isolation.test.ts',
  'test/e2e/matrix-run.test.ts',
];

/**
 * The slow tier's checks of figures against the simulator's truth that keep a client busy (project
 * `timing`, first in `npm run test:slow`): one file at a time. In CI the package check runs beside
 * them (.ci/run): it takes about 0.6 of a core over its 255 s (user + system time over wall time,
 * alone on the 2-core VM, 2026-12-07), less than the core kept spinning beside these files in the
 * flake hunts they pass (docs/ci.md); beside the waits files, three at a time, it slowed them by a
 * fifth.
 */
const timingTests = [
  'test/accuracy/active-think.test.ts',
  'test/accuracy/arrival-log.test.ts',
  'test/accuracy/client-limited.test.ts',
  'test/accuracy/faults.test.ts',
  'test/accuracy/llamacpp-personality.test.ts',
  'test/accuracy/multi-turn.test.ts',
  'test/accuracy/sglang-abort.test.ts',
  'test/accuracy/tick-server.test.ts',
  'test/accuracy/workload-lengths.test.ts',
  'test/engines/personalities.e2e.test.ts',
  // its rate cells' sends are held to 10 ms (judge-rate.ts RATE_DISPATCH_BOUND_MS), and its
  // capacity search counts a Client-limited cell as unjudged: beside three other files and a busy
  // core, three baseline runs in a row had one (2026-12-07), so it runs alone
  'test/compare/seeded-rate-capacity.e2e.test.ts',
  // the same for the capacity search of decode cells: beside three other files, the package check
  // and a busy core, the slowed run's cell past the capacity was Client-limited three runs in a row
  // (2026-12-07), so that the row bound on an unjudged cell; it runs alone
  'test/compare/seeded-capacity.e2e.test.ts',
  // the -u churn check asks two runs of the tiny simulator to agree within -u's noise band: in CI,
  // beside the package check and two other files, a run's request turnover slowed 7-10 % (every
  // step on time) in two runs of three, even with two repeats a cell, so it runs alone (the rest
  // of gates.test.ts, whole runs checked for what the user sees, waits beside other files)
  'test/e2e/update-churn.test.ts',
];

/**
 * The rest of the slow tier (project `waits`, after the timing files in `npm run test:slow`), three files at a time:
 * - checks against the simulator's truth whose runs mostly wait out their windows and schedules
 *   (a third of a core or less over the file, measured alone on the 2-core VM, user + system time
 *   over wall time, 2026-12-06: 0.18–0.34; the timing files read 0.57–0.78), with bounds wide
 *   against what another file takes from them (±10 % of a TTFT p90, ±1 user, 2 points of a hit
 *   rate, a KS test at p > 0.01), and a cell the machine disturbed measured again;
 * - whole runs checked for what the user sees (exit codes, the line that names the fault, which
 *   cells the files hold, the requests the server or the proxy got, the HTML pages in headless
 *   Chromium) rather than for figures against truth: most spawn `vitest bench` children that wait
 *   out their windows after a start-up of about 2.5 s of CPU.
 * Every file passes with another process spinning on one of the two cores (scripts/flake-hunt.mjs,
 * docs/ci.md), so a third file beside two others is load they are built for.
 *
 * Each with its wall time in seconds (quiet 2-core VM, three at a time, 2026-12-07): the files run
 * longest first (LongestFirst below), so that the long ones do not start last and keep the project
 * running alone at its end (377 s in the order Vitest found with no cache, about 323 s this way).
 * A new file without a measured time runs first; put its time here when it is measured.
 */
const waitTests: ReadonlyArray<readonly [file: string, seconds: number]> = [
  ['test/faults/matrix-faults.test.ts', 114],
  ['test/faults/user-faults.test.ts', 67],
  ['test/accuracy/client-status.test.ts', 59],
  ['test/gateway/nginx.test.ts', 57],
  ['test/accuracy/rate-saturation.test.ts', 56],
  ['test/faults/server-faults.test.ts', 54],
  ['test/accuracy/llamacpp-metric-names.test.ts', 51],
  ['test/e2e/rate-cells.test.ts', 47],
  ['test/accuracy/prefix-cache.test.ts', 45],
  ['test/accuracy/capacity-slo.test.ts', 43],
  ['test/accuracy/rate-capacity.test.ts', 43],
  ['test/shard/merge.test.ts', 39],
  ['test/compare/rate-baseline.e2e.test.ts', 37],
  ['test/e2e/workloads.test.ts', 36],
  ['test/e2e/workload-kinds.test.ts', 36],
  ['test/e2e/workload-files.test.ts', 35],
  ['test/e2e/rate-sweep.test.ts', 30],
  ['test/e2e/gates.test.ts', 30],
  ['test/e2e/stalls.test.ts', 29],
  ['test/faults/resume.test.ts', 22],
  ['test/compare/seeded-regression.test.ts', 21],
  ['test/accuracy/polled.test.ts', 18],
  ['test/meta/secrets.e2e.test.ts', 18],
  ['test/accuracy/bare.test.ts', 16],
  ['test/accuracy/metric-samples.test.ts', 11],
  ['test/report/report.browser.test.ts', 4],
  ['test/report/compare.browser.test.ts', 2],
];
const waitFiles = waitTests.map(([file]) => file);

/**
 * Vitest's own order, except that within a project the files with a time in waitTests run longest
 * first (the rest, new files, before them). Vitest orders by its cache of the last run's durations,
 * and a clean clone (CI) has none: it then runs larger files first, which put the longest file of
 * `waits` (matrix-faults, 114 s) last but one.
 */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const vitestOrder = await super.sort(files);
    const seconds = new Map(waitTests.map(([file, s]) => [file, s]));
    const key = (f: TestSpecification): number => seconds.get(relative(this.ctx.config.root, f.moduleId).split(sep).join('/')) ?? Number.MAX_SAFE_INTEGER;
    // Vitest's order keeps each project's files together: each such run is sorted on its own
    const out: TestSpecification[] = [];
    for (let i = 0; i < vitestOrder.length; ) {
      let j = i;
      while (j < vitestOrder.length && vitestOrder[j]!.project.name === vitestOrder[i]!.project.name) j++;
      const run = vitestOrder.slice(i, j).map((f, at) => ({ f, at }));
      run.sort((a, b) => key(b.f) - key(a.f) || a.at - b.at);
      for (const { f } of run) out.push(f);
      i = j;
    }
    return out;
  }
}

/** every file of the slow tier (`npm run test:slow`); the unit project takes the rest */
const slowTests = [...timingTests, ...waitFiles, 'test/real/**'];

// a misspelt or moved file in a list would fall to the unit project (its files run several at a
// time, with a 30 s timeout) without a word
for (const file of [...coreTests, ...timingTests, ...waitFiles]) {
  if (!existsSync(new URL(file, import.meta.url))) throw new Error(`vitest.config.ts: ${file} (in a list of this file's test projects) does not exist: fix its path, or take it out of the list`);
}

/**
 * The Client-limited bound for this suite's own runs: 50 ms (METHOD.md's), not the 5 ms default.
 * CI's 2-core machine runs vitest, each bench child and its simulator thread on two cores, and
 * there a child's event loop stalls 3–27 ms at p99 even at 1–8 streams (measured on CI,
 * 2026-12-01), so the default turned cells of tests about other things Client-limited. The
 * rule's own tests (test/accuracy/client-limited.test.ts, test/judge, test/load) pass their
 * bounds explicitly and run at the default.
 */
const testEnv = { LLM_BENCH_CLIENT_LIMIT_MS: '50' };

/** A project of live checks: `maxWorkers` files at a time, in its turn among the projects run together (groupOrder). */
function liveProject(name: string, include: string[], o: { maxWorkers: number; groupOrder: number }) {
  return {
    test: { name, env: testEnv, include, benchmark: { include: [] }, maxWorkers: o.maxWorkers, sequence: { groupOrder: o.groupOrder }, testTimeout: 300_000, hookTimeout: 60_000 },
  };
}

export default defineConfig({
  test: {
    sequence: { sequencer: LongestFirst },
    // Vitest's default reporter, the speed-matrix reporter (page, JSON, -u), and with
    // LLM_BENCH_JUNIT=PATH the JUnit reporter; `vitest bench` reads test.benchmark.reporters
    reporters: speedMatrixReporters(),
    benchmark: { reporters: speedMatrixBenchmarkReporters() },
    projects: [
      {
        test: {
          name: 'unit',
          env: testEnv,
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...coreTests, ...slowTests],
          // the project's own tests never run as benchmarks
          benchmark: { include: [] },
          // at least two files at a time: Vitest's default is one fewer than the cores, one file at
          // a time on CI's 2-core machine, where these files took 215 s one after another against
          // 122 s two at a time (2026-12-07); their few timed checks (a stall limit, a worker
          // thread's crash) have margins of seconds
          maxWorkers: Math.max(2, availableParallelism() - 1),
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      // the fast tier's live checks: one file at a time, after the unit files
      liveProject('core', coreTests, { maxWorkers: 1, groupOrder: 1 }),
      // the slow tier: the timing files one at a time, then the files that mostly wait, three at a
      // time (every project its own turn, so a plain `vitest run` of all of them runs them in order)
      liveProject('timing', timingTests, { maxWorkers: 1, groupOrder: 2 }),
      liveProject('waits', waitFiles, { maxWorkers: 3, groupOrder: 3 }),
      {
        test: {
          // The tool against a real server (LLM_BENCH_REAL_URL); without one it says why it skipped.
          name: 'real',
          include: ['test/real/**/*.test.ts'],
          benchmark: { include: [] },
          fileParallelism: false,
          sequence: { groupOrder: 4 },
          testTimeout: 600_000,
          hookTimeout: 60_000,
        },
      },
      // `matrix` (bench/**/*.bench.ts under `vitest bench`) and `matrix-sharded` (bench/shards/)
      ...speedMatrixProjects(),
    ],
  },
});
