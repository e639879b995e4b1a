/**
 * `defineSpeedMatrix(suite)`: called at the top level of a bench file, it resolves the suite,
 * opens the run (probe, warm-up), plans the matrix and generates one Vitest test per prefill row
 * and per cell, named "prefill 8K" and "decode 8K/16" so `-t "8K/16"` selects one cell.
 * Each test measures, stores its result in task meta for the reporter, and asserts status and
 * threshold budgets. Tests run one at a time (a file's tests are sequential; the matrix project
 * has no file parallelism).
 */
import { existsSync } from 'node:fs';
import { importVitest } from '../meta/peer.js';
import { ConfigError } from '../errors.js';
import { resolveSuite, type ResolvedSuite } from '../config/resolve.js';
import { debugErrors } from '../config/env.js';
import { timerLimitMs } from '../config/defaults.js';
import { asUserError } from '../errors.js';
import type { SuiteInput } from '../config/suite-input.js';
import { openRun, describeRun } from './open.js';
import { gateTimeoutMs, planMatrix } from './plan.js';
import { RunPrompts } from './prompts.js';
import { createCellRunner, finishCell } from './cell-test.js';
import { rowLengthProblem } from './cell-load.js';
import { loadResume } from './resume.js';
import { createPrefillRunner, finishPrefill } from './prefill-test.js';
import { createCapacityRunner } from './capacity-test.js';
import { createRateRunner, planRateCells } from './rate-test.js';
import { createRateCapacityRunner } from './rate-capacity-test.js';
import { contextLabel, testNames } from '../shapes/labels.js';
import { maxSearchCells } from '../slo/capacity.js';
import { MAX_RATE_PROBES } from '../slo/rate-capacity.js';
import { loadThresholds, ThresholdsError, type LoadedThresholds } from '../thresholds/load.js';
import { countFileLines, largestRequests, multiTurnLengthNote, openRunWorkload } from './workload-run.js';
import { progress } from './progress.js';
import { BASELINE_VARIABLE, loadBaseline, readBaseline, type LoadedBaseline } from '../compare/baseline.js';
import type { RunInfo, SpeedMatrixResult } from '../shapes/result.js';
import type { RegressionTolerances } from '../thresholds/schema.js';
import { rateScheduleDifference } from '../judge/compare-rate.js';
import { checkRowGroup, selectRowGroup, type RowGroup } from './groups.js';
import { openRequestsFile } from './requests-out.js';

/** A bench file that Vitest runs outside the matrix projects: the config lacks withSpeedMatrix. */
export const NOT_A_MATRIX_PROJECT =
  'this speed-matrix file runs outside the matrix projects: your Vitest config has no withSpeedMatrix, so no cell would run and no page would be written. ' +
  "Fix: in your vitest config, import { withSpeedMatrix } from 'llm-speed-matrix/vitest' and export default defineConfig(withSpeedMatrix({ /* your config */ })) " +
  '(`npx llm-speed-matrix init` prints the line)';

export interface DefineOptions {
  /**
   * Run only one group of rows (see src/matrix/groups.ts), so a matrix split over several bench
   * files can be spread over machines with `vitest --shard`; the page of the merged run is the
   * page of the whole matrix.
   * @default every row
   * @example { index: 2, of: 4 }
   */
  rows?: RowGroup;
}

/**
 * Declares the speed matrix of a bench file: call it once, at the top level, with `await`. It
 * resolves the suite (every `LLM_BENCH_*` variable wins over its fields), reaches the server or
 * starts the embedded simulator, warms it up, and registers one Vitest test per prefill row
 * ("prefill 8K") and per cell ("decode 8K/16", so `-t "8K/16"` selects one cell). Each test
 * measures its cell, hands the result to the speed-matrix reporter (reports/speed-matrix.json,
 * .md, .html) and checks the cell's status and threshold budgets. Needs the matrix projects of
 * `withSpeedMatrix` in the Vitest config; run with `npx vitest bench --run`.
 *
 * A setup mistake (a bad field, an unreachable server, a threshold file that does not fit) throws
 * one error naming the field and the fix (`LLM_BENCH_DEBUG=1` keeps the stack).
 *
 * @param input the suite: target, matrix, timeouts, thresholds, slo…; `{}` measures the simulator
 * @param options `rows`: this file runs one group of the matrix's rows (sharded CI)
 * @returns once the tests are registered
 * @example
 * ```ts
 * import { defineSpeedMatrix } from 'llm-speed-matrix';
 *
 * await defineSpeedMatrix({
 *   target: { url: 'http://127.0.0.1:8000' },
 *   matrix: { contexts: [0, 8192, 32768], concurrency: [1, 4, 16], windowS: 30 },
 * });
 * ```
 */
