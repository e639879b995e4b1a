/**
 * Vitest reporter that turns the matrix tests' `task.meta.speedMatrix` into speed-matrix.json and
 * speed-matrix.md (in $LLM_BENCH_OUT, default reports/), after every finished cell (partial page)
 * and at run end (final page, built from ALL test cases, so it also works after
 * `vitest --merge-reports`). Under `-u` it rewrites the target's threshold file at run end
 * (the single writer). Thin I/O over the pure collect / render (src/pages) / update functions.
 * Its settings (folder, threshold file, baseline, -u, job summary, debug) are resolved once
 * (src/config/settings.ts): given by withSpeedMatrix, else when it is constructed.
 * Tests without `speedMatrix` meta are ignored, so the unit project is untouched.
 */
import type {} from '../src/matrix/task-meta.js';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';
import { collectResult, finishedKeys, plannedCellKeys } from '../src/results/collect.js';
import { renderCompareHtml } from '../src/pages/compare-html.js';
import { capacityLine, cellLine, prefillLine, PREFIX, rateCapacityLine, rateLine, runEndLine, runningLine } from '../src/pages/progress-lines.js';
import type { RunInfo, SpeedMatrixMeta, SpeedMatrixResult } from '../src/shapes/result.js';
import { testNameOfMeta } from '../src/shapes/labels.js';
import { checkResultsDir, writeFileAtomic, writeResults } from '../src/results/write.js';
import { setAsideEarlierRun } from './earlier-page.js';
import { lockResultsDir, type ResultsLock } from '../src/results/lock.js';
import { parseThresholds } from '../src/thresholds/load.js';
import { updateThresholds, writeThresholds } from '../src/thresholds/update.js';
import { resolveRunSettings, type RunSettings, type SettingsOptions } from '../src/config/settings.js';
import { asUserError } from '../src/errors.js';
import type { ThresholdsFile } from '../src/thresholds/schema.js';
import { renderStepSummary } from '../src/pages/step-summary.js';
import { finishedCells } from '../src/pages/view.js';
import { renderResultPages } from '../src/pages/result-pages.js';
import { compareResults } from '../src/judge/compare.js';
import { absentFromMergeMessage, measuredTwiceMessage, type MergedParts, mixedRunsMessage, nothingMeasuredMessage, runInfosOf, startSpreadNote } from '../src/judge/merge.js';
import { readMergedParts } from './merged-parts.js';
import { metasOf, testTally } from './test-tally.js';
import { CellTimes } from './cell-times.js';
import { loadResultFile } from '../src/compare/load.js';
import { renderDiffMarkdown } from '../src/pages/diff-markdown.js';
import { resolveTolerances } from '../src/thresholds/tolerances.js';

/** The diff page written next to the result when the run had a baseline. */
export const DIFF_MD = 'speed-matrix-diff.md';
export const DIFF_HTML = 'speed-matrix-diff.html';

/** `outDir`, `thresholdsPath` and `stepSummaryPath` (src/config/settings.ts) win over the environment. */
export interface SpeedMatrixReporterOptions extends SettingsOptions {
  /** where progress lines go; default the Vitest logger */
  log?: (line: string) => void;
  /** the matrix's projects: their tests are tallied in the last line, get a "running" line (quiet) before they carry meta, and are checked by -t filters and merges; default ["matrix", "matrix-sharded"] */
  projects?: string[];
  /** the settings already resolved (withSpeedMatrix does); default resolved from these options and the environment, once */
  settings?: RunSettings;
}

/** True when Vitest runs with -u (snapshot update "all"): tests must not fail on threshold breaches. */
export function isUpdateMode(vitest: Pick<Vitest, 'config'>): boolean {
  return vitest.config.snapshotOptions?.updateSnapshot === 'all';
}

export default class SpeedMatrixReporter implements Reporter {
  private vitest: Vitest | undefined;
  private updating = false;
  private live: SpeedMatrixMeta[] = [];
  private cellTimes = new CellTimes(); // the measured cells' times and the cells left, for the time left
  /** the distinct run infos of the live results, and whether they are of runs that cannot share a page */
  private readonly liveInfos = new Map<string, RunInfo>();
  private liveMixed = false;
  private readonly options: SpeedMatrixReporterOptions;
  /** what this reporter reads of the configuration, resolved once (src/config/settings.ts) */
  readonly settings: RunSettings;
  /** the results folder, resolved once in onInit */
  private outDir = '';
  /** this run's hold on the results folder (src/results/lock.ts), released when the process exits */
  private lock: ResultsLock | undefined;
  /** the last results written whole: when, and which cells and rows they hold */
  private lastWritten: { at: string; keys: Set<string> } | undefined;
  /** a write failed since the last good one (said once per cause) */
  private writeFailure: string | undefined;
  /** the run was stopped by SIGINT or SIGTERM */
  private stoppedBySignal = false;

