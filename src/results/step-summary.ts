/**
 * Pure: a result → the Markdown appended to GitHub Actions' job summary ($GITHUB_STEP_SUMMARY):
 * the title, the sustained-decode grid, and the failures — regressions against the baseline
 * (each cell's baselineFailures) and threshold failures — or a line saying there were none.
 */
import { plannedCellKeys } from './collect.js';
import { cellKey, contextLabel, parseCellKey } from './labels.js';
import { gridCell, NOT_RUN, NOT_YET } from './render-md.js';
import type { SpeedMatrixResult } from './types.js';

export function renderStepSummary(result: SpeedMatrixResult): string {
  const { info } = result;
  const cells = new Map(result.cells.map((c) => [cellKey(c.context, c.concurrency), c]));
  const planned = plannedCellKeys(info);
  const contexts = sorted([...info.run.contexts, ...result.cells.map((c) => c.context), ...planned.map((k) => parseCellKey(k).context)]);
  const levels = sorted([...info.run.concurrency, ...result.cells.map((c) => c.concurrency), ...planned.map((k) => parseCellKey(k).concurrency)]);
  const missing = result.partial ? NOT_YET : NOT_RUN;

  const out: string[] = [`## Speed matrix: ${escape(info.title)}`, ''];
  const repeat = info.run.repeat && info.run.repeat > 1 ? ` · each cell measured ${info.run.repeat} times (medians)` : '';
  out.push(`${result.cells.length} of ${Math.max(planned.length, result.cells.length)} cells · ${info.run.windowS} s windows${repeat}`, '');
  out.push('Total tok/s · rows are context length, columns are simultaneous requests.', '');
  out.push(row(['Context', ...levels.map(String)]), row(['---', ...levels.map(() => '---')]));
  for (const context of contexts) {
    out.push(row([contextLabel(context), ...levels.map((c) => gridCell(cells.get(cellKey(context, c)), missing))]));
  }
  out.push('');

  const rows = [...result.prefill, ...result.cells];
  const regressions = rows.flatMap((r) => r.baselineFailures ?? []);
  const thresholds = rows.flatMap((r) => r.thresholdFailures ?? []);
  if (info.baselinePath !== undefined) {
    out.push(`### Regressions against the baseline \`${escape(info.baselinePath)}\``, '');
    out.push(...(regressions.length > 0 ? regressions.map((f) => `- ${escape(f)}`) : ['None: every compared figure is within its tolerance.']), '');
  }
  if (thresholds.length > 0) out.push('### Threshold failures', '', ...thresholds.map((f) => `- ${escape(f)}`), '');
  return out.join('\n');
}

function sorted(xs: number[]): number[] {
  return [...new Set(xs)].sort((a, b) => a - b);
}

function row(cells: readonly string[]): string {
  return `| ${cells.map((c) => escape(c).replace(/\|/g, '\\|')).join(' | ')} |`;
}

function escape(text: string): string {
  return text.replace(/\r?\n/g, ' ');
}
