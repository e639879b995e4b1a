/**
 * Pure: a cell measured n times (LLM_BENCH_REPEAT=n) → one set of figures and the spread of the
 * gated figures (its one status over the repeats is the judge's: src/judge/repeat.ts).
 *
 * Figures: every numeric field is the median over the repeats that have it (integer fields —
 * token and request counts, distribution sample counts — rounded to a whole number); a field no
 * repeat has stays absent; `activeRequestsDisagree` is true when any repeat disagreed; the token,
 * active-request and running sources are the first repeat's; the ITL max and the longest gap are the
 * largest over the repeats (a stall in one repeat stays visible); each chosen percentile
 * (LLM_BENCH_PERCENTILES) is its median over the repeats, as the fixed quantiles.
 * Spread: per gated figure the values in run order, min, max and (max − min) / 2 / median.
 * A prefill row measured n times (each with its own cold prompt): its figures are the medians over
 * the repeats that gave figures, with the same spread (`prefillRepeats`).
 */
import { median } from './stats.js';
import type { CellFigures, Distribution, InterTokenLatency, LongestGap, Percentiles, PrefillFigures } from '../shapes/result.js';
import type { CellRepeats, FigureSpread, PrefillRepeats } from '../shapes/result.js';
import { maxOf, minOf } from '../extent.js';

function medianOf(values: Array<number | undefined>, integer = false): number | undefined {
  const present = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
  const m = median(present);
  return m === undefined ? undefined : integer ? Math.round(m) : m;
}

/** Each chosen percentile's median over the repeats that have it (LLM_BENCH_PERCENTILES); undefined when none has any. */
function medianPercentiles(list: ReadonlyArray<{ percentiles?: Percentiles }>): { percentiles?: Percentiles } {
  const names = new Set(list.flatMap((d) => Object.keys(d.percentiles ?? {})));
  if (names.size === 0) return {};
  const out: Percentiles = {};
  for (const name of names) out[name] = medianOf(list.map((d) => d.percentiles?.[name]))!;
  return { percentiles: out };
}

function medianDistribution(list: Array<Distribution | undefined>): Distribution | undefined {
  const present = list.filter((d): d is Distribution => d !== undefined);
  if (present.length === 0) return undefined;
  return {
    median: medianOf(present.map((d) => d.median))!,
    p90: medianOf(present.map((d) => d.p90))!,
    p99: medianOf(present.map((d) => d.p99))!,
    samples: medianOf(present.map((d) => d.samples), true)!,
    ...medianPercentiles(present),
  };
}

/** ITL over repeats: each quantile's median, the largest max, the median gap count. */
function medianItl(list: Array<InterTokenLatency | undefined>): InterTokenLatency | undefined {
  const present = list.filter((d): d is InterTokenLatency => d !== undefined);
  if (present.length === 0) return undefined;
  const of = (k: 'median' | 'p90' | 'p95' | 'p99') => medianOf(present.map((d) => d[k]))!;
  return { median: of('median'), p90: of('p90'), p95: of('p95'), p99: of('p99'), max: maxOf(present.map((d) => d.max)), gaps: medianOf(present.map((d) => d.gaps), true)!, ...medianPercentiles(present) };
}

/** The longest of the repeats' longest gaps: a stall in one repeat stays visible. */
function longestOf(list: Array<LongestGap | undefined>): LongestGap | undefined {
  let out: LongestGap | undefined;
  for (const g of list) if (g && (!out || g.ms > out.ms)) out = g;
  return out;
}

