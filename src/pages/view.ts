/**
 * The view model every page shares (the Markdown page, the step summary, the HTML report, the
 * comparison page): the grid's axes, the cells that count, the words for each status and for a
 * missing cell, the shared column names and notes. Plain text: each page escapes it for its own
 * format (src/pages/escape.ts), so the words are the same everywhere.
 */
import { plannedCellKeys } from '../results/collect.js';
import { ABSENT, formatCount, formatNumber, percent } from '../text/format.js';
import { overCapacitySum } from '../text/over-capacity.js';
import { cellKey, parseCellKey, rateCellKey } from '../shapes/labels.js';
import type { CapacityRow, CellResult, CellStatus, InterTokenLatency, LongestGap, RateCellResult, RateCellStatus, RunInfo, SpeedMatrixResult, WorkloadInfo } from '../shapes/result.js';
import { LONG_GAP_MIN_MS, LONG_GAP_MULTIPLE, longGap } from '../metrics/gaps.js';

/** shown for a planned cell or prefill row that has not finished yet (partial page) */
export const NOT_YET = '…';
/** shown for a planned cell that never ran (final page of an interrupted or filtered run) */
export const NOT_RUN = 'Not run';

export const STATUS_LABELS: Record<CellStatus, string> = {
  valid: 'Valid',
  'over-capacity': 'Over capacity',
  'requests-queued': 'Requests queued',
  'warmup-timed-out': 'Warm-up timed out',
  errors: 'Errors',
  'client-limited': 'Client-limited',
  'stream-buffered': 'Stream buffered',
  'not-run': 'Not run',
};

/** Legend sentences, in the order they are listed. */
export const STATUS_LEGEND: ReadonlyArray<[CellStatus, string]> = [
  ['requests-queued', 'the server could not run all requests at once, so some waited in a queue.'],
  ['over-capacity', "not run because this many requests at this context would exceed the server's KV cache."],
  ['warmup-timed-out', 'the server did not become idle before the cell, or not every request was streaming before the window, within the timeout; measured anyway.'],
  ['errors', 'one or more requests failed inside the cell (count in brackets); the figures cover the rest.'],
  ['client-limited', 'the load generator itself fell behind (event-loop delay over its bound), so the figures may be wrong.'],
  ['stream-buffered', "the tokens arrived in bursts no engine produces: something between the server and the load generator (a proxy's buffering, a gzip tier) held the stream, so TTFT and the time between tokens are its, not the server's."],
  ['not-run', 'the cell could not start (the reason follows); nothing was measured.'],
];

/** The run's workload, where it is one (not the synthetic prompts of METHOD.md's rows); undefined otherwise, and for files written before workloads. */
export function runWorkload(info: Pick<RunInfo, 'run'>): WorkloadInfo | undefined {
  const w = info.run.workload;
  return w && w.kind !== 'synthetic' ? w : undefined;
}

/**
 * What a grid's rows are: context lengths, or a workload's one row and what its key is (a
 * workload's prompts are not one length: docs/workloads.md), so a file's row keyed 0 does not read
 * as empty prompts.
 */
export function rowsAreText(result: Pick<SpeedMatrixResult, 'info'>): string {
  const w = runWorkload(result.info);
  if (!w) return 'rows are context length';
  const key =
    w.kind === 'file'
      ? `its prompts from ${w.file?.name ?? 'a file'}, each of its own length; keyed 0`
      : w.kind === 'lengths'
        ? 'keyed by its mean prompt length'
        : w.kind === 'sharedPrefix'
          ? 'keyed by its prefix + suffix'
          : 'keyed by its first turn, system + user';
  return `the row is the workload's (${key})`;
}

export const TTFT_NOTE = "TTFT is measured after the benchmark warms the server's prompt cache, so it mostly excludes prefill.";

/** The TTFT note under the decode matrix: the synthetic prompts' (the reference pages'), or a workload's, whose prompts are its own */
export function ttftNote(result: Pick<SpeedMatrixResult, 'info'>): string {
  const w = runWorkload(result.info);
  if (!w) return TTFT_NOTE;
  return `Each request's prompt comes from the workload (${w.text}), so TTFT includes its prefill, less what the server's prefix cache held (the Workload section's hit rate).`;
}

