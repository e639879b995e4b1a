/**
 * A cell against the SLO: which constraints its figures meet, which they miss and by how much, and
 * the one that binds (the miss furthest past its bound, relative to it). Over capacity binds as
 * kvCapacity; a cell without figures to judge (not run, Client-limited) as unmeasured. An
 * open-loop rate cell is judged by the same constraints on its own figures (rateSloVerdict). Pure.
 */
import { formatCount, formatMs, formatNumber } from '../text/format.js';
import { rateOverCapacitySum } from '../text/over-capacity.js';
import type { CellResult, Distribution, InterTokenLatency, LongestGap, RateCellResult, Slo, SloMiss, SloVerdict } from '../shapes/result.js';
import { perRequestTokensPerSecondAt } from '../metrics/figures.js';
import { appendAll } from '../extent.js';

const STAT_LABEL: Record<string, string> = { median: '', p10: ' p10', p1: ' p1', p90: ' p90', p95: ' p95', p99: ' p99' };

/**
 * How far past its bound a miss is, as a ratio that treats minimums and maximums alike: a maximum
 * missed by value / bound − 1 (TTFT 4,000 ms against 2,000 → 1), a minimum by bound / value − 1
 * (2 tok/s against 20 → 9), failed requests by the count over the bound per allowed one (at least
 * one). Infinity for misses without a value.
 */
function excess(m: SloMiss): number {
  if (m.value === undefined || m.bound === undefined) return Infinity;
  if (m.constraint === 'failedRequests') return (m.value - m.bound) / Math.max(m.bound, 1);
  const minimum = m.constraint === 'perRequestTokensPerSecond' || m.constraint === 'goodput';
  if (minimum) return m.value > 0 ? m.bound / m.value - 1 : Infinity;
  return m.bound > 0 ? m.value / m.bound - 1 : Infinity;
}

/**
 * `x` as `format` shows it, unless that reads the same as `other` (44.2 < 44.2): then with the
 * digits that tell them apart.
 */
function apart(x: number | undefined, other: number | undefined, format: (v: number | undefined) => string): string {
  if (x === undefined || other === undefined || format(x) !== format(other)) return format(x);
  for (let digits = 2; digits <= 6; digits++) {
    if (x.toFixed(digits) !== other.toFixed(digits)) return x.toFixed(digits);
  }
  return String(x);
}

/** The verdict of one cell against the SLO (the rule in this file's header). */
export function sloVerdict(cell: CellResult, slo: Slo): SloVerdict {
  const misses: SloMiss[] = [];
  if (cell.status === 'over-capacity') {
    const cap = cell.evidence.capacity;
    const detail = cap
      ? `${cell.concurrency} would not fit: ${cell.concurrency} × ${cap.requestTokens !== undefined ? `${formatCount(cap.requestTokens)} tokens a request` : `(${formatCount(cell.context)} + max output)`} = ${formatCount(cap.requiredTokens)} tokens > KV capacity ${formatCount(cap.kvCapacityTokens)}`
      : `${cell.concurrency} would not fit in the KV cache`;
    misses.push({ constraint: 'kvCapacity', label: 'KV capacity', detail });
  } else if (!cell.figures || cell.status === 'not-run') {
    misses.push({ constraint: 'unmeasured', label: 'not measured', detail: `${cell.contextLabel}/${cell.concurrency} has no figures (${cell.status})` });
  } else if (cell.status === 'client-limited') {
    misses.push({ constraint: 'unmeasured', label: 'Client-limited', detail: `${cell.contextLabel}/${cell.concurrency} is Client-limited: its figures may be wrong` });
  } else if (cell.status === 'stream-buffered') {
    misses.push({ constraint: 'unmeasured', label: 'Stream buffered', detail: `${cell.contextLabel}/${cell.concurrency}'s stream was buffered on the way: its TTFT and time between tokens are the proxy's` });
  } else {
    const f = cell.figures;
    appendAll(misses, figureMisses({ perRequestTokensPerSecond: f.perRequestTokensPerSecond, timeBetweenTokensMs: f.timeBetweenTokensMs, ttftMs: f.ttftMs, interTokenLatencyMs: f.interTokenLatencyMs, longestGap: f.longestGap, failedRequests: f.failedRequests, goodputShare: cell.goodput?.requests.share }, slo));
  }
  return verdictOf(misses);
}

