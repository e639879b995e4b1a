/**
 * Goodput of a cell: the share of its requests, and of its output tokens in the window, that met
 * the SLO's per-request constraints. Each request is judged on its own figures, computed as the
 * cell's are (src/metrics/request.ts): its tok/s (1000 / its mean time between tokens in the
 * window), its TTFT (from the same start as the cell's), and the p99 of its own gaps between
 * tokens in the window. A failed request (an error by the window's end, or a stall) never meets.
 * Pure: no I/O, no clock.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import { requestFailure } from '../metrics/failures.js';
import { requestTbtP99Ms, requestTimeBetweenTokensMs, tokensInWindow, tokensPerSecondOfTbt, ttftStartMs } from '../metrics/request.js';
import type { Goodput, Slo } from '../shapes/result.js';

export interface GoodputInput {
  timelines: readonly RequestTimeline[];
  windowStartMs: number;
  windowEndMs: number;
  ttftFrom: 'send' | 'sent-headers';
  /** where a request's TTFT starts instead of ttftFrom: an open-loop rate cell's scheduled time */
  ttftStartOf?: (t: RequestTimeline) => number;
  /** the cell's stall limit (figures.stallLimitMs); a request silent this long has failed */
  stallLimitMs?: number;
  slo: Slo;
}

export function computeGoodput(input: GoodputInput): Goodput {
  const { timelines, windowStartMs: ws, windowEndMs: we, slo } = input;
  const speed = slo.perRequestTokensPerSecond !== undefined || slo.timeBetweenTokensMs !== undefined;
  let met = 0;
  let judged = 0;
  let metTokens = 0;
  let totalTokens = 0;
  const startOf = input.ttftStartOf ?? ((t: RequestTimeline) => ttftStartMs(t, input.ttftFrom));
  for (const t of timelines) {
    const tokens = tokensInWindow(t, ws, we);
    totalTokens += tokens;
    // failed by the window's end, by the cell's own rule: judged, never met
    if (requestFailure(t, ws, we, input.stallLimitMs)) {
      judged++;
      continue;
    }
    // judged: a first token by the window's end and something of it inside the window
    if (t.firstTokenMs === undefined || t.firstTokenMs > we) continue;
    const ended = t.end !== undefined && t.end.atMs >= ws && t.end.atMs <= we;
    if (tokens === 0 && !ended) continue;
    const tbt = requestTimeBetweenTokensMs(t, ws, we);
    if (speed && tbt === undefined) continue;
    judged++;
    let ok = true;
    if (slo.perRequestTokensPerSecond && !(tokensPerSecondOfTbt(tbt!) >= slo.perRequestTokensPerSecond.min)) ok = false;
    if (slo.ttftMs && !(t.firstTokenMs - startOf(t) <= slo.ttftMs.max)) ok = false;
    if (slo.timeBetweenTokensMs) {
      const p99 = requestTbtP99Ms(t, ws, we);
      if (!(p99 !== undefined && p99 <= slo.timeBetweenTokensMs.max)) ok = false;
    }
    if (ok) {
      met++;
      metTokens += tokens;
    }
  }
  return {
    requests: { met, judged, share: judged > 0 ? met / judged : 0 },
    tokens: { met: metTokens, total: totalTokens, share: totalTokens > 0 ? metTokens / totalTokens : 0 },
  };
}

/** Goodput over repeats of a cell: the counts summed, the shares recomputed. */
export function sumGoodput(parts: readonly Goodput[]): Goodput {
  const met = parts.reduce((a, g) => a + g.requests.met, 0);
  const judged = parts.reduce((a, g) => a + g.requests.judged, 0);
  const metTokens = parts.reduce((a, g) => a + g.tokens.met, 0);
  const total = parts.reduce((a, g) => a + g.tokens.total, 0);
  return {
    requests: { met, judged, share: judged > 0 ? met / judged : 0 },
    tokens: { met: metTokens, total, share: total > 0 ? metTokens / total : 0 },
  };
}