/**
 * Under the legend of a workload's page: its Over capacity cells with their sums, where a request is
 * not the row's context and the max output (the legend's "at this context"): a lengths or file
 * row's largest request, a multiTurn row's last turn. Undefined when there are none.
 */
export function workloadOverCapacityNote(result: Pick<SpeedMatrixResult, 'info' | 'cells'>): string | undefined {
  const w = runWorkload(result.info);
  if (!w) return undefined;
  const max = result.info.run.maxOutputTokens;
  const sums = matrixCells(result)
    .filter((c) => c.status === 'over-capacity' && c.evidence.capacity?.requestTokens !== undefined && c.evidence.capacity.requestTokens !== c.context + max)
    .map((c) => `${cellKey(c.context, c.concurrency)}: ${overCapacitySum(c, max)!}`);
  if (sums.length === 0) return undefined;
  const largest = w.kind === 'multiTurn' ? "a conversation's last turn (every reply before it at the max output; at most the max model length)" : "the workload's largest request";
  return `A workload row's requests are not its context: its Over capacity weighs ${largest}. ${sums.join('; ')}.`;
}

export const ALL_MEASUREMENTS_COLUMNS = [
  'Phase', 'Context', 'Requests at once', 'Status', 'Total tok/s', 'Per request tok/s', 'TTFT',
  'Time between tokens', 'Average active requests', 'Completed requests', 'Output tokens', 'Measured for',
  'Failed requests', 'Client active',
] as const;

/** The grid's rows and columns: every context and concurrency of the run, of a finished cell or of a planned one, ascending. */
export function gridAxes(result: SpeedMatrixResult): { contexts: number[]; levels: number[] } {
  const planned = plannedCellKeys(result.info);
  return {
    contexts: sortedUnique([...result.info.run.contexts, ...matrixCells(result).map((c) => c.context), ...planned.map((k) => parseCellKey(k).context)]),
    levels: sortedUnique([...result.info.run.concurrency, ...matrixCells(result).map((c) => c.concurrency), ...planned.map((k) => parseCellKey(k).concurrency)]),
  };
}

/** The word for a planned cell or row without a result: not yet (partial page), or never run (final page). */
export function missingText(result: Pick<SpeedMatrixResult, 'partial'>): string {
  return result.partial ? NOT_YET : NOT_RUN;
}

/** the matrix's planned cells, without the capacity search's adaptive ones */
export function matrixCells(result: Pick<SpeedMatrixResult, 'cells'>): CellResult[] {
  return result.cells.filter((c) => !c.adaptive);
}

/** matrix cells that finished: measured or Over capacity, not Not run */
export function finishedCells(result: Pick<SpeedMatrixResult, 'cells'>): number {
  return matrixCells(result).filter((c) => c.status !== 'not-run').length;
}

export const GOODPUT_COLUMN = 'Goodput';

/** "92 % (95 % of tokens)", or — without goodput */
export function goodputText(cell: Pick<CellResult, 'goodput'> | undefined): string {
  const g = cell?.goodput;
  if (!g || g.requests.judged === 0) return ABSENT;
  return `${percent(g.requests.share)} (${percent(g.tokens.share)} of tokens)`;
}

/** Whether a cell met the SLO, in words: "yes", "no: <what bound>", or — when it was not judged. */
export function sloMeetsText(cell: Pick<CellResult, 'slo'> | Pick<RateCellResult, 'slo'>): string {
  if (!cell.slo) return ABSENT;
  return cell.slo.meets ? 'yes' : `no: ${cell.slo.binding?.detail ?? ''}`;
}

/**
 * A capacity row's goodput: the confirming cell's where the answer was measured once more (it is
 * not the search's cell at the same concurrency, listed with its own), said so.
 */
export function capacityGoodputText(row: Pick<CapacityRow, 'goodput' | 'confirmation'>): string {
  const text = goodputText(row);
  return text !== ABSENT && row.confirmation !== undefined ? `${text}, confirming cell` : text;
}

export const SPREAD_COLUMN = 'Spread over repeats';

/**
 * The words of a cell's statuses, the same on every page: every non-valid status, the main one
 * first, Errors with their count, Requests queued judged client-side said so, Not run with its
 * reason. Plain text (the reason is the server's or the run's own): each page escapes it.
 */
