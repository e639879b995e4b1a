/**
 * Server-side cross-check (pure): where the server reports its own counts or speeds, store them
 * beside the client's figures and flag the cell when the two disagree by more than the tolerance
 * (10 %), so a wrong number cannot pass silently.
 *
 * Compared, each only when the server gives it:
 * - outputTokensPerSecond — Δ generation-token counter between the first and the last metrics
 *   sample inside the window, over their span, vs the tokens the client received in that same span
 *   (arrival times in [first.atMs, last.atMs]). Needs ≥ 2 samples ≥ MIN_SPAN_MS apart.
 * - ttftMedianMs — the median of the server's TTFT histogram over the same span (Δ bucket counts),
 *   vs the median TTFT of the client's requests whose first token arrived in that span. Buckets are
 *   coarse, so it disagrees only when the client median lies outside the server median's bucket
 *   widened by the tolerance; the stored server value is interpolated inside the bucket.
 *   Needs ≥ MIN_TTFT_SAMPLES observations on both sides.
 * - perRequestTokensPerSecond — llama.cpp's per-request `timings`: the median over requests that
 *   finished inside the window of (predicted_n − 1) / predicted_ms (predicted_ms runs from the
 *   first token to the last, so n − 1 intervals), vs the median of the client's own speed of THOSE
 *   requests, each over its whole stream (tokens after the first chunk over first to last chunk).
 *   Like for like: the cell's per-request figure is a median over every request's part inside the
 *   window, requests still streaming at either edge included, and in a cell whose requests differ
 *   in speed by 5× (a sharedPrefix cell on llama.cpp, where a cache miss's 1,000-token prefill
 *   stalls the slots decoding beside it) the two medians of different sets differ by 15 % while
 *   each request agrees within 1 % (measured on b4748): that was a ⚠ on a right number.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import type { HistogramSnapshot, MetricsSample, ServerRequestTimings } from '../shapes/engine.js';
import type { CrossCheckItem, ServerCrossCheck } from '../shapes/result.gen.js';
import { MATRIX_TTFT_FROM, requestTimeBetweenTokensMs, tokensInWindow, tokensPerSecondOfTbt, ttftStartMs } from './request.js';
import { median } from './stats.js';
import type { CellFigures } from '../shapes/result.js';

export const CROSS_CHECK_TOLERANCE = 0.1;
/** shortest span between two samples for the counter comparison */
export const MIN_SPAN_MS = 500;
/** fewest TTFT observations (server and client) for the TTFT comparison */
export const MIN_TTFT_SAMPLES = 3;

export interface CrossCheckInput {
  timelines: readonly RequestTimeline[];
  windowStartMs: number;
  windowEndMs: number;
  /** metrics samples inside the window, in time order */
  samples: readonly MetricsSample[];
  figures: Pick<CellFigures, 'perRequestTokensPerSecond'>;
  /** the last server timings seen per request id (llama.cpp) */
  serverTimings?: ReadonlyMap<string, ServerRequestTimings>;
  /** engine prefix for source labels, e.g. "vllm" */
  engine?: string;
  tolerance?: number;
}

/** |server − client| / client; 0 when both are 0; 1 when only the client is 0. */
export function relativeDifference(server: number, client: number): number {
  if (client === 0) return server === 0 ? 0 : 1;
  return Math.abs(server - client) / Math.abs(client);
}

function item(
  figure: CrossCheckItem['figure'],
  server: number,
  client: number,
  tolerance: number,
  source: string,
  extra: Partial<CrossCheckItem> = {},
): CrossCheckItem {
  const rel = relativeDifference(server, client);
  return { figure, server, client, relativeDifference: rel, disagree: rel > tolerance, source, ...extra };
}

/** Tokens the client received with arrival time in [fromMs, toMs]. */
function clientTokensBetween(timelines: readonly RequestTimeline[], fromMs: number, toMs: number): number {
  let sum = 0;
  for (const t of timelines) sum += tokensInWindow(t, fromMs, toMs);
  return sum;
}

/** Δ of two cumulative histograms (same bounds), or undefined when they do not line up. */
export function histogramDelta(a: HistogramSnapshot, b: HistogramSnapshot): HistogramSnapshot | undefined {
  if (a.upperBoundsS.length !== b.upperBoundsS.length || a.upperBoundsS.some((x, i) => x !== b.upperBoundsS[i])) return undefined;
  const cumulativeCounts = b.cumulativeCounts.map((c, i) => c - a.cumulativeCounts[i]!);
  if (cumulativeCounts.some((c) => c < 0)) return undefined; // counter reset
  return { upperBoundsS: b.upperBoundsS, cumulativeCounts, count: b.count - a.count, sumS: b.sumS - a.sumS };
}

