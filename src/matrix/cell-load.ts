/**
 * The load of one cell: which requests its workers (or its schedule) send, what warms it, and the
 * workload figures of what was sent. The synthetic workload (the method's own) sends the row's
 * calibrated prompt with a per-request tail (src/prompts/cell-prompts.ts); the other workloads
 * send what src/workload builds (issue 23). cell-test.ts and rate-test.ts measure through it, so
 * neither knows which workload runs.
 */
import type { CalibratedPrompt } from '../prompts/calibrate.js';
import type { CellRequestInput } from '../load/session.js';
import type { MetricsSample } from '../shapes/engine.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { WorkloadFigures } from '../shapes/result.js';
import type { RunContext } from './context.js';

/** What a measured run of the cell gives the workload figures. */
export interface MeasuredLoad {
  timelines: readonly RequestTimeline[];
  samples: readonly MetricsSample[];
  windowStartMs: number;
  windowEndMs: number;
}

export interface CellLoad {
  /** worker `worker`'s request number `index` (rate cells: worker 0); unique indices give unique requests */
  requestFor(worker: number, index: number): CellRequestInput;
  /** sent one after another with max_tokens = 1 before the workers start */
  scouts: CellRequestInput[];
  /** the synthetic workload: the row's calibrated prompt (what the page's prompt tokens and calibration come from) */
  row?: CalibratedPrompt;
  /** the workload figures of one measured run; undefined for the synthetic workload */
  figures(measured: MeasuredLoad): WorkloadFigures | undefined;
}

export interface CellLoadAt {
  context: number;
  concurrency: number;
  /** the requests the cell is expected to send at most (rate cells: the schedule's length), sized before it starts */
  expectedRequests: number;
}

/**
 * The cell's load. Throws (a ConfigError, an unreachable server) when its prompts cannot be
 * sized: the caller stores the cell as not run with the reason.
 */
export async function openCellLoad(run: RunContext, at: CellLoadAt): Promise<CellLoad> {
  const row = await run.prompts.rowPrompt(at.context, run.cfg.matrix.maxOutputTokens);
  const prompts = run.prompts.forCell(row, at.concurrency);
  return {
    requestFor: (w, i) => prompts.prompt(w, i),
    scouts: prompts.scoutPrompts(),
    row,
    figures: () => undefined,
  };
}
