/**
 * The Markdown page's table cells and rows: a grid cell, the prefill rows, a cell's All
 * measurements row, the spread over repeats, the server cross-check. Status words come from the
 * view model (src/pages/view.ts), escaped for Markdown.
 */
import { ABSENT, formatCount, formatMs, formatMsPrecise, formatNumber, formatPrefillRate, formatRate, formatSeconds } from '../text/format.js';
import { contextLabel } from '../shapes/labels.js';
import type { CellResult, FigureSpread, PrefillRowResult } from '../shapes/result.js';
import { escapeText } from '../text/escape.js';
import { distText, NOT_YET, STATUS_LABELS, statusWords } from './view.js';
import type { ExtraColumn } from '../shapes/columns.js';

/** Status text of a cell for the Markdown page: its status words (src/pages/view.ts), escaped. */
export function statusText(cell: Pick<CellResult, 'status' | 'statuses' | 'evidence' | 'figures' | 'notRunReason'>): string {
  return escapeText(statusWords(cell));
}

/** One grid cell: `**2,616.6** tok/s · 1,458 ms TTFT`, `59.3 · Requests queued · 122 ms TTFT`, `Over capacity`. */
export function gridCell(cell: CellResult | undefined, missing: string = NOT_YET): string {
  if (!cell) return missing;
  const f = cell.figures;
  if (!f) return statusText(cell);
  const ttft = `${formatMs(f.ttftMs?.median)} TTFT`;
  if (cell.status === 'valid' && cell.statuses.every((s) => s === 'valid')) {
    return `**${formatRate(f.totalTokensPerSecond)}** tok/s · ${ttft}`;
  }
  return `${formatRate(f.totalTokensPerSecond)} · ${statusText(cell)} · ${ttft}`;
}

function prefillStatus(row: PrefillRowResult): string {
  return STATUS_LABELS[row.status];
}

export function prefillSectionRow(context: number, r: PrefillRowResult | undefined, missing: string): string[] {
  if (!r) return [contextLabel(context), missing, ABSENT, ABSENT];
  const f = r.figures;
  const rate = f ? formatPrefillRate(f.promptTokensPerSecond, 0) : prefillStatus(r);
  return [r.contextLabel, rate, formatMs(f?.ttftMs), `${formatCount(f?.promptTokens)}${f?.promptTokensFrom === 'local-tokenizer' ? ' *' : ''}`];
}

export function prefillMeasurementRow(context: number, r: PrefillRowResult | undefined, missing: string): string[] {
  const label = r?.contextLabel ?? contextLabel(context);
  const f = r?.figures;
  const notRun = r === undefined || r.status === 'over-capacity';
  const sent = r?.repeats?.count ?? 1;
  // one request: it failed or completed; repeated: the counts of the repeats
  const failedCount = r?.repeats ? r.repeats.failed : r?.status === 'errors' ? 1 : 0;
  const failed = notRun ? ABSENT : String(failedCount);
  const completed = notRun ? ABSENT : String(r?.repeats ? sent - failedCount : f ? 1 : 0);
  return [
    'Prefill', label, '1', r ? prefillStatus(r) : missing,
    formatPrefillRate(f?.promptTokensPerSecond, 1), ABSENT, formatMs(f?.ttftMs), ABSENT, ABSENT,
    completed, ABSENT, ABSENT, failed, ABSENT,
  ];
}

export function cellMeasurementRow(context: number, concurrency: number, cell: CellResult | undefined, missing: string): string[] {
  const head = ['Sustained decode', contextLabel(context), String(concurrency)];
  const f = cell?.figures;
  if (!cell || !f) return [...head, cell ? statusText(cell) : missing, ...Array<string>(10).fill(ABSENT)];
  return [
    ...head,
    `${statusText(cell)}${cell.serverCrossCheck?.disagree ? ' ⚠' : ''}`,
    formatRate(f.totalTokensPerSecond),
    formatRate(f.perRequestTokensPerSecond),
    formatMs(f.ttftMs?.median),
    formatMsPrecise(f.timeBetweenTokensMs?.median),
    formatRate(f.averageActiveRequests),
    formatCount(f.completedRequests),
    formatCount(f.outputTokens),
    formatSeconds(f.measuredForS),
    failedText(cell),
    `${formatRate(f.clientActiveRequests)}${f.activeRequestsDisagree ? ' ⚠' : ''}`,
  ];
}