/** The median's bucket [lowerS, upperS] and a linear interpolation inside it; undefined when empty. */
export function histogramMedian(h: HistogramSnapshot): { lowerS: number; upperS: number; medianS: number; count: number } | undefined {
  const total = h.cumulativeCounts[h.cumulativeCounts.length - 1] ?? 0;
  if (total <= 0) return undefined;
  const half = total / 2;
  let prevCount = 0;
  let lowerS = 0;
  for (let i = 0; i < h.upperBoundsS.length; i++) {
    const upperS = h.upperBoundsS[i]!;
    const c = h.cumulativeCounts[i]!;
    if (c >= half) {
      const inBucket = c - prevCount;
      const frac = inBucket > 0 ? (half - prevCount) / inBucket : 0;
      const medianS = Number.isFinite(upperS) ? lowerS + frac * (upperS - lowerS) : lowerS;
      return { lowerS, upperS, medianS, count: total };
    }
    prevCount = c;
    if (Number.isFinite(upperS)) lowerS = upperS;
  }
  return undefined;
}

export function crossCheckCell(input: CrossCheckInput): ServerCrossCheck | undefined {
  const tol = input.tolerance ?? CROSS_CHECK_TOLERANCE;
  const prefix = input.engine ? `${input.engine} ` : '';
  const items: CrossCheckItem[] = [];

  // 1. generation-token counter over the samples' span
  const withGen = input.samples.filter((s) => s.generationTokensTotal !== undefined);
  const g0 = withGen[0];
  const g1 = withGen[withGen.length - 1];
  if (g0 && g1 && g1.atMs - g0.atMs >= MIN_SPAN_MS) {
    const spanS = (g1.atMs - g0.atMs) / 1000;
    const delta = g1.generationTokensTotal! - g0.generationTokensTotal!;
    if (delta >= 0) {
      const client = clientTokensBetween(input.timelines, g0.atMs, g1.atMs) / spanS;
      items.push(item('outputTokensPerSecond', delta / spanS, client, tol, `${prefix}Δ generation-token counter between the first and last samples in the window`, { spanS, samples: withGen.length }));
    }
  }

  // 2. TTFT histogram over the same kind of span
  const withHist = input.samples.filter((s) => s.ttftHistogram !== undefined);
  const h0 = withHist[0];
  const h1 = withHist[withHist.length - 1];
  if (h0 && h1 && h1 !== h0) {
    const delta = histogramDelta(h0.ttftHistogram!, h1.ttftHistogram!);
    const m = delta ? histogramMedian(delta) : undefined;
    const clientTtfts = input.timelines
      .filter((t) => t.firstTokenMs !== undefined && t.firstTokenMs >= h0.atMs && t.firstTokenMs <= h1.atMs)
      .map((t) => t.firstTokenMs! - ttftStartMs(t, MATRIX_TTFT_FROM));
    const clientMedian = median(clientTtfts);
    if (m && m.count >= MIN_TTFT_SAMPLES && clientMedian !== undefined && clientTtfts.length >= MIN_TTFT_SAMPLES) {
      const lowMs = m.lowerS * 1000 * (1 - tol);
      const highMs = m.upperS * 1000 * (1 + tol);
      const it = item('ttftMedianMs', m.medianS * 1000, clientMedian, tol, `${prefix}TTFT histogram (Δ buckets between the first and last samples; median in ${m.lowerS}–${m.upperS} s)`, {
        spanS: (h1.atMs - h0.atMs) / 1000,
        samples: m.count,
      });
      it.disagree = clientMedian < lowMs || clientMedian > highMs;
      items.push(it);
    }
  }

  // 3. llama.cpp per-request timings of requests that finished inside the window, against the
  //    client's own speed of the same requests
  if (input.serverTimings && input.serverTimings.size > 0 && input.figures.perRequestTokensPerSecond !== undefined) {
    const rates: number[] = [];
    const clientRates: number[] = [];
    for (const t of input.timelines) {
      if (t.end?.kind !== 'done' || t.end.atMs < input.windowStartMs || t.end.atMs > input.windowEndMs) continue;
      const s = input.serverTimings.get(t.id);
      if (!s || s.predictedN === undefined || s.predictedMs === undefined || s.predictedN < 2 || s.predictedMs <= 0) continue;
      const tbt = requestTimeBetweenTokensMs(t, -Infinity, Infinity);
      if (tbt === undefined) continue; // fewer than two token chunks: the client has no speed for it
      rates.push(((s.predictedN - 1) / s.predictedMs) * 1000);
      clientRates.push(tokensPerSecondOfTbt(tbt));
    }
    const server = median(rates);
    const client = median(clientRates);
    if (server !== undefined && client !== undefined) {
      const source = `${prefix}per-request timings ((predicted_n − 1) / predicted_ms), median of ${rates.length} finished requests against the client's speed of the same requests`;
      items.push(item('perRequestTokensPerSecond', server, client, tol, source, { samples: rates.length }));
    }
  }

  if (items.length === 0) return undefined;
  return { tolerance: tol, disagree: items.some((i) => i.disagree), items };
}
