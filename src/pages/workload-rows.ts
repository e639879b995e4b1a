/**
 * Pure: the Workload section of the pages (issue 23), shown only for a run of a non-synthetic
 * workload: what each cell sent (input and output tokens), the prefix-cache hit rate over its
 * window and where it came from, and for multi-turn the TTFT of each turn. One set of rows; the
 * Markdown page and the HTML report draw them (workloadSection, workloadSectionHtml).
 */
import { cellKey, rateCellKey } from '../shapes/labels.js';
import type { LengthSummary, PrefixCacheFigures, SpeedMatrixResult, TurnFigures, WorkloadFigures } from '../shapes/result.js';
import { escapeHtml } from '../text/escape.js';
import { ABSENT, formatCount, formatMs, formatNumber } from '../text/format.js';
import { markdownRow } from '../text/escape.js';
import { table } from './html-frame.js';
import { runWorkload } from './view.js';
import { appendAll } from '../extent.js';

export const WORKLOAD_COLUMNS = ['Cell', 'Requests', 'Input tokens mean (p50 / p90, min–max)', 'Output tokens mean (p50 / p90)', 'Prefix-cache hit rate'] as const;
export const TURN_COLUMNS = ['Cell', 'Turn', 'Requests', 'Prompt tokens (mean)', 'TTFT p50', 'TTFT p90'] as const;

const SOURCE_WORDS: Record<PrefixCacheFigures['source'], string> = {
  'server-counters': "the server's hit and query counters",
  'processed-tokens': 'prompt tokens sent against those the server processed',
  usage: "the requests' usage.prompt_tokens_details.cached_tokens",
};

function lengthText(s: LengthSummary | undefined, withRange: boolean): string {
  if (!s) return ABSENT;
  const base = `${formatNumber(s.mean, 0)} (${formatCount(s.p50)} / ${formatCount(s.p90)}`;
  return withRange ? `${base}, ${formatCount(s.min)}–${formatCount(s.max)})` : `${base})`;
}

export function hitRateText(p: PrefixCacheFigures | undefined): string {
  return p ? `${formatNumber(p.hitRate * 100, 1)} % (${formatCount(p.hitTokens)} of ${formatCount(p.queriedTokens)} tokens)` : ABSENT;
}

interface WorkloadRow {
  key: string;
  figures: WorkloadFigures;
}

/** Every measured cell and rate cell with workload figures, matrix cells first, in the result's order. */
export function workloadRows(result: SpeedMatrixResult): WorkloadRow[] {
  const rows: WorkloadRow[] = [];
  for (const c of result.cells) if (c.workload && !c.adaptive) rows.push({ key: cellKey(c.context, c.concurrency), figures: c.workload });
  for (const c of result.rateCells ?? []) if (c.workload) rows.push({ key: rateCellKey(c.context, c.rate), figures: c.workload });
  return rows;
}

function rowCells(r: WorkloadRow): string[] {
  const f = r.figures;
  return [r.key, formatCount(f.inputTokens?.requests ?? f.outputTokens?.requests), lengthText(f.inputTokens, true), lengthText(f.outputTokens, false), hitRateText(f.prefixCache)];
}

function turnCells(key: string, t: TurnFigures): string[] {
  return [key, String(t.turn), formatCount(t.requests), formatNumber(t.promptTokensMean, 0), formatMs(t.ttftMs?.median), formatMs(t.ttftMs?.p90)];
}

/** The notes under the tables: the workload, where the hit rates came from. */
function notes(result: SpeedMatrixResult, rows: readonly WorkloadRow[]): string[] {
  const w = result.info.run.workload!;
  const out = [`Workload ${w.text}${w.file ? ` (file ${w.file.name}, sha256 ${w.file.sha256.slice(0, 12)}…, ${w.file.used} of ${w.file.lines} lines usable, ${w.file.skipped} skipped as longer than the server's max model length)` : ''}. Lengths are over the requests sent in each window: input as the server counted it (as the workload sized it where the server reported none), output the max_tokens each asked for.`];
  const sources = [...new Set(rows.flatMap((r) => (r.figures.prefixCache ? [r.figures.prefixCache.source] : [])))];
  if (sources.length > 0) out.push(`Prefix-cache hit rate: cached prompt tokens over prompt tokens looked up in the window, from ${sources.map((s) => SOURCE_WORDS[s]).join('; ')}.`);
  else out.push('Prefix-cache hit rate: — where the server gives no cache counters and no cached-token usage.');
  return out;
}

/** The Markdown page's section; [] for a synthetic run. */
export function workloadSection(result: SpeedMatrixResult): string[] {
  const w = runWorkload(result.info);
  if (!w) return [];
  const rows = workloadRows(result);
  const out = ['### Workload', ''];
  if (rows.length > 0) {
    appendAll(out, [markdownRow(WORKLOAD_COLUMNS), markdownRow(WORKLOAD_COLUMNS.map(() => '---')), ...rows.map((r) => markdownRow(rowCells(r))), '']);
  }
  const turns = rows.flatMap((r) => (r.figures.turns ?? []).map((t) => turnCells(r.key, t)));
  if (turns.length > 0) appendAll(out, [markdownRow(TURN_COLUMNS), markdownRow(TURN_COLUMNS.map(() => '---')), ...turns.map(markdownRow), '']);
  appendAll(out, notes(result, rows).flatMap((n) => [n, '']));
  return out;
}

/** The HTML report's section; '' for a synthetic run. */
export function workloadSectionHtml(result: SpeedMatrixResult): string {
  const w = runWorkload(result.info);
  if (!w) return '';
  const rows = workloadRows(result);
  const esc = (cells: string[]) => cells.map(escapeHtml);
  const parts = ['<h2>Workload</h2>'];
  if (rows.length > 0) parts.push(table(WORKLOAD_COLUMNS, rows.map((r) => esc(rowCells(r))), [0]));
  const turns = rows.flatMap((r) => (r.figures.turns ?? []).map((t) => esc(turnCells(r.key, t))));
  if (turns.length > 0) parts.push(table(TURN_COLUMNS, turns, [0]));
  appendAll(parts, notes(result, rows).map((n) => `<p>${escapeHtml(n)}</p>`));
  return parts.join('\n');
}