export async function defineSpeedMatrix(input: SuiteInput = {}, options: DefineOptions = {}): Promise<void> {
  try {
    await define(input, options);
  } catch (error) {
    // a setup mistake or an unusable server: one clean line (LLM_BENCH_DEBUG=1 keeps the trace)
    throw asUserError(error, debugErrors());
  }
}

async function define(input: SuiteInput, options: DefineOptions): Promise<void> {
  const { afterAll, describe, inject, test } = await importVitest();
  // the matrix projects' global setup always provides this; without it the file runs in a project
  // withSpeedMatrix did not make (Vitest 4's bench runner would then skip every cell, exit 0, no page)
  if (inject('speedMatrixUpdate') === undefined) throw new ConfigError(NOT_A_MATRIX_PROJECT);
  const cfg = resolveSuite(input);
  if (options.rows) {
    checkRowGroup(options.rows);
    const mine = selectRowGroup(planMatrix(cfg.matrix, {}), options.rows);
    if (mine.cells.length + mine.prefill.length === 0) {
      // more groups than rows: this file has nothing to run (and starts no server)
      test.skip(`row group ${options.rows.index} of ${options.rows.of}: no rows of this matrix`, () => {});
      return;
    }
  }
  // LLM_BENCH_BASELINE and a workload's prompt file: read before the server is reached, so a bad path fails the file at once
  const baselineResult = cfg.baselinePath ? readBaseline(cfg.baselinePath) : undefined;
  const workload = openRunWorkload(cfg.workload, cfg.rates !== undefined);
  const opened = await openRun(cfg);
  afterAll(() => opened.close());
  const prompts = new RunPrompts(opened.session, cfg.promptMode);
  if (workload.file) progress(`counting the ${workload.file.lines.length} lines of ${workload.file.name} (output lengths from answers, lines too long for the server)`);
  await countFileLines(workload, prompts.sizer, opened.session.facts.maxModelLen?.value, cfg.matrix.maxOutputTokens);
  const turnsNote = multiTurnLengthNote(workload.workload, cfg.matrix.maxOutputTokens, opened.session.facts.maxModelLen?.value);
  if (turnsNote !== undefined) process.stderr.write(`[speed-matrix] ${turnsNote}\n`);
  // Over capacity: C × a row's largest request, the workload's where it sends its own lengths
  const { facts } = opened.session;
  const fullPlan = planMatrix(cfg.matrix, { kvCapacityTokens: facts.kvCapacityTokens?.value, maxRunningRequests: facts.maxRunningRequests?.value }, largestRequests(workload, cfg.matrix.maxOutputTokens, facts.maxModelLen?.value));
  // the run info names the whole matrix, so merged shards plan (and draw) every cell
  const info = describeRun(cfg, opened, fullPlan);
  if (workload.workload.kind !== 'synthetic') info.run.workload = workload.info;
  // LLM_BENCH_RESUME: a partial run of this same matrix; its finished cells and rows are kept
  const resume = cfg.resumePath ? loadResume(cfg.resumePath, info) : undefined;
  if (resume) info.resumedFrom = { path: cfg.resumePath!, startedAt: resume.previous.info.startedAt };
  const plan = options.rows ? selectRowGroup(fullPlan, options.rows) : fullPlan;
  const updating = inject('speedMatrixUpdate') === true;
  const thresholds = loadThresholds(cfg.thresholdsPath, {
    cellKeys: fullPlan.cells.map((c) => c.key),
    prefillKeys: fullPlan.prefill.map((p) => p.key),
    contextKeys: [...new Set(fullPlan.cells.map((c) => c.context))].map(contextLabel),
    // -u may run against a changed matrix, or workload: the reporter rewrites the file at the end
    allowUnknown: updating,
    workload: workload.info.text,
  });
  if (!updating) noteMissingThresholds(cfg.thresholdsPath);
  checkCapacityBudgets(cfg, thresholds, updating);
  // …and checked against this run's settings before any cell runs
  const baseline = cfg.baselinePath && baselineResult ? runBaseline(cfg.baselinePath, info, thresholds.tolerances?.regression, baselineResult, plan.cells.length > 0) : undefined;
  const requestsFile = openRequestsFile(cfg, inject('speedMatrixStartedAt') ?? info.startedAt, resume !== undefined);
  const ctx = { cfg, opened, info, thresholds, updating, debug: debugErrors(), prompts, workload, results: new Map(), rateResults: new Map(), ...(baseline ? { baseline } : {}), ...(requestsFile ? { requestsFile } : {}) };
  const runPrefill = createPrefillRunner(ctx);
  const runCellTest = createCellRunner(ctx);
  const runCapacityTest = createCapacityRunner(ctx);
  const runRateTest = cfg.rates ? createRateRunner(ctx, cfg.rates) : undefined;
  const runRateCapacityTest = cfg.rates && cfg.slo ? createRateCapacityRunner(ctx, cfg.rates) : undefined;

  /** a cell test's time limit: every phase's own limit, for each repeat (each is a whole cell run) */
  const cellTimeout = (cell: (typeof plan.cells)[number]): number =>
    cfg.repeat *
    (cfg.timeouts.drainMs +
      gateTimeoutMs(cfg.timeouts, cell) +
      cfg.matrix.windowS * 1000 +
      cfg.timeouts.headersMs +
      // a server that restarts as the cell starts is waited for (tokenize calls, first connections)
      2 * cfg.timeouts.unreachableRetryMs +
      60_000);

  /** a resumed run's kept cell (Over capacity ones are planned afresh: the capacity may have changed) */
  // a resumed cell is measured again where this run plans it otherwise: Over capacity, or its row too long for the model (a server restarted with a shorter one)
  const keptCell = (cell: (typeof plan.cells)[number]) => (cell.overCapacity || rowLengthProblem(ctx, cell.context) !== undefined ? undefined : resume?.cells.get(cell.key));

  describe(`speed matrix ${cfg.name}`, () => {
    // LLM_BENCH_RESUME: the kept results go first, so the page holds all of them before anything is
    // measured (the results file is often the very file being resumed)
    for (const row of plan.prefill) {
      const kept = resume?.prefill.get(row.key);
      if (kept) test(testNames.prefill(row.key), (tc) => finishPrefill(ctx, row.key, { ...kept, resumed: true }, tc));
    }
    for (const cell of plan.cells) {
      const kept = keptCell(cell);
      if (kept) test(testNames.decode(cell.key), (tc) => finishCell(ctx, cell.key, { ...kept, resumed: true }, tc));
    }
    for (const row of plan.prefill) {
      if (resume?.prefill.has(row.key)) continue;
      // each repeat is one request, plus calibrating its own prompt (through real requests when the server has no tokenizer)
      const prefillTimeout = (cfg.timeouts.headersMs + cfg.timeouts.stallMs + cfg.timeouts.unreachableRetryMs + 60_000) * cfg.repeat;
      test(testNames.prefill(row.key), { timeout: timerLimitMs(prefillTimeout) }, (tc) => runPrefill(row, tc));
    }
    for (const cell of plan.cells) {
      if (keptCell(cell)) continue;
      const repeatTimeout = cellTimeout(cell);
      test(testNames.decode(cell.key), { timeout: timerLimitMs(repeatTimeout) }, (tc) => runCellTest(cell, tc));
    }
    // With an SLO: per context, after its cells, "capacity <context>" searches between the columns
    // with adaptive cells (at most ⌈log2(gap)⌉ + 1 of them; the widest gap is bounded by the largest column)
    if (cfg.slo) {
      const columns = [...cfg.matrix.concurrency].sort((a, b) => a - b);
      const searchCells = maxSearchCells(0, columns[columns.length - 1]!);
      for (const context of [...new Set(plan.cells.map((c) => c.context))]) {
        const widest = plan.cells.filter((c) => c.context === context).reduce((m, c) => Math.max(m, cellTimeout(c)), 0);
        test(testNames.capacity(contextLabel(context)), { timeout: timerLimitMs(widest * (searchCells + 1)) }, (tc) => runCapacityTest(context, tc));
      }
    }
    // Open-loop rate cells (matrix.rates): per context, after its decode cells (the decode cell at
    // concurrency 1 gives the service time Little's law needs), rates ascending
    if (cfg.rates && runRateTest) {
      const rateTimeout =
        cfg.timeouts.drainMs + (cfg.rates.rampS + cfg.matrix.windowS) * 1000 + cfg.timeouts.headersMs + 2 * cfg.timeouts.unreachableRetryMs + 60_000;
      const rateCells = planRateCells([...new Set(plan.cells.map((c) => c.context))], cfg.rates);
      rateCells.forEach((cell, i) => {
        test(testNames.rate(cell.key), { timeout: timerLimitMs(rateTimeout) }, (tc) => runRateTest(cell, tc));
        // with an SLO, after a context's last rate cell: "rate capacity <context>" bisects between
        // its rates (at most MAX_RATE_PROBES adaptive cells and a confirmation)
        if (runRateCapacityTest && rateCells[i + 1]?.context !== cell.context) {
          test(testNames.rateCapacity(cell.contextLabel), { timeout: timerLimitMs(rateTimeout * (MAX_RATE_PROBES + 1)) }, (tc) => runRateCapacityTest(cell.context, tc));
        }
      });
    }
  });
}

