/**
 * Pure: one-line progress messages the reporter prints while a run goes.
 * `[speed-matrix] 8K/16: Valid · 857.3 tok/s total · 53.7 tok/s/req · TTFT 422 ms · TBT 18.6 ms · active 24.0 · 12/40 done`
 * Statuses in the pages' words (view.ts), as the rate cells' lines give them.
 */
import { ABSENT, formatCount, formatMs, formatMsPrecise, formatNumber, formatPrefillRate, formatRate, percent } from '../text/format.js';
import { cellKey, rateCellKey } from '../shapes/labels.js';
import type { CapacityRow, CellResult, PrefillRowResult, RateCapacityRow, RateCellResult } from '../shapes/result.js';
import { describeCapacity, describeRateCapacity } from '../text/capacity-line.js';
import { formatRequestRate } from './rate-rows.js';
import { rateStatusWords, STATUS_LABELS, statusWords } from './view.js';

export const PREFIX = '[speed-matrix]';

export function cellLine(cell: CellResult, done: number, total: number | undefined): string {
  const head = `${PREFIX} ${cellKey(cell.context, cell.concurrency)}: ${statusWords(cell)}`;
  const progress = `${done}/${total ?? '?'} done`;
  const f = cell.figures;
  if (!f) return `${head} · ${progress}`;
  const parts = [
    `${formatRate(f.totalTokensPerSecond)} tok/s total`,
    `${formatRate(f.perRequestTokensPerSecond)} tok/s/req`,
    `TTFT ${formatMs(f.ttftMs?.median)}`,
    `TBT ${formatMsPrecise(f.timeBetweenTokensMs?.median)}`,
    `active ${formatRate(f.averageActiveRequests)}${f.activeRequestsDisagree ? ` (client ${formatRate(f.clientActiveRequests)} ⚠)` : ''}`,
  ];
  if (f.failedRequests > 0) {
    const code = Object.keys(cell.evidence.errors?.byCode ?? {})[0];
    parts.push(`${formatCount(f.failedRequests)} failed${code ? ` (${code})` : ''}`);
  }
  // the page's format (text/format.ts percent): 9.9 % reads 9.9 % in both
  if (cell.goodput && cell.goodput.requests.judged > 0) parts.push(`goodput ${percent(cell.goodput.requests.share)}`);
  if (cell.slo) parts.push(cell.slo.meets ? 'meets the SLO' : `misses the SLO (${cell.slo.binding?.detail ?? '?'})`);
  const resent = cell.evidence.connectionRetries?.count;
  if (resent) parts.push(`${formatCount(resent)} resent on a fresh connection`);
  // a status word like "Valid" is the measurement's; the cell may still fail its checks (said below it)
  const failing = (cell.thresholdFailures?.length ?? 0) + (cell.baselineFailures?.length ?? 0);
  if (failing > 0) parts.push(`fails ${failing} check${failing === 1 ? '' : 's'}`);
  parts.push(progress);
  return `${head} · ${parts.join(' · ')}`;
}

export function prefillLine(row: PrefillRowResult): string {
  const f = row.figures;
  const head = `${PREFIX} prefill ${row.contextLabel}: ${STATUS_LABELS[row.status]}`;
  if (!f) return `${head}${row.error ? ` · ${row.error}` : ''}`;
  return `${head} · ${formatPrefillRate(f.promptTokensPerSecond)} prompt tok/s · TTFT ${formatMs(f.ttftMs)} · ${formatCount(f.promptTokens)} prompt tokens`;
}

export function runningLine(label: string): string {
  return `${PREFIX} running ${label} …`;
}

/** `[speed-matrix] capacity 8K: 47 users (binds: TTFT p90 at 48: …) · 4 cells searched` */
export function capacityLine(row: CapacityRow): string {
  return `${PREFIX} capacity ${describeCapacity(row)} · ${row.adaptiveCells} cell${row.adaptiveCells === 1 ? '' : 's'} searched`;
}

/** `[speed-matrix] highest rate at the SLO: 8K: 11.2 req/s (binds: …) · 5 cells searched` */
export function rateCapacityLine(row: RateCapacityRow): string {
  return `${PREFIX} highest rate at the SLO: ${describeRateCapacity(row)} · ${row.adaptiveCells} cell${row.adaptiveCells === 1 ? '' : 's'} searched`;
}

/** A latency for a line: `340 ms` below a second, `4.1 s` from it. */
function shortDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return ABSENT;
  return ms < 1000 ? formatMs(ms) : `${formatNumber(ms / 1000, 1)} s`;
}

/**
 * `[speed-matrix] 8K@2/s: Valid · 2.0/2.0 req/s · TTFT p90 340 ms (sched) · e2e p99 4.1 s`: a
 * finished rate cell, its status words (the pages'), offered/completed rate, and latencies from
 * the scheduled time; failed requests, held-back sends and goodput when there are any.
 */
export function rateLine(cell: RateCellResult): string {
  const head = `${PREFIX} ${rateCellKey(cell.context, cell.rate)}/s: ${rateStatusWords(cell)}`;
  const f = cell.figures;
  if (!f) return head;
  const parts = [
    `offered/completed ${formatRequestRate(f.offeredRate)}/${formatRequestRate(f.completedRate)} req/s`,
    `TTFT p90 ${shortDuration(f.ttftFromScheduleMs?.p90)} (sched)`,
    `e2e p99 ${shortDuration(f.e2eFromScheduleMs?.p99)}`,
  ];
  if (f.failedRequests > 0) parts.push(`${formatCount(f.failedRequests)} failed`);
  if (f.unsent > 0 || f.ceilingWaited > 0) parts.push(`ceiling: ${formatCount(f.ceilingWaited)} waited, ${formatCount(f.unsent)} unsent`);
  // the page's format (text/format.ts percent): 9.9 % reads 9.9 % in both
  if (cell.goodput && cell.goodput.requests.judged > 0) parts.push(`goodput ${percent(cell.goodput.requests.share)}`);
  // as a decode cell's line: the status is the measurement's; its checks and the baseline's may still fail it
  const failing = (cell.thresholdFailures?.length ?? 0) + (cell.baselineFailures?.length ?? 0);
  if (failing > 0) parts.push(`fails ${failing} check${failing === 1 ? '' : 's'}`);
  return `${head} · ${parts.join(' · ')}`;
}
