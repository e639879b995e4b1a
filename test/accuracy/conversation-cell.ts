/**
 * A multiTurn cell against the sim through the product's pieces: prepareConversations, its prompts
 * sized by the run's calibrator, then runCell's conversation workers (multi-turn.test.ts,
 * active-think.test.ts).
 */
import { runCell, type CellRun } from '../../src/load/cell.js';
import { PromptCalibrator } from '../../src/prompts/calibrate.js';
import { prepareConversations, type MultiTurnWorkload } from '../../src/workload/conversation.js';
import type { OpenedAccuracyRun } from './harness.js';

export interface ConversationCellOptions {
  workload: MultiTurnWorkload;
  concurrency: number;
  /** the think time after each reply, ms */
  thinkMs: number;
  maxTokens: number;
  windowMs: number;
  /** tells this cell's conversations apart from another's of the same run (their prompts are unique to it) */
  tag: string;
}

export async function runConversationCell(run: OpenedAccuracyRun, o: ConversationCellOptions): Promise<CellRun> {
  const { session } = run.opened;
  const calibrator = PromptCalibrator.forAdapter({ adapter: session.adapter, target: session.target, facts: session.facts, endpoint: session.endpoint });
  const conversations = await prepareConversations({
    workload: o.workload,
    tag: o.tag,
    size: (targetTokens, prefix) => calibrator.calibrate({ targetTokens, prefix }).then((p) => p.text),
    render: (m) => m.map((x) => `${x.role}: ${x.content}\n`).join(''),
    think: () => o.thinkMs,
    maxTokens: o.maxTokens,
  });
  return runCell(session, {
    context: o.workload.systemTokens + o.workload.userTokens,
    concurrency: o.concurrency,
    promptFor: () => {
      throw new Error('a conversation cell never asks promptFor');
    },
    scoutPrompts: [],
    windowMs: o.windowMs,
    gateTimeoutMs: 10_000,
    gateSettleMs: 200,
    drainTimeoutMs: 10_000,
    metricsIntervalMs: 500,
    conversations,
  });
}