/** The extra columns' texts of a cell (LLM_BENCH_COLUMNS), in `columns` order; — where it has no figure. */
export function extraColumnTexts(cell: CellResult | undefined, columns: readonly ExtraColumn[]): string[] {
  const f = cell?.figures;
  const ms = (xs: Array<number | undefined>, digits: number) => (xs.every((x) => x !== undefined) ? `${xs.map((x) => formatNumber(x, digits)).join(' / ')} ms` : ABSENT);
  return columns.map((c) => {
    if (!f) return ABSENT;
    switch (c) {
      case 'itl':
        return ms([f.interTokenLatencyMs?.median, f.interTokenLatencyMs?.p95, f.interTokenLatencyMs?.p99], 1);
      case 'maxGap':
        return f.longestGap ? `${formatNumber(f.longestGap.ms, 1)} ms` : ABSENT;
      case 'tpot':
        return distText(f.tpotMs, 1);
      case 'e2e':
        return distText(f.e2eLatencyMs, 0);
      case 'requestsPerSecond':
        return f.requestsPerSecond !== undefined ? formatNumber(f.requestsPerSecond, 2) : ABSENT;
    }
  });
}

/** `0`, or `0 (+4 resent)` when requests were resent on a fresh connection (not failures) */
function failedText(cell: CellResult): string {
  const failed = formatCount(cell.figures?.failedRequests);
  const resent = cell.evidence.connectionRetries?.count;
  return resent ? `${failed} (+${formatCount(resent)} resent)` : failed;
}

/** `total tok/s: server 350.2, client 388.1` for each disagreeing item of a cell's server cross-check. */
export function crossCheckText(cell: CellResult): string {
  const names: Record<string, string> = { outputTokensPerSecond: 'total tok/s', ttftMedianMs: 'TTFT ms', perRequestTokensPerSecond: 'per request tok/s' };
  return (cell.serverCrossCheck?.items ?? [])
    .filter((i) => i.disagree)
    .map((i) => `${names[i.figure] ?? i.figure}: server ${formatNumber(i.server, 1)}, client ${formatNumber(i.client, 1)}`)
    .join(', ');
}

/** `label ±x% · … (n runs)` for the labelled figures of a repeated cell or prefill row; — when measured once */
function repeatSpreadText(
  repeats: { count: number; spread: Partial<Record<string, FigureSpread>> } | undefined,
  labels: ReadonlyArray<readonly [figure: string, label: string]>,
): string {
  if (!repeats || repeats.count < 2) return ABSENT;
  const parts: string[] = [];
  for (const [figure, label] of labels) {
    const x = repeats.spread[figure]?.relativeHalfRange;
    if (x !== undefined) parts.push(`${label} ±${formatNumber(x * 100, 1)}%`);
  }
  return parts.length > 0 ? `${parts.join(' · ')} (${repeats.count} runs)` : ABSENT;
}

const CELL_SPREAD_LABELS = [['totalTokensPerSecond', 'tok/s'], ['perRequestTokensPerSecond', 'per request'], ['ttftMs', 'TTFT'], ['timeBetweenTokensMs', 'TBT']] as const;
const PREFILL_SPREAD_LABELS = [['promptTokensPerSecond', 'prompt tok/s'], ['ttftMs', 'TTFT']] as const;

/** `tok/s ±0.4% · per request ±0.2% · TTFT ±3.1% · TBT ±0.1% (3 runs)` from a repeated cell's spread. */
export function spreadText(cell: CellResult | undefined): string {
  return repeatSpreadText(cell?.repeats, CELL_SPREAD_LABELS);
}

/** `prompt tok/s ±1.2% · TTFT ±1.3% (3 runs)` from a repeated prefill row's spread. */
export function prefillSpreadText(r: PrefillRowResult | undefined): string {
  return repeatSpreadText(r?.repeats, PREFILL_SPREAD_LABELS);
}