export function statusWords(cell: Pick<CellResult, 'status' | 'statuses' | 'evidence' | 'figures' | 'notRunReason'>): string {
  if (cell.status === 'not-run') return cell.notRunReason ? `${STATUS_LABELS['not-run']}: ${cell.notRunReason}` : STATUS_LABELS['not-run'];
  const all = [cell.status, ...cell.statuses.filter((s) => s !== cell.status)].filter((s) => s !== 'valid');
  if (all.length === 0) return STATUS_LABELS.valid;
  return all
    .map((s) => {
      // judged from the client's own timelines: the server exposes no running or waiting figure
      if (s === 'requests-queued' && cell.evidence.queued?.source === 'client') return `${STATUS_LABELS[s]} (client-side)`;
      if (s !== 'errors') return STATUS_LABELS[s];
      const count = cell.evidence.errors?.count ?? cell.figures?.failedRequests;
      return count === undefined ? STATUS_LABELS.errors : `${STATUS_LABELS.errors} (${count})`;
    })
    .join(', ');
}

/** Is a cell's timing partly the client's (Client-limited, as its main status or another)? Its chart point is drawn hollow. */
export function clientLimited(cell: { statuses: readonly string[] }): boolean {
  // a cell's statuses hold its main status too
  return cell.statuses.includes('client-limited');
}

/** A chart description's sentence where some of its points are hollow (clientLimited), or ''. */
export function hollowNote(cells: ReadonlyArray<{ statuses: readonly string[] }>): string {
  return cells.some(clientLimited) ? " Hollow points: Client-limited cells, whose timings are partly the client's." : '';
}

/** statusWords without a Not run cell's reason: for a line or a table cell that names the status only */
export function shortStatusWords(cell: Pick<CellResult, 'status' | 'statuses' | 'evidence' | 'figures'>): string {
  return cell.status === 'not-run' ? STATUS_LABELS['not-run'] : statusWords(cell);
}

/**
 * `12 closed after finish_reason without [DONE], 3 unterminated last event (of 40 completed)`; ''
 * when every stream ended normally. `code` formats `[DONE]` (a Markdown code span by default; the
 * HTML report passes its own).
 */
export function streamEndingsText(
  e: { done: number; closeAfterFinish: number; unterminatedLast: number },
  code: (text: string) => string = (t) => `\`${t}\``,
): string {
  const parts: string[] = [];
  if (e.closeAfterFinish > 0) parts.push(`${formatCount(e.closeAfterFinish)} closed after finish_reason without ${code('[DONE]')}`);
  if (e.unterminatedLast > 0) parts.push(`${formatCount(e.unterminatedLast)} unterminated last event`);
  if (parts.length === 0) return '';
  return `${parts.join(', ')} (of ${formatCount(e.done + e.closeAfterFinish + e.unterminatedLast)} completed)`;
}

export function sortedUnique(xs: readonly number[]): number[] {
  return [...new Set(xs)].sort((a, b) => a - b);
}

export function isText(x: string | undefined): x is string {
  return x !== undefined && x !== '';
}

// ---- open-loop rate cells (matrix.rates) ----------------------------------------------------

/** The words of each rate cell status, the same on every page. */
export const RATE_STATUS_LABELS: Record<RateCellStatus, string> = {
  valid: 'Valid',
  saturated: 'Saturated',
  'over-capacity': 'Over capacity',
  'client-limited': 'Client-limited',
  errors: 'Errors',
  'not-run': 'Not run',
};

/** Legend sentences of the rate statuses, in the order they are listed. */
export const RATE_STATUS_LEGEND: ReadonlyArray<[RateCellStatus, string]> = [
  ['saturated', "the server could not keep up: the requests in the system grew through the window (a trend test at p < 0.01); a context's higher rates are then not run."],
  ['over-capacity', "not run because the KV cache cannot hold the requests Little's law puts in flight at this rate."],
  ['client-limited', 'the load generator could not send on time (dispatch delay p99 over its bound, or the in-flight ceiling held requests back), so the rate sent is not the rate offered; or it could not time its tokens (its own timing or CPU over the decode cells\' bounds). The notes under the table say which.'],
  ['errors', 'one or more requests failed inside the cell (count in brackets); the figures cover the rest.'],
  ['not-run', 'nothing was measured, for the reason that follows: a rate above the context\'s first Saturated one, a cell that could not start, or a window no request fell in.'],
];

