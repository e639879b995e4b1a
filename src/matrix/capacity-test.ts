/**
 * Body of a row's "capacity <context>" test (runs with an SLO, after the row's cells): judge the
 * row's columns against the SLO, search between the last passing and the first failing
 * concurrency with adaptive cells (src/slo/capacity.ts searchCapacity), judge the row (its
 * capacity, budget and baseline: src/judge/judge-capacity.ts), then store the row (and the
 * adaptive cells) for the reporter and throw when it fails.
 */
import { CellFailure } from '../errors.js';
import type {} from './task-meta.js';
import type { TestContext } from 'vitest';
import { cellKey, contextLabel } from '../shapes/labels.js';
import type { CellResult } from '../shapes/result.js';
import { searchCapacity, type Judged } from '../slo/capacity.js';
import { judgedOf } from '../judge/capacity-row.js';
import { describeCapacity } from '../text/capacity-line.js';
import { judgeCapacityRow, sloVerdict, unmeasuredVerdict } from '../judge/index.js';
import { rowLengthProblem } from './cell-load.js';
import { measureCell, overCapacityResult } from './cell-test.js';
import type { RunContext } from './context.js';
import { planCell } from './plan.js';
import { progress } from './progress.js';
import { largestRequests } from './workload-run.js';

export function createCapacityRunner(run: RunContext) {
  const { cfg, opened, info } = run;
  const facts = {
    kvCapacityTokens: opened.session.facts.kvCapacityTokens?.value,
    maxRunningRequests: opened.session.facts.maxRunningRequests?.value,
  };
  const largest = largestRequests(run.workload, cfg.matrix.maxOutputTokens, opened.session.facts.maxModelLen?.value);
  /** One adaptive cell at this concurrency: planned like a column (Over capacity when it would not fit), measured, judged. */
  async function adaptive(context: number, concurrency: number, signal: AbortSignal): Promise<CellResult> {
    const planned = planCell(context, concurrency, cfg.matrix.maxOutputTokens, facts, largest(context));
    progress(`${planned.key}: capacity search cell`);
    const result = planned.overCapacity ? overCapacityResult(planned) : await measureCell(run, planned, signal);
    result.adaptive = true;
    result.slo = sloVerdict(result, cfg.slo!);
    return result;
  }

  return async function runCapacityTest(context: number, tc: TestContext): Promise<void> {
    const slo = cfg.slo!;
    const label = contextLabel(context);
    // a row too long for the model: its cells were Not run with the reason, and so is its search
    const tooLong = rowLengthProblem(run, context);
    if (tooLong !== undefined) {
      const why = `capacity ${label}: not searched: ${tooLong}`;
      progress(why);
      tc.skip(why);
      return;
    }
    const judged: Judged[] = [];
    const missing: number[] = [];
    for (const c of cfg.matrix.concurrency) {
      const cell = run.results.get(cellKey(context, c));
      const j = cell ? judgedOf(cell, false) : undefined;
      if (j) judged.push(j);
      else missing.push(c);
    }
    if (judged.length === 0) {
      tc.skip(`capacity ${label}: none of this row's cells ran in this run (filtered with -t?), so there is nothing to search from`);
      return;
    }
    // a column with no result (its test failed or timed out, or was filtered out) is not a pass:
    // the capacity is never claimed above a concurrency nothing was learnt about
    for (const c of missing) {
      judged.push({ concurrency: c, adaptive: false, measured: false, verdict: unmeasuredVerdict(`${label}/${c} has no result in this run`) });
    }
    const cells: CellResult[] = [];
    const search = await searchCapacity({
      columns: judged,
      overCapacity: (c) => planCell(context, c, cfg.matrix.maxOutputTokens, facts, largest(context)).overCapacity !== undefined,
      probe: async (c, why) => {
        const cell = await adaptive(context, c, tc.signal);
        // the confirmation repeats a concurrency already judged: its verdict is kept on the row
        if (why !== 'confirmation') cells.push(cell);
        return judgedOf(cell, true)!;
      },
    });
    const confirmation = search.confirmation
      ? { concurrency: search.confirmation.concurrency, verdict: search.confirmation.verdict, ...(search.confirmation.goodput ? { goodput: search.confirmation.goodput } : {}) }
      : undefined;
    const { row, unmeasured } = judgeCapacityRow({ context, contextLabel: label, judged: search.judged, ...(confirmation ? { confirmation } : {}) }, cells, {
      slo,
      ...(run.thresholds.capacity?.[label]?.min !== undefined ? { budgetMin: run.thresholds.capacity[label].min } : {}),
      slack: run.thresholds.tolerances?.slack ?? 0,
      ...(run.baseline ? { baseline: run.baseline } : {}),
    });
    const baseSlo = run.baseline?.result.info.run.slo?.text;
    if (run.baseline && baseSlo !== slo.text && run.baseline.result.capacity) {
      progress(`capacity ${label}: not compared with the baseline, which was judged at another SLO (${baseSlo ?? 'none'})`);
    }
    tc.task.meta.speedMatrix = { kind: 'capacity', row, cells, info };
    progress(`capacity at ${slo.text}: ${describeCapacity(row)}`);
    // a search cell that could not be measured (the server went away) leaves the answer open
    const failures = [...unmeasured, ...(run.updating ? [] : (row.thresholdFailures ?? [])), ...(row.baselineFailures ?? [])];
    if (failures.length > 0) throw new CellFailure(failures, run.debug === true);
  };
}
