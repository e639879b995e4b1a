/**
 * The requests of one cell for the workloads `lengths`, `sharedPrefix` and `file` (issue 23), for
 * closed-loop cells (`runCell`'s `promptFor(worker, i)`) and open-loop rate cells (`runRateCell`'s
 * `promptFor(i)`: pass worker 0). One factory, `workloadRequests(options)`; each kind lives in a
 * file of its own (lengths-requests.ts, shared-prefix-requests.ts, file-requests.ts).
 *
 * The life of a cell's requests:
 * 1. `await requests.prepare(count)` before the cell runs: every calibration and count that
 *    requests 0 … count−1 need is done here (the only step that talks to the server);
 * 2. `requests.scoutRequests()` is the cell's scout (runCell sends them with max_tokens = 1);
 * 3. `requests.requestFor(worker, i)` is request i of the cell: synchronous, cheap (a rate cell
 *    calls it at each due time), and the same for the same (workload, seed, run, cell, i).
 *    Each kind's file says what a request beyond the prepared count is; every kind answers one.
 *
 * Every text is unique to the run and the cell (the run id and the cell key are in it), so a
 * cell's first use of any prefix is cold, as the synthetic cells' are.
 */
import { ConfigError } from '../errors.js';
import type { Workload } from '../shapes/workload.js';
import type { CellRequests, WorkloadRequestsOptions } from './request-kit.js';
import { fileRequests } from './file-requests.js';
import { firstTurnProblem } from './conversation.js';
import { lengthsProblem, lengthsRequests } from './lengths-requests.js';
import { sharedPrefixProblem, sharedPrefixRequests } from './shared-prefix-requests.js';

export type { CellRequests, CellWorkload, PromptSizer, RequestFileSource, RequestLengthDraws, WorkloadRequestsOptions } from './request-kit.js';

/**
 * Why no request of a workload's row fits the server's max model length, at any concurrency or
 * rate: the lengths workload's longest request, sharedPrefix's every request, a multiTurn
 * conversation's first turn (each kind's own check, the one its cells make). Undefined where they
 * fit, where the length is unknown, and for a file (its too-long lines are skipped, one by one) and
 * the synthetic rows (matrix/prompts.ts modelLengthProblem).
 */
export function workloadLengthProblem(w: Workload, maxOutputTokens: number, maxModelLen: number | undefined): string | undefined {
  switch (w.kind) {
    case 'lengths':
      return lengthsProblem(w, maxModelLen);
    case 'sharedPrefix':
      return sharedPrefixProblem(w, maxOutputTokens, maxModelLen);
    case 'multiTurn':
      return firstTurnProblem(w, maxOutputTokens, maxModelLen);
    default:
      return undefined;
  }
}

/** The requests of one cell of a non-synthetic, non-multi-turn workload; see the file comment. */
export function workloadRequests(options: WorkloadRequestsOptions): CellRequests {
  if (!Number.isInteger(options.maxOutputTokens) || options.maxOutputTokens < 1) {
    throw new ConfigError(`workload requests: maxOutputTokens must be a whole number ≥ 1 (got ${options.maxOutputTokens}); fix LLM_BENCH_MAX_TOKENS.`);
  }
  const w = options.workload;
  switch (w.kind) {
    case 'lengths': {
      if (!options.draws) throw new Error('workloadRequests: a lengths workload needs `draws` (lengthDraws of its input and output distributions).');
      return lengthsRequests(w, options, options.draws);
    }
    case 'sharedPrefix':
      return sharedPrefixRequests(w, options);
    case 'file': {
      if (!options.file) throw new Error('workloadRequests: a file workload needs `file` (the read PromptFile, its seeded order and renderMessages).');
      return fileRequests(w, options, options.file);
    }
    default:
      throw new Error(`workloadRequests: workload kind "${(w as Workload).kind}" has no cell requests here (synthetic: RunPrompts; multiTurn: its conversations).`);
  }
}
