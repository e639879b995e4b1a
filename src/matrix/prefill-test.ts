/**
 * Body of one generated prefill test: one cold request with max_tokens = 1; prompt tok/s =
 * server-counted prompt tokens / TTFT. Its prompt is the decode row's context, so when the context
 * is also a decode row this request warms that row's cache ("measured during decode warm-up").
 */
import type { TestContext } from 'vitest';
import { runPrefillRequest } from '../load/prefill.js';
import { prefillFigures } from '../metrics/status.js';
import type { PrefillRowResult } from '../results/types.js';
import { evaluatePrefill } from '../thresholds/evaluate.js';
import type { PlannedPrefill } from './plan.js';
import type { RunContext } from './context.js';
import { progress } from './progress.js';
import { baselinePrefillFailures } from '../compare/baseline.js';

export function createPrefillRunner(run: RunContext) {
  return async function runPrefillTest(row: PlannedPrefill, tc: TestContext): Promise<void> {
    const prompt = await run.prompts.rowPrompt(row.context, 1);
    progress(`prefill ${row.key}: one cold request of ${prompt.promptTokens ?? row.context} prompt tokens`);
    const t = await runPrefillRequest(run.opened.session, row.context, run.prompts.forCell(prompt, 1).scoutPrompts()[0]!, tc.signal);
    const figures = prefillFigures(t, 'sent-headers');
    const failed = t.end?.kind !== 'done' || figures === undefined;
    const result: PrefillRowResult = {
      context: row.context,
      contextLabel: row.key,
      status: failed ? 'errors' : 'valid',
      ...(figures ? { figures } : {}),
      ...(failed
        ? { error: t.end?.kind === 'error' ? `${t.end.code}: ${t.end.message}` : 'no first token or no prompt token count' }
        : {}),
      finishedAt: new Date().toISOString(),
    };
    const failures = evaluatePrefill(row.key, result, run.thresholds.prefill[row.key]);
    result.thresholdFailures = failures;
    const regressions = run.baseline ? baselinePrefillFailures(run.baseline, result) : [];
    if (run.baseline) result.baselineFailures = regressions;
    tc.task.meta.speedMatrix = { kind: 'prefill', row: result, info: run.info };
    if (failed) throw new Error(`prefill ${row.key} failed: ${result.error}`);
    const all = [...failures, ...regressions];
    if (all.length > 0 && !run.updating) throw new Error(all.join('\n'));
  };
}
