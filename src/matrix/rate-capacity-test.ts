/**
 * Body of a context's "rate capacity <context>" test (runs with an SLO and matrix.rates, after the
 * context's rate cells): judge the configured rates' cells against the SLO, bisect between the
 * highest passing and the first failing rate with adaptive rate cells, measured by the rate cells'
 * own code path (rate-test.ts measureRateCell; src/slo/rate-capacity.ts searchRateCapacity), confirm
 * the answer once more, judge the row (its budget and baseline: judge/rate-capacity-row.ts), then
 * store the row and the adaptive cells for the reporter and throw when it fails.
 */
import { CellFailure } from '../errors.js';
import type {} from './task-meta.js';
import type { TestContext } from 'vitest';
import { contextLabel, rateCellKey } from '../shapes/labels.js';
import { parseArrival } from '../shapes/arrival.js';
import type { RateCellResult, RateSettings } from '../shapes/result.js';
import { searchRateCapacity, type RateJudged } from '../slo/rate-capacity.js';
import { describeRateCapacity } from '../text/capacity-line.js';
import { judgeRateCapacityRow, rateJudgedOf, rateSloVerdict, unmeasuredVerdict } from '../judge/index.js';
import type { RunContext } from './context.js';
import { rowLengthProblem } from './cell-load.js';
import { measureRateCell, plannedRateCell, rateCellBase } from './rate-test.js';
import { progress } from './progress.js';

export function createRateCapacityRunner(run: RunContext, settings: RateSettings) {
  const { cfg, info } = run;
  const arrival = parseArrival(settings.arrival);
  if ('error' in arrival) throw new Error(`info.settings.rates.arrival: ${arrival.error}`);

  return async function runRateCapacityTest(context: number, tc: TestContext): Promise<void> {
    const slo = cfg.slo!;
    const label = contextLabel(context);
    const tooLong = rowLengthProblem(run, context);
    if (tooLong !== undefined) {
      const why = `rate capacity ${label}: not searched: ${tooLong}`;
      progress(why);
      tc.skip(why);
      return;
    }
    const judged: RateJudged[] = [];
    const missing: number[] = [];
    // a sweep's rates are those its points measured in this run
    const rates = settings.sweep ? [...(run.rateResults?.values() ?? [])].filter((c) => c.context === context && !c.adaptive).map((c) => c.rate) : settings.rates;
    for (const rate of rates) {
      const cell = run.rateResults?.get(rateCellKey(context, rate));
      const j = cell ? rateJudgedOf(cell, false) : undefined;
      if (j) judged.push(j);
      else missing.push(rate);
    }
    if (judged.length === 0) {
      tc.skip(`rate capacity ${label}: none of this context's rate cells ran in this run (filtered with -t?), so there is nothing to search from`);
      return;
    }
    // a rate with no result is not a pass: the capacity is never claimed above a rate nothing was learnt about
    for (const rate of missing) judged.push({ rate, adaptive: false, measured: false, verdict: unmeasuredVerdict(`${label}@${rate}/s has no result in this run`) });
    const cells: RateCellResult[] = [];
    let probes = 0;
    const search = await searchRateCapacity({
      columns: judged,
      probe: async (rate, why) => {
        // each adaptive cell has its own prompt numbers, after the configured rates'
        const planned = plannedRateCell(context, rate, (settings.sweep?.points ?? settings.rates.length) + probes++, settings.seed);
        const say = (m: string) => progress(`${planned.key}/s (rate capacity ${why}): ${m}`);
        const cell = await measureRateCell(run, settings, arrival, planned, tc.signal, say, rateCellBase(planned, settings));
        cell.adaptive = true;
        cell.slo = rateSloVerdict(cell, slo);
        // the confirmation repeats a rate already judged: its verdict is kept on the row
        if (why !== 'confirmation') cells.push(cell);
        return rateJudgedOf(cell, true)!;
      },
    });
    const c = search.confirmation;
    const confirmation = c ? { rate: c.rate, verdict: c.verdict, ...(c.goodput ? { goodput: c.goodput } : {}) } : undefined;
    const budgetMin = run.thresholds.rateCapacity?.[label]?.min;
    const { row, unmeasured } = judgeRateCapacityRow({ context, contextLabel: label, judged: search.judged, ...(confirmation ? { confirmation } : {}) }, cells, {
      slo,
      ...(budgetMin !== undefined ? { budgetMin } : {}),
      slack: run.thresholds.tolerances?.slack ?? 0,
      ...(run.baseline ? { baseline: run.baseline } : {}),
    });
    const baseSlo = run.baseline?.result.info.run.slo?.text;
    if (run.baseline && baseSlo !== slo.text && run.baseline.result.rateCapacity) {
      progress(`rate capacity ${label}: not compared with the baseline, which was judged at another SLO (${baseSlo ?? 'none'})`);
    }
    tc.task.meta.speedMatrix = { kind: 'rate-capacity', row, cells, info };
    progress(`highest rate at ${slo.text}: ${describeRateCapacity(row)}`);
    const failures = [...unmeasured, ...(run.updating ? [] : (row.thresholdFailures ?? [])), ...(row.baselineFailures ?? [])];
    if (failures.length > 0) throw new CellFailure(failures, run.debug === true);
  };
}