  constructor(options: SpeedMatrixReporterOptions = {}) {
    this.options = options;
    this.settings = options.settings ?? resolveRunSettings(options);
  }

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
    this.updating = isUpdateMode(vitest);
    this.outDir = resolve(vitest.config.root, this.settings.outDir);
    // before anything is measured: a folder that cannot take the results stops the run now
    if (vitest.projects.some((p) => this.inMatrixProject(p.name))) {
      try {
        checkResultsDir(this.outDir);
        this.lock = lockResultsDir(this.outDir);
      } catch (error) {
        throw asUserError(error, this.settings.debug);
      }
      const lock = this.lock;
      process.once('exit', () => lock.release());
      // Ctrl-C or a SIGTERM reach the whole process group: the test worker may die first, and Vitest
      // then ends the run as failed, not interrupted. Either way the run was stopped: its page stays
      // partial (LLM_BENCH_RESUME continues it). Listening does not stop Vitest's own handler.
      const stopped = () => {
        this.stoppedBySignal = true;
      };
      process.once('SIGINT', stopped);
      process.once('SIGTERM', stopped);
      const was = lock.tookOverFrom;
      if (was) this.log(`${PREFIX} took over the results folder's stale lock (pid ${was.pid}, started ${was.startedAt}, no longer running)`);
    }
  }

  onTestRunStart(): void {
    this.live = [];
    this.cellTimes = new CellTimes();
  }

  onTestModuleCollected(module: TestModule): void {
    if (this.inMatrixProject(module.project.name)) this.cellTimes.collected(module.children.allTests());
  }

  /** a project whose tests are the matrix's cells (the reporter option `projects`, else the defaults) */
  private inMatrixProject(projectName: string): boolean {
    return (this.options.projects ?? ['matrix', 'matrix-sharded']).includes(projectName);
  }

  onTestCaseReady(testCase: TestCase): void {
    // the cells say what they are doing themselves (timestamped phase lines); the reporter's own
    // "running" line, which reaches it after the cell's first lines, only where those are off
    if (!this.settings.quiet) return;
    const meta = testCase.meta().speedMatrix;
    // a cell the test name filter (-t) leaves out is not run: no "running" line for it
    if (testCase.options.mode === 'skip' || testCase.options.mode === 'todo') return;
    if (!meta && !this.inMatrixProject(testCase.project.name)) return;
    if (meta?.kind === 'run') return;
    // named as the matrix's tests are (matrix/define.ts), whether Vitest gave the meta yet or not
    this.log(runningLine((meta && testNameOfMeta(meta)) ?? testCase.name));
  }

  onTestCaseResult(testCase: TestCase): void {
    const meta = testCase.meta().speedMatrix;
    if (!meta) return;
    this.live.push(meta);
    // a merge replays every shard's cells here: no live page of mixed runs either (said once, at the run's end)
    const before = this.liveInfos.size;
    runInfosOf([meta], this.liveInfos);
    if (this.liveInfos.size > before && !this.liveMixed) this.liveMixed = mixedRunsMessage(this.liveInfos) !== undefined;
    const result = this.liveMixed ? undefined : collectResult(this.live, { partial: true });
    if (meta.kind === 'cell') {
      const maxOutput = meta.info?.run.maxOutputTokens ?? result?.info.run.maxOutputTokens;
      this.cellTimes.add(meta.cell, testCase.diagnostic?.()?.duration);
      const progress = result ? this.cellTimes.progress(result) : undefined; // no time left in a merge: it replays finished cells
      this.log(cellLine(meta.cell, result ? finishedCells(result) : 0, progress?.planned, maxOutput, this.vitest?.config.mergeReports ? undefined : progress?.left));
    } else if (meta.kind === 'prefill') {
      this.log(prefillLine(meta.row));
    } else if (meta.kind === 'capacity') {
      this.log(capacityLine(meta.row));
    } else if (meta.kind === 'rate') {
      this.log(rateLine(meta.cell));
    } else if (meta.kind === 'rate-capacity') {
      this.log(rateCapacityLine(meta.row));
    }
    if (result) this.write(result);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, _errors?: unknown, reason?: string): void {
    const unmatched = this.filterMatchedNoCell(testModules);
    if (unmatched !== undefined) {
      this.fail(unmatched);
      return;
    }
    const metas = metasOf(testModules);
    const merged = this.mergedParts(testModules);
    if (metas.length === 0) {
      // a merge of blobs whose matrix files measured nothing (only an empty row group's shard)
      if (merged !== undefined && merged.blobsOfFile.size > 0) this.fail(nothingMeasuredMessage(merged));
      // a matrix run that measured nothing, in a folder it holds (not one another run's lock kept it from): an earlier page is set aside
      else if (merged === undefined && this.lock !== undefined && testModules.some((m) => this.inMatrixProject(m.project.name))) {
        const aside = setAsideEarlierRun(this.resultsFolder(), { paths: [this.settings.resume, this.settings.baseline], root: this.vitest?.config.root ?? process.cwd() });
        if (aside !== undefined) this.log(`${PREFIX} ${aside}`);
      }
      return;
    }
    // a merge of shards that measured different things would be one page of mixed cells
    const infos = runInfosOf(metas);
    const mixed = mixedRunsMessage(infos);
    if (mixed !== undefined) {
      const live = this.lastWritten
        ? ` The page in ${this.resultsFolder()} written as results came in holds only the ${this.lastWritten.keys.size} results before the first of another run, and stays marked partial.`
        : '';
      this.fail(`${mixed}.${live}`);
      return;
    }
    // a merge with a stale blob beside this run's: a cell measured twice, one kept without saying which
    const twice = merged !== undefined ? measuredTwiceMessage(metas, merged) : undefined;
    if (twice !== undefined) {
      this.fail(`${twice}.${this.lastWritten ? ` The page in ${this.resultsFolder()} written as results came in stays marked partial.` : ''}`);
      return;
    }
    // an interrupted run (Ctrl-C, SIGTERM) keeps its page marked partial
    const result = collectResult(metas, { partial: reason === 'interrupted' || this.stoppedBySignal, endedAt: new Date().toISOString() });
    if (!result) {
      this.log(`${PREFIX} no run meta (kind "run") among ${metas.length} results: nothing written`);
      return;
    }
    const paths = this.write(result);
    if (paths) this.log(`${PREFIX} wrote ${paths.mdPath}, ${paths.htmlPath} and ${paths.jsonPath}`);
    else this.failFinalWrite(result);
    if (merged !== undefined) {
      const absent = absentFromMergeMessage(result.incomplete?.missing ?? [], merged);
      if (absent !== undefined) this.fail(absent);
      const spread = startSpreadNote([...infos.values()]);
      if (spread !== undefined) this.log(`${PREFIX} ${spread}`);
    }
    const missing = this.missingThresholds(result);
    if (missing !== undefined) this.log(`${PREFIX} no threshold file at ${missing}: no budgets gated this run (-u at this run's settings writes it)`);
    if (paths) this.writeDiff(result, dirname(paths.jsonPath));
    this.appendStepSummary(result, missing);
    if (this.updating) this.updateThresholdFile(result);
    // the tally Vitest prints after a test run and not after `vitest bench`
    this.log(runEndLine(result, plannedCellKeys(result.info).length, testTally(testModules, (m) => this.inMatrixProject(m.project.name))));
  }

  /**
   * Why the run measured nothing, where a test name filter (-t) left out every test of the matrix and
   * ran no other: a mistyped filter in CI would otherwise pass with no cell run and no page written.
   */
  private filterMatchedNoCell(testModules: ReadonlyArray<TestModule>): string | undefined {
    const pattern = this.vitest?.config.testNamePattern;
    if (pattern === undefined) return undefined;
    // any test that ran (a unit test the filter was meant for) means the filter did its job
    if (testModules.some((m) => [...m.children.allTests()].some((t) => t.result().state !== 'skipped'))) return undefined;
    const tests = testModules.filter((m) => this.inMatrixProject(m.project.name)).flatMap((m) => [...m.children.allTests()]);
    if (tests.length === 0) return undefined;
    // matched, then skipped as they ran (a sweep's points whose decode cells the filter left out)
    const matched = tests.filter((t) => t.options.mode === 'run');
    if (matched.length > 0) {
      const notes = [...new Set(matched.flatMap((t) => { const r = t.result(); return r.state === 'skipped' && r.note ? [r.note] : []; }))];
      return (
        `no cell ran: the test name filter (-t ${String(pattern)}) matched ${matched.length} of the matrix's ${tests.length} tests (${matched.slice(0, 3).map((t) => `"${t.name}"`).join(', ')}), ` +
        `and each skipped itself, so nothing was measured or written${notes.length > 0 ? `: ${notes.slice(0, 2).join('; ')}` : ''}`
      );
    }
    const names = [...new Set(tests.map((t) => t.name))].slice(0, 3).map((n) => `"${n}"`).join(', ');
    return (
      `no cell ran: the test name filter (-t ${String(pattern)}) matched none of the matrix's ${tests.length} tests, so nothing was measured or written. ` +
      `Their names look like ${names} (a context is written 0, 1K, 32K, with K in upper case)`
    );
  }

  /** What a `vitest --merge-reports` holds (merged-parts.ts); undefined in a run. */
  private mergedParts(testModules: ReadonlyArray<TestModule>): MergedParts | undefined {
    const given = this.vitest?.config.mergeReports;
    return given ? readMergedParts(given, this.vitest?.config.root ?? process.cwd(), testModules, (m) => this.inMatrixProject(m.project.name)) : undefined;
  }

  /** With a baseline (LLM_BENCH_BASELINE, or the one the cells were compared with): the diff page. */
  private writeDiff(result: SpeedMatrixResult, outDir: string): void {
    const configured = this.settings.baseline ?? result.info.baselinePath;
    if (!configured) return;
    const path = this.resolvePath(configured);
    if (!existsSync(path)) {
      this.log(`${PREFIX} baseline ${path} not found here: no diff page (the cells' own verdicts are in the page)`);
      return;
    }
    try {
      const base = loadResultFile(path, 'baseline');
      const thresholdsPath = this.thresholdsPath(result);
      const resolvedThresholds = thresholdsPath ? this.resolvePath(thresholdsPath) : undefined;
      const thresholds =
        resolvedThresholds && existsSync(resolvedThresholds) ? parseThresholds(readFileSync(resolvedThresholds, 'utf8'), resolvedThresholds) : undefined;
      const comparison = compareResults(base, result, resolveTolerances(thresholds?.tolerances?.regression));
      const diffPath = join(outDir, DIFF_MD);
      writeFileAtomic(diffPath, renderDiffMarkdown({ base: base.info, next: result.info, comparison, baseLabel: configured }));
      // the same two runs drawn: the baseline and this run overlaid, with each cell's ratios
      const diffHtml = join(outDir, DIFF_HTML);
      writeFileAtomic(diffHtml, renderCompareHtml([{ label: 'baseline', result: base }, { label: 'this run', result }]));
      this.log(`${PREFIX} wrote ${diffPath} and ${diffHtml}: ${comparison.counts.regressed} regressed, ${comparison.counts.improved} improved`);
    } catch (error) {
      this.fail(`could not write the diff page against ${path}: ${(error as Error).message}`);
    }
  }

  /** The threshold file this run was to be gated by, where there is none (-u writes it: not missing then). */
  private missingThresholds(result: SpeedMatrixResult): string | undefined {
    const configured = this.thresholdsPath(result);
    if (this.updating || configured === undefined) return undefined;
    return existsSync(this.resolvePath(configured)) ? undefined : configured;
  }

  /** GitHub Actions: append the grid and the failures to the job summary. */
  private appendStepSummary(result: SpeedMatrixResult, missing: string | undefined): void {
    const path = this.settings.stepSummaryPath;
    if (!path) return;
    try {
      appendFileSync(path, `${renderStepSummary(result, missing !== undefined ? { missingThresholds: missing } : {})}\n`);
    } catch (error) {
      this.fail(`could not append to the step summary ${path}: ${(error as Error).message}`);
    }
  }

  private write(result: SpeedMatrixResult): { jsonPath: string; mdPath: string; htmlPath: string } | undefined {
    try {
      const paths = writeResults(this.resultsFolder(), result, renderResultPages(result));
      this.lastWritten = { at: new Date().toISOString(), keys: new Set(finishedKeys(result)) };
      if (this.writeFailure !== undefined) this.log(`${PREFIX} results written again after the failure (${this.writeFailure})`);
      this.writeFailure = undefined;
      return paths;
    } catch (error) {
      const message = (error as Error).message;
      // said once per cause, not after every cell
      if (message !== this.writeFailure) this.fail(`could not write results: ${message}`);
      else process.exitCode = 1;
      this.writeFailure = message;
      return undefined;
    }
  }

  /** the results folder resolved in onInit (without it, as onInit would resolve it from the working folder) */
  private resultsFolder(): string {
    return this.outDir || resolve(process.cwd(), this.settings.outDir);
  }

  /** The run's last write failed: say what the files left in the folder hold, and what they miss. */
  private failFinalWrite(result: SpeedMatrixResult): void {
    const dir = this.resultsFolder();
    const keys = finishedKeys(result);
    const last = this.lastWritten;
    const missing = keys.filter((k) => !last?.keys.has(k));
    const held = last
      ? `the files in ${dir} are those written at ${last.at} (marked partial), holding ${keys.length - missing.length} of ${keys.length} finished cells and rows`
      : `no results file of this run was written to ${dir}`;
    this.fail(
      `the run ended but its final results could not be written (${this.writeFailure ?? 'unknown cause'}): ${held}; ` +
        `missing from them: ${missing.length > 0 ? missing.join(', ') : 'none (only the final marks)'}. ` +
        'Free space or set LLM_BENCH_OUT to another folder; measure the missing ones with LLM_BENCH_RESUME=<that speed-matrix.json>',
    );
  }

  private updateThresholdFile(result: SpeedMatrixResult): void {
    const configured = this.thresholdsPath(result);
    if (!configured) {
      this.log(`${PREFIX} -u: no threshold file to update (set LLM_BENCH_THRESHOLDS or the run's thresholdsPath)`);
      return;
    }
    const path = this.resolvePath(configured);
    try {
      let existing: ThresholdsFile | undefined;
      if (existsSync(path)) existing = parseThresholds(readFileSync(path, 'utf8'), path);
      const update = this.settings.update;
      if ('error' in update) throw new Error(update.error);
      const { file, moves, kept, notWritten } = updateThresholds(result, existing, {
        ...(update.headroom !== undefined ? { headroom: update.headroom } : {}),
        ...(update.all ? { force: true } : {}),
      });
      writeThresholds(path, file);
      this.log(
        `${PREFIX} updated ${path}: ${moves.length} budget${moves.length === 1 ? '' : 's'} moved, ${kept} kept (met, within noise)` +
          `${update.all ? ' (LLM_BENCH_UPDATE=all)' : ''}${moves.length > 0 ? `:\n${moves.map((m) => `  ${m}`).join('\n')}` : ''}`,
      );
      if (notWritten.length > 0) {
        this.log(
          `${PREFIX} -u did not write ${notWritten.length} cell${notWritten.length === 1 ? '' : 's'} or row${notWritten.length === 1 ? '' : 's'} that failed or was Client-limited (a broken measurement would gate later runs on the breakage); fix the cause and run -u again:\n` +
            notWritten.map((l) => `  ${l}`).join('\n'),
        );
      }
    } catch (error) {
      this.fail(`-u: ${path} left unchanged: ${(error as Error).message}`);
    }
  }

  /** the threshold file: the reporter option, else $LLM_BENCH_THRESHOLDS (both in the settings), else the run's own */
  private thresholdsPath(result: SpeedMatrixResult): string | undefined {
    return this.settings.thresholdsPath ?? result.info.thresholdsPath;
  }

  private resolvePath(path: string): string {
    return resolve(this.vitest?.config.root ?? process.cwd(), path);
  }

  private log(line: string): void {
    if (this.options.log) this.options.log(line);
    else if (this.vitest) this.vitest.logger.log(line);
    else process.stdout.write(`${line}\n`);
  }

  private fail(message: string): void {
    const line = `${PREFIX} ${message}`;
    if (this.options.log) this.options.log(line);
    else if (this.vitest) this.vitest.logger.error(line);
    else process.stderr.write(`${line}\n`);
    process.exitCode = 1;
  }
}
