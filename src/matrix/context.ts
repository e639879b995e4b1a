import type { ResolvedSuite } from '../config/resolve.js';
import type { CellResult, RateCellResult, RunInfo } from '../shapes/result.js';
import type { LoadedThresholds } from '../thresholds/load.js';
import type { OpenedRun } from './open.js';
import type { RunPrompts } from './prompts.js';
import type { LoadedBaseline } from '../compare/baseline.js';
import type { RunWorkload } from './workload-run.js';
import type { RequestsFile } from '../results/requests-file.js';

/** What every generated test of one run shares. */
export interface RunContext {
  cfg: ResolvedSuite;
  opened: OpenedRun;
  info: RunInfo;
  thresholds: LoadedThresholds;
  /** `-u`: thresholds are being rewritten, so a breach does not fail the test */
  updating: boolean;
  /** LLM_BENCH_DEBUG=1: a failing cell keeps its stack trace (src/errors.ts CellFailure) */
  debug?: boolean;
  prompts: RunPrompts;
  /** the run's workload (synthetic by default), opened once */
  workload: RunWorkload;
  /** LLM_BENCH_BASELINE: the run every cell is compared with */
  baseline?: LoadedBaseline;
  /** this file's finished cells by key, for the capacity search that follows them */
  results: Map<string, CellResult>;
  /** this file's finished open-loop rate cells by key ("8K@2"), for the rate capacity search */
  rateResults?: Map<string, RateCellResult>;
  /** LLM_BENCH_REQUESTS_FILE: every measured request, one line each, appended by each cell */
  requestsFile?: RequestsFile;
}