/** The open-loop section's title, on every page. */
export const RATE_SECTION = 'Open-loop load';

/**
 * The words of a rate cell's statuses, the same on every page: every non-valid status, the main
 * one first, Errors with their count, Not run with its reason. Plain text: each page escapes it.
 */
export function rateStatusWords(cell: Pick<RateCellResult, 'status' | 'statuses' | 'evidence' | 'figures' | 'notRunReason'>): string {
  if (cell.status === 'not-run') return cell.notRunReason ? `${RATE_STATUS_LABELS['not-run']}: ${cell.notRunReason}` : RATE_STATUS_LABELS['not-run'];
  // the window was too short to judge Saturated (judge/saturation.ts): said wherever the status is
  const notJudged = cell.evidence.saturation?.notJudged !== undefined ? ` (${SATURATION_NOT_JUDGED})` : '';
  const all = [cell.status, ...cell.statuses.filter((s) => s !== cell.status)].filter((s) => s !== 'valid');
  if (all.length === 0) return RATE_STATUS_LABELS.valid + notJudged;
  return all
    .map((s) => {
      if (s !== 'errors') return RATE_STATUS_LABELS[s];
      const count = cell.evidence.errors?.failed ?? cell.figures?.failedRequests;
      return count === undefined ? RATE_STATUS_LABELS.errors : `${RATE_STATUS_LABELS.errors} (${count})`;
    })
    .join(', ') + notJudged;
}

/** After a rate cell's status when its window was too short to judge Saturated */
export const SATURATION_NOT_JUDGED = 'Saturated not judged';

/** The rate cells whose window was too short to judge Saturated, one plain line each with the reason and the fix (judge/saturation.ts); none: [] */
export function saturationNotJudgedLines(cells: readonly RateCellResult[]): string[] {
  return cells.flatMap((c) => (c.evidence.saturation?.notJudged !== undefined ? [`${rateCellKey(c.context, c.rate)}/s: ${c.evidence.saturation.notJudged}`] : []));
}

/** The heading of those lines on the page */
export const SATURATION_NOT_JUDGED_HEAD = 'Saturated was not judged for these rate cells: their windows were too short against a request\'s latency to tell a climb in the requests in the system from a stable queue\'s wander:';

/** A rate as the pages print it: as configured (`0.5`, `2`), the unit beside it where needed. */
export function rateText(rate: number): string {
  return String(rate);
}

/**
 * The open-loop grid's axes: the contexts and rates of the rate cells, and of the run's rate
 * settings (every decode context × every configured rate is planned), ascending.
 */
export function rateAxes(result: Pick<SpeedMatrixResult, 'info' | 'rateCells'>): { contexts: number[]; rates: number[] } {
  const cells = configuredRateCells(result);
  const settings = result.info.run.rates;
  return {
    contexts: sortedUnique([...cells.map((c) => c.context), ...(settings ? result.info.run.contexts : [])]),
    rates: sortedUnique([...cells.map((c) => c.rate), ...(settings?.rates ?? [])]),
  };
}

/**
 * The configured rates' cells: the grid, the knee, the charts and the summary show these; the rate
 * capacity search's adaptive cells (`adaptive`) are shown by the rate capacity lines instead.
 */
export function configuredRateCells(result: Pick<SpeedMatrixResult, 'rateCells'>): RateCellResult[] {
  return (result.rateCells ?? []).filter((c) => !c.adaptive);
}

/** Per context, the first rate (ascending) whose cell is Saturated: the knee of its latency curve. */
export function kneeRates(cells: readonly RateCellResult[]): Map<number, number> {
  const knees = new Map<number, number>();
  for (const c of [...cells].sort((a, b) => a.context - b.context || a.rate - b.rate)) {
    if ((c.status === 'saturated' || c.statuses.includes('saturated')) && !knees.has(c.context)) knees.set(c.context, c.rate);
  }
  return knees;
}

/** A rate grid's cell at another context's sweep rate: each context sweeps rates of its own (docs/open-loop.md). */
const NOT_IN_SWEEP = '—';