/**
 * The verdict from its misses: the binding one is the miss furthest past its bound. `last` (a
 * Saturated rate cell's) is a miss too, listed after the others, and binds only when nothing else
 * was missed.
 */
function verdictOf(misses: SloMiss[], last?: SloMiss): SloVerdict {
  const binding = misses.reduce<SloMiss | undefined>((worst, m) => (worst === undefined || excess(m) > excess(worst) ? m : worst), undefined) ?? last;
  const all = last ? [...misses, last] : misses;
  return { meets: all.length === 0, misses: all, ...(binding ? { binding } : {}) };
}

/**
 * The figures an SLO is judged on, in one shape for a decode cell and an open-loop rate cell:
 * per-request tok/s (its median; its p10 and p1 from the time between tokens' p90 and p99, as for
 * a cell), TTFT (a rate cell's from the scheduled time), time between tokens, failed requests and
 * the goodput share.
 */
export interface JudgedFigures {
  perRequestTokensPerSecond?: number;
  timeBetweenTokensMs?: Distribution;
  ttftMs?: Distribution;
  /** every gap's ITL */
  interTokenLatencyMs?: InterTokenLatency;
  /** the longest gap, or a longer silence still running at the window's end */
  longestGap?: LongestGap;
  failedRequests: number;
  goodputShare?: number;
}

/** The constraints of the SLO these figures miss. */
function figureMisses(f: JudgedFigures, slo: Slo): SloMiss[] {
  const misses: SloMiss[] = [];
  const tbt = f.timeBetweenTokensMs;
  if (slo.perRequestTokensPerSecond) {
    const { stat, min } = slo.perRequestTokensPerSecond;
    const value = perRequestTokensPerSecondAt(f, stat);
    const label = `per-request tok/s${STAT_LABEL[stat]}`;
    if (!(value !== undefined && value >= min)) {
      misses.push({ constraint: 'perRequestTokensPerSecond', label, ...(value !== undefined ? { value } : {}), bound: min, detail: `${label} ${apart(value, min, (x) => formatNumber(x, 1))} < ${apart(min, value, (x) => formatNumber(x, 1))}` });
    }
  }
  for (const [key, name] of [['ttftMs', 'TTFT'], ['timeBetweenTokensMs', 'TBT']] as const) {
    const c = slo[key];
    if (!c) continue;
    const d = key === 'ttftMs' ? f.ttftMs : tbt;
    const value = d ? d[c.stat] : undefined;
    const label = `${name}${STAT_LABEL[c.stat]}`;
    const show = key === 'ttftMs' ? formatMs : (x: number | undefined) => (x === undefined ? '—' : `${formatNumber(x, 1)} ms`);
    if (!(value !== undefined && value <= c.max)) {
      misses.push({ constraint: key, label, ...(value !== undefined ? { value } : {}), bound: c.max, detail: `${label} ${apart(value, c.max, show)} > ${apart(c.max, value, show)}` });
    }
  }
  const ms = (x: number | undefined) => (x === undefined ? '—' : `${formatNumber(x, 1)} ms`);
  if (slo.interTokenLatencyMs) {
    const { stat, max } = slo.interTokenLatencyMs;
    const value = f.interTokenLatencyMs?.[stat];
    const label = `ITL${STAT_LABEL[stat]}`;
    if (!(value !== undefined && value <= max)) {
      misses.push({ constraint: 'interTokenLatencyMs', label, ...(value !== undefined ? { value } : {}), bound: max, detail: `${label} ${apart(value, max, ms)} > ${apart(max, value, ms)}` });
    }
  }
  if (slo.maxGapMs) {
    const value = f.longestGap?.ms;
    if (!(value !== undefined && value <= slo.maxGapMs.max)) {
      misses.push({ constraint: 'maxGapMs', label: 'longest gap', ...(value !== undefined ? { value } : {}), bound: slo.maxGapMs.max, detail: `longest gap ${apart(value, slo.maxGapMs.max, ms)} > ${apart(slo.maxGapMs.max, value, ms)}` });
    }
  }
  if (slo.failedRequests && f.failedRequests > slo.failedRequests.max) {
    misses.push({ constraint: 'failedRequests', label: 'failed requests', value: f.failedRequests, bound: slo.failedRequests.max, detail: `failed requests ${f.failedRequests} > ${slo.failedRequests.max}` });
  }
  if (slo.goodput) {
    const value = f.goodputShare;
    if (!(value !== undefined && value >= slo.goodput.min)) {
      const pct = (x: number | undefined) => (x === undefined ? '—' : `${formatNumber(x * 100, 1)} %`);
      misses.push({ constraint: 'goodput', label: 'goodput', ...(value !== undefined ? { value } : {}), bound: slo.goodput.min, detail: `goodput ${pct(value)} < ${pct(slo.goodput.min)}` });
    }
  }
  return misses;
}

