/**
 * Pure: a result → the Markdown appended to GitHub Actions' job summary ($GITHUB_STEP_SUMMARY):
 * the title, the sustained-decode grid, capacity at the SLO (when searched), and the failures — regressions against the baseline
 * (each cell's baselineFailures) and threshold failures — or a line saying there were none.
 */
import { plannedCellKeys } from '../results/collect.js';
import { codeSpan, escapeCell, escapeText } from '../text/escape.js';
import { decodeGrid, mermaidChart } from './markdown.js';
import { finishedCells, matrixCells } from './view.js';
import { describeCapacity } from '../text/capacity-line.js';
import type { SpeedMatrixResult } from '../shapes/result.js';

export function renderStepSummary(result: SpeedMatrixResult): string {
  const { info } = result;
  const planned = plannedCellKeys(info);

  const out: string[] = [`## Speed matrix: ${escapeText(info.title)}`, ''];
  const repeat = info.run.repeat && info.run.repeat > 1 ? ` · each cell measured ${info.run.repeat} times (medians)` : '';
  out.push(`${finishedCells(result)} of ${Math.max(planned.length, matrixCells(result).length)} cells · ${info.run.windowS} s windows${repeat}`, '');
  out.push(...decodeGrid(result), '');
  const chart = mermaidChart(result);
  if (chart.length > 0) out.push(...chart, '');
  const capacity = result.capacity?.rows ?? [];
  if (info.run.slo && capacity.length > 0) {
    out.push(`### Capacity at ${codeSpan(info.run.slo.text)}`, '', ...capacity.map((r) => `- ${escapeCell(describeCapacity(r))}`), '');
  }

  const rows = [...result.prefill, ...result.cells, ...capacity];
  const regressions = rows.flatMap((r) => r.baselineFailures ?? []);
  const thresholds = rows.flatMap((r) => r.thresholdFailures ?? []);
  if (info.baselinePath !== undefined) {
    out.push(`### Regressions against the baseline ${codeSpan(info.baselinePath)}`, '');
    out.push(...(regressions.length > 0 ? regressions.map((f) => `- ${escapeCell(f)}`) : ['None: every compared figure is within its tolerance.']), '');
  }
  if (thresholds.length > 0) out.push('### Threshold failures', '', ...thresholds.map((f) => `- ${escapeCell(f)}`), '');
  return out.join('\n');
}

