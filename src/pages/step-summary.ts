/**
 * Pure: a result → the Markdown appended to GitHub Actions' job summary ($GITHUB_STEP_SUMMARY):
 * the title, the sustained-decode grid, capacity at the SLO (when searched), per context the highest
 * Valid open-loop rate (with rate cells), and the failures — regressions against the baseline
 * (each cell's baselineFailures) and threshold failures — or a line saying there were none.
 */
import { plannedCellKeys } from '../results/collect.js';
import { codeSpan, escapeCell, escapeLine, escapeText } from '../text/escape.js';
import { decodeGrid, mermaidChart } from './markdown.js';
import { finishedCells, matrixCells } from './view.js';
import { describeCapacity } from '../text/capacity-line.js';
import type { SpeedMatrixResult } from '../shapes/result.js';
import { contextLabel } from '../shapes/labels.js';
import { configuredRateCells, kneeRates, RATE_SECTION, rateText } from './view.js';
import { rateCapacityLines } from './rate-markdown.js';
import { appendAll, maxOf } from '../extent.js';
import { cutText, HEADING_MAX_CHARS } from '../text/format.js';

export function renderStepSummary(result: SpeedMatrixResult, run: { missingThresholds?: string } = {}): string {
  const { info } = result;
  const planned = plannedCellKeys(info);

  const out: string[] = [`## Speed matrix: ${escapeText(cutText(info.title, HEADING_MAX_CHARS))}`, ''];
  const repeat = info.run.repeat && info.run.repeat > 1 ? ` · each cell measured ${info.run.repeat} times (medians)` : '';
  out.push(`${finishedCells(result)} of ${Math.max(planned.length, matrixCells(result).length)} cells · ${info.run.windowS} s windows${repeat}`, '');
  appendAll(out, [...decodeGrid(result), '']);
  const chart = mermaidChart(result);
  if (chart.length > 0) appendAll(out, [...chart, '']);
  const capacity = result.capacity?.rows ?? [];
  if (info.run.slo && capacity.length > 0) {
    appendAll(out, [`### Capacity at ${codeSpan(info.run.slo.text)}`, '', ...capacity.map((r) => `- ${escapeCell(describeCapacity(r))}`), '']);
  }

  appendAll(out, rateSummary(result));

  const rows = [...result.prefill, ...result.cells, ...capacity, ...(result.rateCells ?? []), ...(result.rateCapacity?.rows ?? [])];
  const regressions = rows.flatMap((r) => r.baselineFailures ?? []);
  const thresholds = rows.flatMap((r) => r.thresholdFailures ?? []);
  if (info.baselinePath !== undefined) {
    out.push(`### Regressions against the baseline ${codeSpan(info.baselinePath)}`, '');
    appendAll(out, [...(regressions.length > 0 ? regressions.map((f) => `- ${escapeLine(f)}`) : ['None: every compared figure is within its tolerance.']), '']);
  }
  if (thresholds.length > 0) appendAll(out, ['### Threshold failures', '', ...thresholds.map((f) => `- ${escapeLine(f)}`), '']);
  // a gate that was off is said where the job's reader looks, not only in one shard's log
  if (run.missingThresholds !== undefined) {
    out.push(
      '### No threshold gate',
      '',
      `No threshold file at ${codeSpan(run.missingThresholds)}: no budgets gated this run. Write it with \`npx vitest bench --run -u\` at this run's settings (the same name, simulator profile or LLM_BENCH_NAME) and commit it.`,
      '',
    );
  }
  return out.join('\n');
}


/**
 * `- 8K: highest Valid rate 1 req/s (first Saturated at 2 req/s)`, one line per context of the
 * rate cells; [] without them.
 */
export function rateSummary(result: SpeedMatrixResult): string[] {
  const cells = configuredRateCells(result);
  if (cells.length === 0) return [];
  const knees = kneeRates(cells);
  const contexts = [...new Set(cells.map((c) => c.context))].sort((a, b) => a - b);
  const lines = contexts.map((context) => {
    const valid = cells.filter((c) => c.context === context && c.status === 'valid' && c.statuses.every((s) => s === 'valid')).map((c) => c.rate);
    const knee = knees.get(context);
    const best = valid.length > 0 ? `highest Valid rate ${rateText(maxOf(valid))} req/s` : 'no rate was Valid';
    return `- ${contextLabel(context)}: ${best}${knee !== undefined ? ` (first Saturated at ${rateText(knee)} req/s)` : ''}`;
  });
  return [`### ${RATE_SECTION}`, '', ...lines, ...rateCapacityLines(result).map((l) => `- ${escapeCell(l)}`), ''];
}
