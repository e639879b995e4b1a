/**
 * The open-loop rate cells' figures as plain text, shared by the Markdown page and the HTML report
 * (each escapes them for its format): a grid cell (status, completed rate, goodput), a
 * measurements row, and the knee line. Numbers use the decode table's formats (src/text/format.ts):
 * TTFT and end-to-end in whole ms, the time between tokens and the dispatch delay to 0.1 ms.
 */
import { ABSENT, formatCount, formatMsPrecise, formatNumber, formatRate, percent } from '../text/format.js';
import { contextLabel } from '../shapes/labels.js';
import type { Distribution, RateCellResult, SpeedMatrixResult } from '../shapes/result.js';
import { GOODPUT_COLUMN, goodputText, rateStatusWords, rateText, sloMeetsText } from './view.js';

/** The measurements table's columns (a Goodput column follows with an SLO). */
export const RATE_MEASUREMENTS_COLUMNS = [
  'Context', 'Rate (req/s)', 'Status', 'Offered / sent / completed req/s', 'Total tok/s', 'Per request tok/s',
  'TTFT p50 / p90 / p99', 'End-to-end p50 / p90 / p99', 'Time between tokens', 'Dispatch delay p50 / p99',
  'In system mean / max', 'Server waiting mean / max', 'Failed requests', 'Unsent / ceiling waited',
] as const;

/** What the measurements table's columns count, under it on every page (plain text). */
export const RATE_TABLE_NOTE =
  "TTFT and end-to-end latency are measured from each request's scheduled time, so time it waited to be sent, or queued in the server, counts; the dispatch delay is send − scheduled. " +
  'Offered: requests scheduled in the window per second; sent and completed likewise. In system: requests scheduled and not yet ended (time-weighted mean, and the most at once). ' +
  "Server waiting: the waiting requests the server's own metrics count, where it has them; far below In system, requests wait where the engine does not count them (its socket backlog, a gateway).";

/** A rate in requests/s: two decimals below 1 (`0.50`), else one (`2.0`, `12.5`). */
export function formatRequestRate(x: number | undefined): string {
  return x !== undefined && Math.abs(x) < 1 ? formatNumber(x, 2) : formatRate(x);
}

/** `310 / 340 / 420 ms`: a distribution's median, p90 and p99 in whole ms; — without it */
function msTriple(d: Distribution | undefined): string {
  if (!d) return ABSENT;
  return `${formatNumber(d.median, 0)} / ${formatNumber(d.p90, 0)} / ${formatNumber(d.p99, 0)} ms`;
}

/** `goodput 92 %` with an SLO and judged requests; '' otherwise */
function goodputPart(cell: RateCellResult): string {
  const g = cell.goodput;
  return g && g.requests.judged > 0 ? `goodput ${percent(g.requests.share)}` : '';
}

/** A grid cell's figures after its status: `0.50 req/s`, `goodput 92 %` (completed rate; goodput with an SLO). */
export function rateGridFigures(cell: RateCellResult): string[] {
  const parts: string[] = [];
  if (cell.figures) parts.push(`${formatRequestRate(cell.figures.completedRate)} req/s`);
  const goodput = goodputPart(cell);
  if (goodput !== '') parts.push(goodput);
  return parts;
}

/** One grid cell: `Valid · 0.50 req/s · goodput 100 %`, `Saturated · 1.6 req/s`, `Over capacity`; `missing` without a cell. */
export function rateGridText(cell: RateCellResult | undefined, missing: string): string {
  if (!cell) return missing;
  return [rateStatusWords(cell), ...rateGridFigures(cell)].join(' · ');
}

/** The measurements row of a planned or finished rate cell, plain text, in RATE_MEASUREMENTS_COLUMNS order. */
export function rateMeasurementRow(context: number, rate: number, cell: RateCellResult | undefined, missing: string): string[] {
  const head = [contextLabel(context), rateText(rate)];
  const f = cell?.figures;
  if (!cell || !f) return [...head, cell ? rateStatusWords(cell) : missing, ...Array<string>(RATE_MEASUREMENTS_COLUMNS.length - 3).fill(ABSENT)];
  const d = f.dispatchDelayMs;
  return [
    ...head,
    rateStatusWords(cell),
    `${formatRequestRate(f.offeredRate)} / ${formatRequestRate(f.sentRate)} / ${formatRequestRate(f.completedRate)}`,
    formatRate(f.totalTokensPerSecond),
    formatRate(f.perRequestTokensPerSecond?.median),
    msTriple(f.ttftFromScheduleMs),
    msTriple(f.e2eFromScheduleMs),
    formatMsPrecise(f.tbtMs?.median),
    d ? `${formatNumber(d.median, 1)} / ${formatMsPrecise(d.p99)}` : ABSENT,
    `${formatRate(f.inSystem.mean)} / ${formatCount(f.inSystem.max)}`,
    f.serverWaiting ? `${formatRate(f.serverWaiting.mean)} / ${formatCount(f.serverWaiting.max)}` : ABSENT,
    formatCount(f.failedRequests),
    `${formatCount(f.unsent)} / ${formatCount(f.ceilingWaited)}`,
  ];
}

/** `8K at 2 req/s, 32K at 4 req/s`: each context's knee (first Saturated rate); '' when none saturated */
export function kneeText(knees: ReadonlyMap<number, number>): string {
  return [...knees].map(([context, rate]) => `${contextLabel(context)} at ${rateText(rate)} req/s`).join(', ');
}

/** The columns of the highest-rate search's own cells: the measurements, goodput and the SLO verdict. */
export const SEARCHED_RATE_COLUMNS = [...RATE_MEASUREMENTS_COLUMNS, GOODPUT_COLUMN, 'Meets SLO'] as const;

/** The highest-rate search's own rate cells (adaptive), by context then rate; [] when none. */
export function searchedRateCells(result: Partial<Pick<SpeedMatrixResult, 'rateCells'>>): RateCellResult[] {
  return (result.rateCells ?? []).filter((c) => c.adaptive).sort((a, b) => a.context - b.context || a.rate - b.rate);
}

/** A searched rate cell's row under SEARCHED_RATE_COLUMNS, plain text (each page escapes it). */
export function searchedRateRow(cell: RateCellResult): string[] {
  return [...rateMeasurementRow(cell.context, cell.rate, cell, ''), goodputText(cell), sloMeetsText(cell)];
}
