/**
 * A cell's failed requests (METHOD.md "Failed requests"): errors by the window's end and stalls,
 * by code with the first message, and the requests resent on a fresh connection. Pure.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import { DEFAULTS } from '../config/defaults.js';

/** Failures of the cell up to the window's end, by code, with the first message. */
export interface ErrorSummary {
  count: number;
  byCode: Record<string, number>;
  firstMessage?: string;
}

/**
 * The stall limit of a cell: a request silent this long after its first token, inside the window,
 * has stalled. `configuredMs` (LLM_BENCH_STALL_S) when given; else max(5 s, 50 × the cell's median
 * time between tokens), at most the window (so a silence through a whole short window still counts).
 */
export function stallLimitMs(medianTbtMs: number | undefined, windowMs: number, configuredMs?: number): number {
  if (configuredMs !== undefined) return configuredMs;
  const fromTbt = medianTbtMs !== undefined ? DEFAULTS.stallLimitTbtMultiple * medianTbtMs : 0;
  return Math.min(windowMs, Math.max(DEFAULTS.stallLimitMinMs, fromTbt));
}

/**
 * A request's longest silence inside the window after its first token: the gaps between its
 * token chunks, and from its last chunk to its end (or the window's end), each clipped to the window.
 * Silence before the first token is waiting (queue, prefill), not a stall. Undefined without a first
 * token by the window's end.
 */
export function longestSilenceMs(t: RequestTimeline, windowStartMs: number, windowEndMs: number): number | undefined {
  const first = t.firstTokenMs;
  if (first === undefined || first > windowEndMs) return undefined;
  const clipped = (a: number, b: number): number => Math.max(0, Math.min(b, windowEndMs) - Math.max(a, windowStartMs));
  let longest = 0;
  let last = first;
  for (const at of t.chunkMs) {
    if (at <= last) continue;
    longest = Math.max(longest, clipped(last, at));
    last = at;
  }
  const end = t.end?.atMs ?? windowEndMs;
  return Math.max(longest, clipped(last, end));
}

/**
 * The cell's failed requests (METHOD.md "Failed requests"): requests that ended in an error up to
 * the window's end, and requests that stalled (longestSilenceMs ≥ stallLimit) without ending in
 * one, counted under code `stall` with a message saying how long. One summary, used for the figure
 * and for the Errors evidence alike.
 */
export function cellFailures(
  timelines: readonly RequestTimeline[],
  windowStartMs: number,
  windowEndMs: number,
  stallLimit?: number,
): ErrorSummary {
  const summary: ErrorSummary = { count: 0, byCode: {} };
  let firstAt = Infinity;
  const add = (code: string, atMs: number, message: string): void => {
    summary.count++;
    summary.byCode[code] = (summary.byCode[code] ?? 0) + 1;
    if (atMs < firstAt) {
      firstAt = atMs;
      summary.firstMessage = message;
    }
  };
  for (const t of timelines) {
    const failure = requestFailure(t, windowStartMs, windowEndMs, stallLimit);
    if (failure) add(failure.code, failure.atMs, failure.message);
  }
  return summary;
}

/**
 * How one request failed by the window's end, if it did: an error, or (with a stall limit) a
 * silence of at least that long after its first token inside the window. The rule behind the
 * cell's failed requests, and behind goodput (src/judge/goodput.ts: a failed request never meets).
 */
export function requestFailure(
  t: RequestTimeline,
  windowStartMs: number,
  windowEndMs: number,
  stallLimit?: number,
): { code: string; atMs: number; message: string } | undefined {
  const e = t.end;
  if (e?.kind === 'error' && e.atMs <= windowEndMs) return { code: e.code, atMs: e.atMs, message: e.message };
  if (stallLimit === undefined) return undefined;
  const silence = longestSilenceMs(t, windowStartMs, windowEndMs);
  if (silence === undefined || silence < stallLimit) return undefined;
  return {
    code: 'stall',
    atMs: t.firstTokenMs ?? windowStartMs,
    message: `stalled: no token for ${(silence / 1000).toFixed(1)} s after the first, inside the window (stall limit ${(stallLimit / 1000).toFixed(1)} s)`,
  };
}

/** Requests that ended in an error up to `windowEndMs` (no stall detection): cellFailures without a limit. */
export function errorSummary(timelines: readonly RequestTimeline[], windowEndMs: number): ErrorSummary {
  return cellFailures(timelines, -Infinity, windowEndMs);
}

/** Requests resent once on a fresh connection after a stale reused one (client/stream.ts), with the first reason. */
export function connectionRetrySummary(timelines: readonly RequestTimeline[]): { count: number; firstReason?: string } {
  const out: { count: number; firstReason?: string } = { count: 0 };
  let firstAt = Infinity;
  for (const t of timelines) {
    if ((t.connectionRetries ?? 0) === 0) continue;
    out.count++;
    if (t.sendMs < firstAt && t.retriedAfter !== undefined) {
      firstAt = t.sendMs;
      out.firstReason = t.retriedAfter;
    }
  }
  return out;
}