/**
 * Per context, whether a rate it has no cell at was never planned for it: in a sweep, a context
 * with cells of its own swept rates of its own, so another context's rate is none of its
 * (docs/open-loop.md). A context with no cell yet, and every context with configured rates, is
 * shown as the matrix shows a missing cell (missingRateText).
 */
export function notPlannedRate(result: Pick<SpeedMatrixResult, 'info' | 'rateCells'>): (context: number) => boolean {
  if (!result.info.run.rates?.sweep) return () => false;
  const swept = new Set(configuredRateCells(result).map((c) => c.context));
  return (context) => swept.has(context);
}

/** What a rate grid shows where a context has no cell at a rate, per context: NOT_IN_SWEEP where none was planned (notPlannedRate), else not yet (a partial page) or not run. */
export function missingRateText(result: Pick<SpeedMatrixResult, 'partial' | 'info' | 'rateCells'>): (context: number) => string {
  const missing = missingText(result);
  const notPlanned = notPlannedRate(result);
  return (context) => (notPlanned(context) ? NOT_IN_SWEEP : missing);
}

/** The grid's caption addition in a sweep, or '' (plain text). */
export function sweepGridNote(result: Pick<SpeedMatrixResult, 'info'>): string {
  return result.info.run.rates?.sweep ? `; each context sweeps rates of its own, so ${NOT_IN_SWEEP} marks another context's rate` : '';
}

/** How the schedules were drawn: `poisson arrivals, seed 1, no ramp, at most 512 requests in flight`. */
export function rateSettingsText(result: Pick<SpeedMatrixResult, 'info'>): string | undefined {
  const s = result.info.run.rates;
  if (!s) return undefined;
  const ramp = s.rampS > 0 ? `a ${s.rampS} s linear ramp before each window` : 'no ramp';
  return `${s.arrival} arrivals, seed ${s.seed}, ${ramp}, at most ${s.maxInFlight} requests in flight`;
}

/** A distribution in ms, median / p90 / p99 with `digits` decimals, or — */
export function distText(d: { median: number; p90: number; p99: number } | undefined, digits: number): string {
  return d ? `${[d.median, d.p90, d.p99].map((x) => formatNumber(x, digits)).join(' / ')} ms` : ABSENT;
}

/** A cell's ITL: median / p90 / p95 / p99 / max in ms, or — */
export function itlText(d: InterTokenLatency | undefined): string {
  if (!d) return ABSENT;
  return `${[d.median, d.p90, d.p95, d.p99, d.max].map((x) => formatNumber(x, 1)).join(' / ')} ms`;
}

/** A longest gap in words: `3,012 ms (301 median gaps) in request r-17, 4.2 s into the window`. */
export function longestGapText(g: LongestGap): string {
  const times = g.medianGaps !== null ? ` (${formatNumber(g.medianGaps, g.medianGaps < 10 ? 1 : 0)} median gaps)` : '';
  if (g.open) return `${formatNumber(g.ms, 1)} ms${times} in request ${g.requestId}, still silent when the window closed`;
  return `${formatNumber(g.ms, 1)} ms${times} in request ${g.requestId}, ${formatNumber(g.atS, 1)} s into the window`;
}

/** The page's note on cells whose longest gap is LONG_GAP_MULTIPLE median gaps or more, and LONG_GAP_MIN_MS or more (not a status: the server did it). */
export function longGapLines(cells: readonly CellResult[]): string[] {
  const flagged = cells.filter((c) => longGap(c.figures?.longestGap));
  if (flagged.length === 0) return [];
  return [
    `Stalls inside streams: these cells' longest gap between two tokens of one request is ${LONG_GAP_MULTIPLE} or more times their median gap, and ${LONG_GAP_MIN_MS} ms or more. The server paused a stream (preemption, a prefill between decode steps, a scheduler hiccup); the figures are right, and the time between tokens, a mean per request, averages such a pause away. ITL is every gap (median / p90 / p95 / p99 / max):`,
    ...flagged.map((c) => `${cellKey(c.context, c.concurrency)}: longest ${longestGapText(c.figures!.longestGap!)}; ITL ${itlText(c.figures!.interTokenLatencyMs)}`),
  ];
}