/** Median figures of the repeats (see the file header). Throws on an empty list. */
export function medianFigures(list: readonly CellFigures[]): CellFigures {
  const first = list[0];
  if (!first) throw new RangeError('medianFigures needs at least one repeat');
  if (list.length === 1) return first;
  const pick = <K extends keyof CellFigures>(k: K) => list.map((f) => f[k] as number | undefined);
  const out: CellFigures = {
    outputTokens: medianOf(pick('outputTokens'), true)!,
    tokenSource: first.tokenSource,
    measuredForS: medianOf(pick('measuredForS'))!,
    totalTokensPerSecond: medianOf(pick('totalTokensPerSecond'))!,
    clientActiveRequests: medianOf(pick('clientActiveRequests'))!,
    averageActiveRequests: medianOf(pick('averageActiveRequests'))!,
    averageActiveRequestsSource: first.averageActiveRequestsSource,
    activeRequestsDisagree: list.some((f) => f.activeRequestsDisagree),
    completedRequests: medianOf(pick('completedRequests'), true)!,
    failedRequests: medianOf(pick('failedRequests'), true)!,
    startedRequests: medianOf(pick('startedRequests'), true)!,
  };
  const optional = {
    perRequestTokensPerSecond: medianOf(pick('perRequestTokensPerSecond')),
    timeBetweenTokensMs: medianDistribution(list.map((f) => f.timeBetweenTokensMs)),
    ttftMs: medianDistribution(list.map((f) => f.ttftMs)),
    interTokenLatencyMs: medianItl(list.map((f) => f.interTokenLatencyMs)),
    longestGap: longestOf(list.map((f) => f.longestGap)),
    tpotMs: medianDistribution(list.map((f) => f.tpotMs)),
    e2eLatencyMs: medianDistribution(list.map((f) => f.e2eLatencyMs)),
    requestsPerSecond: medianOf(pick('requestsPerSecond')),
    serverActiveRequests: medianOf(pick('serverActiveRequests')),
    maxWaitingRequests: medianOf(pick('maxWaitingRequests')),
    promptTokens: medianOf(pick('promptTokens')),
    clientRunningRequests: medianOf(pick('clientRunningRequests')),
    clientWaitingRequests: medianOf(pick('clientWaitingRequests')),
    clientMaxWaitingRequests: medianOf(pick('clientMaxWaitingRequests')),
  };
  if (first.runningFrom !== undefined) out.runningFrom = first.runningFrom;
  for (const [k, v] of Object.entries(optional)) {
    if (v !== undefined) (out as unknown as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** Spread of one figure's values (undefined when no repeat has it). */
export function figureSpread(values: Array<number | undefined>): FigureSpread | undefined {
  const present = values.filter((v): v is number => v !== undefined && Number.isFinite(v));
  if (present.length === 0) return undefined;
  const min = minOf(present);
  const max = maxOf(present);
  const m = median(present)!;
  const spread: FigureSpread = { values: present, min, max };
  if (m !== 0) spread.relativeHalfRange = (max - min) / 2 / Math.abs(m);
  return spread;
}

/** The spread of each named figure that some repeat has (figures no repeat has are left out). */
function spreadsOf<K extends string>(values: Record<K, Array<number | undefined>>): Partial<Record<K, FigureSpread>> {
  const spread: Partial<Record<K, FigureSpread>> = {};
  for (const name of Object.keys(values) as K[]) {
    const s = figureSpread(values[name]);
    if (s) spread[name] = s;
  }
  return spread;
}

/** The `repeats` block of a cell measured `list.length` times. */
export function repeatsOf(list: readonly CellFigures[]): CellRepeats {
  const spread = spreadsOf({
    totalTokensPerSecond: list.map((f) => f.totalTokensPerSecond),
    perRequestTokensPerSecond: list.map((f) => f.perRequestTokensPerSecond),
    ttftMs: list.map((f) => f.ttftMs?.median),
    timeBetweenTokensMs: list.map((f) => f.timeBetweenTokensMs?.median),
  });
  return { count: list.length, spread };
}

/** One request of a prefill row: its figures (when it got that far) and whether it ended normally. */
export interface PrefillAttempt {
  figures?: PrefillFigures;
  ok: boolean;
}

/**
 * A prefill row's requests → median figures over those that have figures (absent when none has)
 * and the `repeats` block: requests sent, failed (did not end normally, or gave no figures),
 * spread of prompt tok/s and TTFT.
 */
export function prefillRepeats(list: readonly PrefillAttempt[]): { figures?: PrefillFigures; repeats: PrefillRepeats } {
  if (list.length === 0) throw new RangeError('prefillRepeats needs at least one repeat');
  const ok = list.flatMap((a) => (a.figures ? [a.figures] : []));
  const spread = spreadsOf({
    promptTokensPerSecond: ok.map((f) => f.promptTokensPerSecond),
    ttftMs: ok.map((f) => f.ttftMs),
  });
  const repeats: PrefillRepeats = { count: list.length, failed: list.filter((a) => !a.ok || a.figures === undefined).length, spread };
  if (ok.length === 0) return { repeats };
  const figures: PrefillFigures = {
    promptTokens: medianOf(ok.map((f) => f.promptTokens), true)!,
    ttftMs: medianOf(ok.map((f) => f.ttftMs))!,
    promptTokensPerSecond: medianOf(ok.map((f) => f.promptTokensPerSecond))!,
  };
  if (ok.some((f) => f.promptTokensFrom === 'local-tokenizer')) figures.promptTokensFrom = 'local-tokenizer';
  return { figures, repeats };
}