/**
 * The verdict of one open-loop rate cell against the SLO, on its figures: per-request tok/s, TTFT
 * from the SCHEDULED time (what a user who arrived then waited), its time between tokens, failed
 * requests and goodput. A Saturated cell never meets the SLO: its queue grew through the window,
 * and a queue that grows without bound misses any latency bound given time, whatever this window
 * happened to show; the miss of a measured figure binds where there is one. Over capacity binds as
 * kvCapacity; a Client-limited or not-run cell is unmeasured (its latencies are partly the
 * client's, or there are none).
 */
export function rateSloVerdict(cell: RateCellResult, slo: Slo): SloVerdict {
  const key = `${cell.contextLabel}@${cell.rate}/s`;
  if (cell.status === 'over-capacity') {
    const sum = rateOverCapacitySum(cell);
    const detail = sum !== undefined ? `${cell.rate}/s would not fit: ${sum}` : `${cell.rate}/s would not fit in the KV cache`;
    return verdictOf([{ constraint: 'kvCapacity', label: 'KV capacity', detail }]);
  }
  if (!cell.figures || cell.status === 'not-run') return verdictOf([{ constraint: 'unmeasured', label: 'not measured', detail: `${key} has no figures (${cell.status})` }]);
  if (cell.status === 'client-limited') return verdictOf([{ constraint: 'unmeasured', label: 'Client-limited', detail: `${key} is Client-limited: its latencies from the schedule are partly the client's` }]);
  const f = cell.figures;
  const misses = figureMisses({ perRequestTokensPerSecond: f.perRequestTokensPerSecond?.median, timeBetweenTokensMs: f.tbtMs, ttftMs: f.ttftFromScheduleMs, interTokenLatencyMs: f.interTokenLatencyMs, longestGap: f.longestGap, failedRequests: f.failedRequests, goodputShare: cell.goodput?.requests.share }, slo);
  const saturated = cell.status === 'saturated' || cell.statuses.includes('saturated');
  return saturated ? verdictOf(misses, { constraint: 'saturated', label: 'Saturated', detail: 'Saturated (the requests in the system grew through the window)' }) : verdictOf(misses);
}

/** The verdict of a concurrency with nothing to judge (a planned column with no result in this run). */
export function unmeasuredVerdict(detail: string): SloVerdict {
  const miss: SloMiss = { constraint: 'unmeasured', label: 'not measured', detail };
  return { meets: false, misses: [miss], binding: miss };
}
