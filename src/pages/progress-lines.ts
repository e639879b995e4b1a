/**
 * Pure: one-line progress messages the reporter prints while a run goes.
 * `[speed-matrix] 8K/16: Valid · 857.3 tok/s total · 53.7 tok/s/req · TTFT 422 ms · TBT 18.6 ms · active 24.0 · 12/40 done`
 * Statuses in the pages' words (view.ts), as the rate cells' lines give them.
 */
import { ABSENT, formatCount, formatMs, formatMsPrecise, formatNumber, formatPrefillRate, formatRate, percent } from '../text/format.js';
import { cellKey, rateCellKey, testNames } from '../shapes/labels.js';
import { plannedCellKeys } from '../results/collect.js';
import type { CapacityRow, CellResult, PrefillRowResult, RateCapacityRow, RateCellResult, SpeedMatrixResult } from '../shapes/result.js';
import { describeCapacity, describeRateCapacity } from '../text/capacity-line.js';
import { overCapacitySum, rateOverCapacitySum } from '../text/over-capacity.js';
import { formatRequestRate } from './rate-rows.js';
import { matrixCells, RATE_STATUS_LABELS, rateStatusWords, STATUS_LABELS, statusWords } from './view.js';

export const PREFIX = '[speed-matrix]';

/**
 * `maxOutputTokens`: the run's, for an Over capacity cell's sum (its request when the evidence has
 * none); `left`: timeLeftText's words, after the count.
 */
export function cellLine(cell: CellResult, done: number, total: number | undefined, maxOutputTokens?: number, left?: string): string {
  const head = `${PREFIX} ${cellKey(cell.context, cell.concurrency)}: ${statusWords(cell)}`;
  const progress = `${done}/${total ?? '?'} done${left !== undefined ? ` · ${left}` : ''}`;
  const f = cell.figures;
  if (!f) {
    const sum = cell.status === 'over-capacity' && maxOutputTokens !== undefined ? overCapacitySum(cell, maxOutputTokens) : undefined;
    return `${head} · ${sum !== undefined ? `${sum} · ` : ''}${progress}`;
  }
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

/**
 * The progress line's cell counts, from the plan (the whole matrix's). `planned`: its cells, with
 * `runsHere` (the names of the tests this process runs: a shard's, or what -t leaves in) only
 * those, and those with a result already (kept from a resumed run): the line's N/M. `left`: of
 * those, the ones without a result yet and not found Over capacity by the plan (those take no
 * window): what the time left counts.
 */
export function plannedCellCounts(result: Pick<SpeedMatrixResult, 'info' | 'cells'>, runsHere?: ReadonlySet<string>): { planned: number; left: number } {
  const have = new Set(matrixCells(result).map((c) => cellKey(c.context, c.concurrency)));
  const over = new Set(result.info.plannedOverCapacity ?? []);
  let planned = 0;
  let left = 0;
  for (const k of plannedCellKeys(result.info)) {
    const here = runsHere === undefined || runsHere.has(testNames.decode(k));
    if (have.has(k)) planned++;
    else if (here) {
      planned++;
      if (!over.has(k)) left++;
    }
  }
  return { planned, left };
}

/**
 * `about 9 min left`: the cells left at the mean time of the cells measured so far (window, gate,
 * scout and drain; a larger context's cells take longer, so it is an estimate). `for the matrix
 * cells` where the run has more to do after them (rate cells, capacity searches). Undefined before
 * a cell was measured, and with none left.
 */
export function timeLeftText(meanCellMs: number | undefined, cellsLeft: number, more: boolean): string | undefined {
  if (meanCellMs === undefined || !(meanCellMs > 0) || cellsLeft <= 0) return undefined;
  const ms = meanCellMs * cellsLeft;
  const minutes = ms / 60_000;
  const amount = minutes < 1 ? 'under a minute' : minutes < 90 ? `about ${Math.round(minutes)} min` : `about ${formatNumber(minutes / 60, 1)} h`;
  return `${amount} left${more ? ' for the matrix cells' : ''}`;
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
  if (!f) {
    const sum = cell.status === 'over-capacity' ? rateOverCapacitySum(cell) : undefined;
    return sum !== undefined ? `${head} · ${sum}` : head;
  }
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

/** How the matrix's tests ended: `vitest bench` prints no tally of passed and failed tests. */
export interface TestTally {
  passed: number;
  failed: number;
  skipped: number;
  /** the failed tests' names, in run order */
  failedNames: string[];
}

/** `9 Valid, 1 Over capacity, 2 Requests queued`: each status's count, in the labels' order (view.ts STATUS_LABELS). */
function statusCounts<S extends string>(statuses: S[], labels: Record<S, string>): string {
  const order = Object.keys(labels) as S[];
  return order
    .map((s) => [s, statuses.filter((x) => x === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${labels[s]}`)
    .join(', ');
}

/**
 * The run's last line, after the pages are written:
 * `[speed-matrix] finished: 12 of 12 cells (9 Valid, 1 Over capacity, 2 Requests queued) · 2 prefill rows (2 Valid) · tests: 12 passed, 1 failed, 1 skipped (decode 0/2)`
 * (an Over capacity cell is a skipped test). Counts by the cells' own status (the first of their
 * statuses), leaving out the capacity search's adaptive cells; an interrupted run says so.
 */
export function runEndLine(result: Pick<SpeedMatrixResult, 'cells' | 'prefill' | 'rateCells' | 'partial'>, planned: number, tally: TestTally | undefined): string {
  const cells = matrixCells(result);
  const finished = cells.filter((c) => c.status !== 'not-run');
  const parts = [
    `${result.partial ? 'interrupted' : 'finished'}: ${finished.length} of ${Math.max(planned, cells.length)} cells${finished.length > 0 ? ` (${statusCounts(finished.map((c) => c.status), STATUS_LABELS)})` : ''}`,
  ];
  // LLM_BENCH_RESUME: what this run kept rather than measured
  const kept = finished.filter((c) => c.resumed === true).length + result.prefill.filter((r) => r.resumed === true).length;
  if (kept > 0) parts.push(`${kept} kept from the resumed run`);
  const rates = (result.rateCells ?? []).filter((c) => !c.adaptive && c.status !== 'not-run');
  if (rates.length > 0) parts.push(`${rates.length} rate cell${rates.length === 1 ? '' : 's'} (${statusCounts(rates.map((c) => c.status), RATE_STATUS_LABELS)})`);
  const prefill = result.prefill;
  if (prefill.length > 0) parts.push(`${prefill.length} prefill row${prefill.length === 1 ? '' : 's'} (${statusCounts(prefill.map((r) => r.status), STATUS_LABELS)})`);
  if (tally !== undefined) {
    const counts = [`${tally.passed} passed`, ...(tally.failed > 0 ? [`${tally.failed} failed`] : []), ...(tally.skipped > 0 ? [`${tally.skipped} skipped`] : [])];
    const shown = tally.failedNames.slice(0, 5);
    const more = tally.failedNames.length - shown.length;
    const names = shown.length > 0 ? ` (${shown.join(', ')}${more > 0 ? `, and ${more} more` : ''})` : '';
    parts.push(`tests: ${counts.join(', ')}${names}`);
  }
  return `${PREFIX} ${parts.join(' · ')}`;
}
