/**
 * The load of one cell: which requests its workers (or its schedule) send, what warms it, and the
 * workload figures of what was sent. The synthetic workload (the method's own) sends the row's
 * calibrated prompt with a per-request tail (src/prompts/cell-prompts.ts); the other workloads
 * send what src/workload builds (issue 23): lengths, sharedPrefix and file requests
 * (workload/cell-requests.ts), multi-turn conversations (workload/conversation.ts, run by
 * load/conversations.ts). cell-test.ts and rate-test.ts measure through it, so neither knows which
 * workload runs; the workload figures are computed here, from metrics/.
 */
import type { CalibratedPrompt } from '../prompts/calibrate.js';
import type { CellRequestInput } from '../load/session.js';
import type { CellConversations, RequestTurn } from '../load/conversations.js';
import type { MetricsSample, ServerRequestTimings } from '../shapes/engine.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { WorkloadFigures } from '../shapes/result.js';
import { lengthSummary, sentLengths } from '../metrics/lengths.js';
import { prefixCacheFigures } from '../metrics/prefix-cache.js';
import { computeTurnFigures } from '../metrics/turns.js';
import { MATRIX_TTFT_FROM } from '../metrics/request.js';
import { workloadLengthProblem, workloadRequests } from '../workload/cell-requests.js';
import { prepareConversations } from '../workload/conversation.js';
import { lengthDraws } from '../workload/draw.js';
import { renderMessages, seededOrder } from '../workload/prompt-file.js';
import type { RunContext } from './context.js';
import { modelLengthProblem } from './prompts.js';

/** What a measured run of the cell gives the workload figures. */
export interface MeasuredLoad {
  timelines: readonly RequestTimeline[];
  samples: readonly MetricsSample[];
  windowStartMs: number;
  windowEndMs: number;
  serverTimings?: ReadonlyMap<string, ServerRequestTimings>;
  /** multi-turn: each request's turn */
  turns?: ReadonlyMap<string, RequestTurn>;
}

export interface CellLoad {
  /** worker `worker`'s request number `index` (rate cells: worker 0); unique indices give unique requests */
  requestFor(worker: number, index: number): CellRequestInput;
  /** sent one after another with max_tokens = 1 before the workers start */
  scouts: CellRequestInput[];
  /** multi-turn: the conversations the workers run instead of `requestFor` */
  conversations?: CellConversations;
  /** the synthetic workload: the row's calibrated prompt (what the page's prompt tokens and calibration come from) */
  row?: CalibratedPrompt;
  /** the workload figures of one measured run; undefined for the synthetic workload */
  figures(measured: MeasuredLoad): WorkloadFigures | undefined;
}

export interface CellLoadAt {
  context: number;
  concurrency: number;
  /** the cell's key ("3K/4", "3K@2") and repeat (0-based): a workload's texts are the cell's own, each repeat's own */
  key: string;
  repeat: number;
  /** synthetic: added to every request index (so no repeat or rate cell resends another's prompt) */
  requestBase: number;
  /** the requests the cell is expected to send at most (rate cells: the schedule's length), sized before it starts */
  expectedRequests: number;
}

/** Input and output lengths sent, the prefix-cache hit rate, and for multi-turn the turns. */
function workloadFigures(m: MeasuredLoad): WorkloadFigures {
  const sent = sentLengths(m.timelines, m.windowStartMs, m.windowEndMs);
  const input = lengthSummary(sent.input);
  const output = lengthSummary(sent.output);
  const cache = prefixCacheFigures(m);
  const turns = m.turns ? computeTurnFigures({ timelines: m.timelines, windowStartMs: m.windowStartMs, windowEndMs: m.windowEndMs, turnOf: m.turns, ttftFrom: MATRIX_TTFT_FROM }) : [];
  return {
    ...(input ? { inputTokens: input } : {}),
    ...(output ? { outputTokens: output } : {}),
    ...(cache ? { prefixCache: cache } : {}),
    ...(turns.length > 0 ? { turns } : {}),
  };
}

/**
 * Why a row's cells cannot be sent at any concurrency or rate, where its requests would not fit
 * the server's max model length: a synthetic row's prompt plus the max output (prompts.ts
 * modelLengthProblem, the check rowPrompt makes), a workload's by its own check, the one its cells
 * make (workload/cell-requests.ts workloadLengthProblem; a file skips its too-long lines instead).
 * Decided before Over capacity, so a row too long for the model reads Not run at every column.
 */
export function rowLengthProblem(run: RunContext, context: number): string | undefined {
  const w = run.workload.workload;
  const maxLen = run.opened.session.facts.maxModelLen?.value;
  if (w.kind !== 'synthetic') return workloadLengthProblem(w, run.cfg.matrix.maxOutputTokens, maxLen);
  return modelLengthProblem(context, run.cfg.matrix.maxOutputTokens, maxLen);
}

/**
 * The cell's load. Throws (a ConfigError, an unreachable server) when its prompts cannot be
 * sized: the caller stores the cell as not run with the reason.
 */
export async function openCellLoad(run: RunContext, at: CellLoadAt): Promise<CellLoad> {
  const w = run.workload.workload;
  const session = run.opened.session;
  const tag = at.repeat > 0 ? `${at.key}#${at.repeat + 1}` : at.key;
  if (w.kind === 'synthetic') {
    const row = await run.prompts.rowPrompt(at.context, run.cfg.matrix.maxOutputTokens);
    const prompts = run.prompts.forCell(row, at.concurrency);
    return { requestFor: (worker, i) => prompts.prompt(worker, at.requestBase + i), scouts: prompts.scoutPrompts(), row, figures: () => undefined };
  }
  if (w.kind === 'multiTurn') {
    const think = lengthDraws(w.thinkMs, w.seed, 'think');
    const conversations = await prepareConversations({
      workload: w,
      tag: `${session.runId} ${tag}`,
      size: (n, prefix) => run.prompts.sizer.calibrate({ targetTokens: n, prefix }).then((p) => p.text),
      render: renderMessages,
      // conversation k's think times are draws k·(T − 1) … of one seeded stream
      think: (k, t) => think(k * Math.max(1, w.turns - 1) + (t - 2)),
      maxTokens: session.maxOutputTokens,
      ...(session.facts.maxModelLen ? { maxModelLen: session.facts.maxModelLen.value } : {}),
    });
    return {
      requestFor: () => {
        throw new Error('a multi-turn cell sends its conversations, not requestFor');
      },
      scouts: [],
      conversations,
      figures: workloadFigures,
    };
  }
  const file = run.workload.file;
  const requests = workloadRequests({
    workload: w,
    runId: session.runId,
    cellKey: tag,
    maxOutputTokens: session.maxOutputTokens,
    ...(session.facts.maxModelLen ? { maxModelLen: session.facts.maxModelLen.value } : {}),
    sizer: run.prompts.sizer,
    ...(w.kind === 'lengths' ? { draws: { input: lengthDraws(w.input, w.seed, 'in'), output: lengthDraws(w.output, w.seed, 'out') } } : {}),
    ...(w.kind === 'file' && file ? { file: { prompts: file, order: seededOrder(file.lines.length, w.seed), render: renderMessages } } : {}),
  });
  await requests.prepare(at.expectedRequests);
  return { requestFor: (worker, i) => requests.requestFor(worker, i), scouts: requests.scoutRequests(), figures: workloadFigures };
}
