/**
 * Body of one generated cell test: run the cell (or record it Over capacity and skip), compute
 * its figures and status, store the result in task meta, then assert status and budgets.
 */
import type { TestContext } from 'vitest';
import { runCell } from '../load/cell.js';
import { computeCellFigures } from '../metrics/figures.js';
import { cellStatuses } from '../metrics/status.js';
import type { CellResult } from '../results/types.js';
import { evaluateCell } from '../thresholds/evaluate.js';
import type { PlannedCell } from './plan.js';
import type { RunContext } from './context.js';
import { progress } from './progress.js';

export function createCellRunner(run: RunContext) {
  const { cfg, opened, info } = run;
  return async function runCellTest(cell: PlannedCell, tc: TestContext): Promise<void> {
    if (cell.overCapacity) {
      const result: CellResult = {
        context: cell.context,
        contextLabel: cell.contextLabel,
        concurrency: cell.concurrency,
        status: 'over-capacity',
        statuses: ['over-capacity'],
        evidence: { capacity: cell.overCapacity },
        finishedAt: new Date().toISOString(),
      };
      tc.task.meta.speedMatrix = { kind: 'cell', cell: result, info };
      const { requiredTokens, kvCapacityTokens } = cell.overCapacity;
      tc.skip(
        `Over capacity: ${cell.concurrency} × (${cell.context} + ${cfg.matrix.maxOutputTokens}) = ${requiredTokens.toLocaleString('en-US')} tokens > KV capacity ${kvCapacityTokens.toLocaleString('en-US')}`,
      );
      return;
    }

    const prompt = await run.prompts.rowPrompt(cell.context, cfg.matrix.maxOutputTokens);
    const prompts = run.prompts.forCell(prompt, cell.concurrency);
    const say = (m: string) => progress(`${cell.key}: ${m}`);
    const raw = await runCell(opened.session, {
      context: cell.context,
      concurrency: cell.concurrency,
      promptFor: (w, i) => prompts.prompt(w, i),
      scoutPrompts: prompts.scoutPrompts(),
      windowMs: cfg.matrix.windowS * 1000,
      gateTimeoutMs: cfg.timeouts.gateMs + cfg.timeouts.gatePerContextTokenMs * cell.context * cell.concurrency,
      gateSettleMs: cfg.timeouts.gateSettleMs,
      drainTimeoutMs: cfg.timeouts.drainMs,
      metricsIntervalMs: cfg.metricsIntervalMs,
      signal: tc.signal,
      onPhase: say,
    });

    const figures = computeCellFigures({
      timelines: raw.timelines,
      windowStartMs: raw.windowStartMs,
      windowEndMs: raw.windowEndMs,
      metricsSamples: raw.samples,
    });
    const verdict = cellStatuses({
      concurrency: cell.concurrency,
      figures,
      timelines: raw.timelines,
      samples: raw.samples,
      gateTimedOut: raw.gate.timedOut,
      gateWaitedMs: raw.gate.waitedMs,
      drainTimedOut: raw.drain.timedOut,
      drainWaitedMs: raw.drain.waitedMs,
      loopDelayMs: raw.loopDelayMs,
      loopDelayBoundMs: cfg.clientLimitedLoopDelayMs,
    });
    const result: CellResult = {
      context: cell.context,
      contextLabel: cell.contextLabel,
      concurrency: cell.concurrency,
      status: verdict.status,
      statuses: verdict.statuses,
      evidence: verdict.evidence,
      figures,
      ...(raw.loopDelayMs ? { clientEventLoopDelayMs: raw.loopDelayMs } : {}),
      ...(prompt.promptTokens !== undefined ? { promptTokens: prompt.promptTokens } : {}),
      finishedAt: new Date().toISOString(),
    };

    const failures: string[] = [];
    const budget = run.thresholds.cells[cell.key];
    failures.push(...evaluateCell(cell.key, result, budget));
    if (result.status === 'client-limited' && !cfg.allowClientLimited) {
      const ev = result.evidence.clientLimited;
      failures.push(
        `${cell.key} is Client-limited: the load generator's event-loop delay p99 was ${ev?.eventLoopDelayP99Ms.toFixed(1)} ms (bound ${ev?.boundMs} ms), so its figures may be wrong; run fewer streams per process or set allowClientLimited`,
      );
    }
    if (figures.outputTokens === 0 && result.status !== 'client-limited') {
      failures.push(`${cell.key} measured no output tokens in its window (${figures.failedRequests} failed requests)`);
    }
    result.thresholdFailures = failures;
    tc.task.meta.speedMatrix = { kind: 'cell', cell: result, info };
    if (failures.length > 0 && !run.updating) {
      throw new Error(failures.join('\n'));
    }
  };
}
