/**
 * The Markdown page's table cells and rows: a grid cell, the prefill rows, a cell's All
 * measurements row, the spread over repeats, the server cross-check. Status words come from the
 * view model (src/pages/view.ts), escaped for Markdown.
 */
import { ABSENT, formatCount, formatMs, formatMsPrecise, formatNumber, formatPrefillRate, formatRate, formatSeconds } from '../text/format.js';
import { contextLabel } from '../shapes/labels.js';
import type { CellResult, FigureSpread, PrefillRowResult } from '../shapes/result.js';
import { escapeText } from '../text/escape.js';
import { NOT_YET, STATUS_LABELS, statusWords } from './view.js';
import { DEFAULT_COLUMN_PERCENTILES, extraColumnTitle, isPercentileColumn, percentileName, type ExtraColumn, type PercentileColumn } from '../shapes/columns.js';
import type { Distribution, InterTokenLatency, RunSettings } from '../shapes/result.js';

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

/** The all-measurements table's extra columns of a run (LLM_BENCH_COLUMNS) and the percentiles its latency columns show (LLM_BENCH_PERCENTILES). */
export interface ExtraColumns {
  columns: readonly ExtraColumn[];
  percentiles?: readonly number[];
}

export function extraColumnsOf(run: Pick<RunSettings, 'columns' | 'percentiles'>): ExtraColumns {
  return { columns: run.columns ?? [], ...(run.percentiles ? { percentiles: run.percentiles } : {}) };
}

/** The extra columns' headings, in order. */
export function extraColumnTitles(extra: ExtraColumns): string[] {
  return extra.columns.map((c) => extraColumnTitle(c, extra.percentiles));
}

/**
 * A distribution at the column's percentiles: LLM_BENCH_PERCENTILES's (the distribution's
 * `percentiles`), else its fixed quantiles; — where one is missing (a cell measured without them).
 */
function percentileValues(d: Distribution | InterTokenLatency | undefined, c: PercentileColumn, percentiles: readonly number[] | undefined): Array<number | undefined> {
  if (!d) return [undefined];
  if (percentiles && percentiles.length > 0) return percentiles.map((p) => d.percentiles?.[percentileName(p)]);
  const fixed: Record<number, number | undefined> = { 50: d.median, 90: d.p90, 95: 'p95' in d ? d.p95 : undefined, 99: d.p99 };
  return DEFAULT_COLUMN_PERCENTILES[c].map((p) => fixed[p]);
}

/** `12.0 / 15.5 / 20.1 ms`, or — where a value is missing */
function msList(xs: Array<number | undefined>, digits: number): string {
  return xs.every((x) => x !== undefined) ? `${xs.map((x) => formatNumber(x, digits)).join(' / ')} ms` : ABSENT;
}

/** A cell's latency distributions by column; E2E and TTFT in whole ms, as the page's other TTFTs, gaps to a tenth. */
function latencyDistributions(f: NonNullable<CellResult['figures']>): Record<PercentileColumn, { d: Distribution | InterTokenLatency | undefined; digits: number }> {
  return {
    ttft: { d: f.ttftMs, digits: 0 },
    tbt: { d: f.timeBetweenTokensMs, digits: 1 },
    itl: { d: f.interTokenLatencyMs, digits: 1 },
    tpot: { d: f.tpotMs, digits: 1 },
    e2e: { d: f.e2eLatencyMs, digits: 0 },
  };
}

/**
 * A cell's latencies at the run's chosen percentiles (LLM_BENCH_PERCENTILES), as [heading, text]
 * for the HTML report's cell view: those measured at them (none when the run chose none, or for a
 * cell kept from a run without them).
 */
export function chosenPercentileItems(f: NonNullable<CellResult['figures']>, percentiles: readonly number[] | undefined): Array<[string, string]> {
  if (!percentiles || percentiles.length === 0) return [];
  return Object.entries(latencyDistributions(f))
    .filter(([, { d }]) => d?.percentiles !== undefined)
    .map(([c, { d, digits }]) => [extraColumnTitle(c as PercentileColumn, percentiles), msList(percentileValues(d, c as PercentileColumn, percentiles), digits)]);
}

/** The extra columns' texts of a cell (LLM_BENCH_COLUMNS), in order; — where it has no figure. */
export function extraColumnTexts(cell: CellResult | undefined, extra: ExtraColumns): string[] {
  const f = cell?.figures;
  return extra.columns.map((c) => {
    if (!f) return ABSENT;
    if (isPercentileColumn(c)) {
      const { d, digits } = latencyDistributions(f)[c];
      return msList(percentileValues(d, c, extra.percentiles), digits);
    }
    if (c === 'maxGap') return f.longestGap ? `${formatNumber(f.longestGap.ms, 1)} ms` : ABSENT;
    return f.requestsPerSecond !== undefined ? formatNumber(f.requestsPerSecond, 2) : ABSENT;
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
