/**
 * Body of one generated prefill test: one cold request with max_tokens = 1; prompt tok/s =
 * server-counted prompt tokens / TTFT. Its prompt is the decode row's context, so when the context
 * is also a decode row this request warms that row's cache ("measured during decode warm-up").
 *
 * LLM_BENCH_REPEAT=n sends n such requests, one after another, each with its own cold prompt
 * (`RunPrompts.rowPrompt` variants); the row prompt goes last, so it is the one that warms the
 * decode row. The row's figures are the medians (src/metrics/repeat-figures.ts `prefillRepeats`).
 */
import { CellFailure } from '../errors.js';
import type {} from './task-meta.js';
import type { TestContext } from 'vitest';
import type { RequestTimeline } from '../shapes/timeline.js';
import { runPrefillRequest } from '../load/prefill.js';
import { calibrationRecord } from '../prompts/calibrate.js';
import { prefillFigures } from '../metrics/prefill-figures.js';
import { MATRIX_TTFT_FROM } from '../metrics/request.js';
import type { PrefillRowResult } from '../shapes/result.js';
import { judgePrefillRow, prefillStatus, type PrefillRules } from '../judge/index.js';
import type { PlannedPrefill } from './plan.js';
import type { RunContext } from './context.js';
import { progress } from './progress.js';
import { formatCount } from '../text/format.js';
import { prefillRepeats, type PrefillAttempt } from '../metrics/repeat-figures.js';

/** why a prefill request gave no figures */
function failureText(t: RequestTimeline): string {
  if (t.end?.kind === 'error') return `${t.end.code}: ${t.end.message}`;
  if (t.end?.kind === 'aborted') return 'aborted (the run was stopped or the test timed out)';
  return 'no first token or no prompt token count';
}

export function createPrefillRunner(run: RunContext) {
  return async function runPrefillTest(row: PlannedPrefill, tc: TestContext): Promise<void> {
    const count = run.cfg.repeat;
    const measured: PrefillAttempt[] = [];
    let error: string | undefined;
    /** the row's own prompt (variant 1, the last one sent) */
    let rowCalibration: ReturnType<typeof calibrationRecord> | undefined;
    // repeats with their own prompts first; the row prompt (variant 1) last
    for (let variant = count; variant >= 1; variant--) {
      const prompt = await run.prompts.rowPrompt(row.context, 1, variant);
      if (variant === 1) rowCalibration = calibrationRecord(prompt);
      const which = count > 1 ? ` (${count - variant + 1} of ${count})` : '';
      progress(`prefill ${row.key}: one cold request of ${formatCount(prompt.promptTokens ?? row.context)} prompt tokens${which}`);
      const t = await runPrefillRequest(run.opened.session, row.context, run.prompts.forCell(prompt, 1).scoutPrompts()[0]!, tc.signal, variant);
      // a server without usage: the prompt's count by the local tokenizer that sized it (marked)
      const localCount = t.promptTokens === undefined && prompt.countedBy === 'local-tokenizer';
      if (localCount) t.promptTokens = prompt.promptTokens;
      // an aborted request may still have its figures (first token and usage came); it counts as failed
      const measuredFigures = prefillFigures(t, MATRIX_TTFT_FROM);
      const figures = measuredFigures && localCount ? { ...measuredFigures, promptTokensFrom: 'local-tokenizer' as const } : measuredFigures;
      const ok = t.end?.kind === 'done' && figures !== undefined;
      if (!ok) error ??= failureText(t);
      measured.push({ ok, ...(figures ? { figures } : {}) });
      if (tc.signal.aborted) break;
    }
    const { figures, repeats } = prefillRepeats(measured);
    const result: PrefillRowResult = {
      context: row.context,
      contextLabel: row.key,
      status: prefillStatus(repeats),
      warmsDecodeRow: run.cfg.matrix.contexts.includes(row.context),
      ...(rowCalibration ? { calibration: rowCalibration } : {}),
      ...(figures ? { figures } : {}),
      ...(error !== undefined ? { error: count > 1 ? `${repeats.failed} of ${repeats.count} requests failed; first: ${error}` : error } : {}),
      ...(count > 1 ? { repeats } : {}),
      finishedAt: new Date().toISOString(),
    };
    finishPrefill(run, row.key, result, tc);
  };
}

/** The rules a prefill row of this run is judged against (src/judge/judge-prefill.ts). */
function prefillRules(run: RunContext, key: string): PrefillRules {
  const budget = run.thresholds.prefill[key];
  return {
    ...(budget ? { budget } : {}),
    ...(run.thresholds.tolerances ? { tolerances: run.thresholds.tolerances } : {}),
    ...(run.baseline ? { baseline: run.baseline } : {}),
  };
}

/**
 * A prefill row's verdicts (src/judge/judge-prefill.ts), stored on the row and enforced: a failed
 * request fails the row even under `-u`; its budget and baseline lines fail it except under `-u`.
 * The row goes to the reporter (task meta). Used for measured rows and for rows taken from a
 * resumed run.
 */
export function finishPrefill(run: RunContext, key: string, result: PrefillRowResult, tc: TestContext): void {
  const judgement = judgePrefillRow(key, result, prefillRules(run, key));
  result.thresholdFailures = judgement.thresholdFailures;
  // a kept (resumed) row may carry another run's baseline verdicts
  if (judgement.baselineFailures) result.baselineFailures = judgement.baselineFailures;
  else delete result.baselineFailures;
  tc.task.meta.speedMatrix = { kind: 'prefill', row: result, info: run.info };
  if (judgement.rowFailure !== undefined) throw new CellFailure(judgement.rowFailure, run.debug === true);
  const all = [...judgement.thresholdFailures, ...(judgement.baselineFailures ?? [])];
  if (all.length > 0 && !run.updating) throw new CellFailure(all, run.debug === true);
}