/** A missing threshold file is "no budgets yet" (a first run passes; -u writes it): said at the start (by each row-group file of a sharded suite), so a mistyped path is seen. */
function noteMissingThresholds(path: string): void {
  if (existsSync(path)) return;
  process.stderr.write(`[speed-matrix] ${path} does not exist: no budgets gate this run (-u writes it from this run's results; a wrong path: check LLM_BENCH_THRESHOLDS or the suite's thresholds)\n`);
}

/**
 * Capacity and rate capacity budgets need what measures them: an SLO (the one they were measured
 * at), and rate cells for rateCapacity. A budget nothing checks is a gate that does not gate; -u
 * rewrites the file, so it is let through.
 */
function checkCapacityBudgets(cfg: ResolvedSuite, thresholds: LoadedThresholds, updating: boolean): void {
  // a capacity budget without an SLO would never be checked: a gate that does not gate
  const capacityBudgets = [...Object.keys(thresholds.capacity ?? {}), ...Object.keys(thresholds.rateCapacity ?? {}).map((k) => `rateCapacity ${k}`)];
  if (capacityBudgets.length > 0 && !cfg.slo && !updating) {
    throw new ThresholdsError(
      `${cfg.thresholdsPath}: capacity budgets (${capacityBudgets.join(', ')}) need an SLO to measure capacity against; set ${thresholds.slo !== undefined ? `the one they were measured at, LLM_BENCH_SLO="${thresholds.slo}"` : 'LLM_BENCH_SLO (e.g. LLM_BENCH_SLO="perRequest>=20,ttftP90<=2000")'} or the suite's slo, or remove the capacity entries`,
    );
  }
  if (capacityBudgets.length > 0 && cfg.slo && thresholds.slo !== undefined && thresholds.slo !== cfg.slo.text && !updating) {
    throw new ThresholdsError(
      `${cfg.thresholdsPath}: its capacity budgets were measured at the SLO ${thresholds.slo}, this run's is ${cfg.slo.text}; run at that SLO, or rewrite the budgets for this one with -u`,
    );
  }
  const rateBudgets = Object.keys(thresholds.rateCapacity ?? {});
  if (rateBudgets.length > 0 && !cfg.rates && !updating) {
    throw new ThresholdsError(
      `${cfg.thresholdsPath}: rateCapacity budgets (${rateBudgets.join(', ')}) need open-loop rate cells to search; set LLM_BENCH_RATES (e.g. LLM_BENCH_RATES=1,2,4,8) or matrix.rates, or remove the rateCapacity entries`,
    );
  }
}

/**
 * The baseline checked against this run's settings; where its open-loop rates were scheduled
 * otherwise, or either run swept them, said by the file that runs rate cells (`rateRows`: its row
 * group has rows), as their cells are not compared.
 */
function runBaseline(path: string, info: RunInfo, regression: RegressionTolerances | undefined, result: SpeedMatrixResult, rateRows: boolean): LoadedBaseline {
  const baseline = loadBaseline(path, info, regression, result);
  if (!info.run.rates || !rateRows) return baseline;
  const [here, there] = [info.run.rates.sweep !== undefined, result.info.run.rates?.sweep !== undefined];
  const otherSchedule =
    here || there
      ? `${here && there ? 'both runs swept their' : here ? 'this run sweeps its' : 'the baseline swept its'} open-loop rates, so the rate cells are not compared (a sweep's rates come from its own run's decode cells; those are compared)`
      : rateScheduleDifference(result.info, info);
  // about what the gate checks, as noteMissingThresholds: said even when LLM_BENCH_QUIET silences progress
  if (otherSchedule) process.stderr.write(`[speed-matrix] ${BASELINE_VARIABLE}: ${otherSchedule}\n`);
  return baseline;
}
