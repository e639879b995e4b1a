/**
 * The figures of one sustained-decode cell (METHOD.md "Figures of a cell"), from the timelines of
 * the cell's worker requests (scout excluded), the window and the server metrics samples.
 * Pure: no I/O, no clock. All times are monoMs() values.
 *
 * "Inside the window" means windowStartMs ≤ t ≤ windowEndMs (both ends included).
 */
import { TOKEN_SOURCE_RANK, type RequestTimeline, type TokenSource } from '../shapes/timeline.js';
import type { MetricsSample } from '../shapes/engine.js';
import { distribution, mean, median } from './stats.js';
import type { CellFigures } from '../shapes/result.js';
import { requestTimeBetweenTokensMs, tokensInWindow, tokensPerSecondOfTbt, ttftStartMs } from './request.js';
import { samplesLoad, type SamplesLoad } from './server-load.js';
import { clientActiveRequests, clientBusy, clientLoad, type ClientLoad } from './client-load.js';
import { cellFailures, stallLimitMs } from './failures.js';
import { cellGaps } from './gaps.js';
import { requestLatencies } from './latency.js';

/** server and client active-request counts disagree when they differ by more than this share */
export const ACTIVE_REQUESTS_DISAGREE_SHARE = 0.1;

export interface CellFiguresInput {
  /** the cell's worker requests (scout excluded), including those sent before the window */
  timelines: readonly RequestTimeline[];
  windowStartMs: number;
  windowEndMs: number;
  /** server metrics samples; only those inside the window are used */
  metricsSamples: readonly MetricsSample[];
  /**
   * where TTFT starts: 'send' (handed to undici; default, as METHOD.md) or 'sent-headers'
   * (request headers written to the socket, falling back to send time when not recorded)
   */
  ttftFrom?: 'send' | 'sent-headers';
  /**
   * stall detection: a fixed limit in ms (LLM_BENCH_STALL_S), or 'cell' for stallLimitMs's rule on
   * this cell's median time between tokens; absent = no stall detection (errors only)
   */
  stallLimit?: number | 'cell';
  /**
   * the window's client load (clientLoad over the same timelines, window and TTFT start), when the
   * caller has it already: the cell's status reads the same one (src/judge/status.ts)
   */
  clientLoad?: ClientLoad;
  /** LLM_BENCH_PERCENTILES: the percentiles each latency distribution reports beside METHOD's (none by default) */
  percentiles?: readonly number[];
}

/** the weakest of the token sources (chunks < chunk-token-ids < usage); 'chunks' when none */
export function weakestTokenSource(sources: Iterable<TokenSource>): TokenSource {
  let weakest: TokenSource | undefined;
  for (const s of sources) if (weakest === undefined || TOKEN_SOURCE_RANK[s] < TOKEN_SOURCE_RANK[weakest]) weakest = s;
  return weakest ?? 'chunks';
}

/**
 * Server and client active counts disagree when |server − client| > 10 % × max(client, 1): the
 * client's own in-flight count is the reference (it is exact), and max(·, 1) keeps the bound at
 * 0.1 request for cells with about one request in flight.
 */
export function activeRequestsDisagree(server: number, client: number): boolean {
  return Math.abs(server - client) > ACTIVE_REQUESTS_DISAGREE_SHARE * Math.max(client, 1);
}

/**
 * Whether the server's running mean (`running`: samplesLoad's, before any scaling) and the client's
 * in-flight count disagree (the ⚠ flag). A count per decode call sees no idle time: it is compared
 * with the client's count while busy. A mean of
 * samples is compared with the client's time-weighted count, and a disagreement stands only when
 * the client's own count at the same sample times (recorded with each sample) disagrees too: a
 * load that comes and goes (multi-turn think times, a low rate) makes a few samples' mean wander
 * from the time-weighted one by more than 10 % with nothing wrong on either side.
 */
function serverClientDisagree(
  running: number,
  runningFrom: SamplesLoad['runningFrom'],
  samples: readonly MetricsSample[],
  /** the client's in-flight count while any request was in flight (used for a count per decode call) */
  whileBusy: number,
  client: number,
): boolean {
  if (runningFrom === 'decode-counters') return activeRequestsDisagree(running, whileBusy);
  if (!activeRequestsDisagree(running, client)) return false;
  const atSamples = mean(samples.flatMap((s) => (s.running !== undefined && Number.isFinite(s.running) && s.clientInFlight !== undefined ? [s.clientInFlight] : [])));
  return atSamples === undefined || activeRequestsDisagree(running, atSamples);
}

/**
 * The cell's per-request tok/s at a statistic of the SLO: the median is the figure itself; a low
 * quantile of the requests' 1000 / TBT is 1000 / the matching high quantile of their TBT (p10 from
 * TBT p90, p1 from TBT p99). Undefined when the cell has no such figure.
 */
export function perRequestTokensPerSecondAt(f: Pick<CellFigures, 'perRequestTokensPerSecond' | 'timeBetweenTokensMs'>, stat: 'median' | 'p10' | 'p1'): number | undefined {
  if (stat === 'median') return f.perRequestTokensPerSecond;
  const tbt = f.timeBetweenTokensMs;
  if (!tbt) return undefined;
  return tokensPerSecondOfTbt(stat === 'p10' ? tbt.p90 : tbt.p99);
}

export function computeCellFigures(input: CellFiguresInput): CellFigures {
  const { timelines, windowStartMs: ws, windowEndMs: we } = input;
  if (!Number.isFinite(ws) || !Number.isFinite(we) || !(we > ws)) {
    throw new RangeError(`computeCellFigures: windowEndMs (${we}) must be finite and after windowStartMs (${ws})`);
  }
  const measuredForS = (we - ws) / 1000;

  let outputTokens = 0;
  const tbtValues: number[] = [];
  const perRequestTps: number[] = [];
  const ttftValues: number[] = [];
  const promptTokens: number[] = [];
  const sources: TokenSource[] = [];
  let completedRequests = 0;

  for (const t of timelines) {
    outputTokens += tokensInWindow(t, ws, we);
    const tbt = requestTimeBetweenTokensMs(t, ws, we);
    if (tbt !== undefined) {
      tbtValues.push(tbt);
      perRequestTps.push(tokensPerSecondOfTbt(tbt));
    }
    if (t.firstTokenMs !== undefined && t.firstTokenMs <= we) {
      ttftValues.push(t.firstTokenMs - ttftStartMs(t, input.ttftFrom ?? 'send'));
    }
    if (t.promptTokens !== undefined) promptTokens.push(t.promptTokens);
    if (t.chunkTokens.length > 0) sources.push(t.tokenSource);
    if (t.end?.kind === 'done' && t.end.atMs >= ws && t.end.atMs <= we) completedRequests++;
  }

  const inWindow = input.metricsSamples.filter((s) => s.atMs >= ws && s.atMs <= we);
  const { meanRunning: running, maxWaiting, runningFrom } = samplesLoad(inWindow);
  const client = clientActiveRequests(timelines, ws, we);
  const busy = runningFrom === 'decode-counters' ? clientBusy(timelines, ws, we) : undefined;
  // the server's mean over the window. Busy slots per decode call see no idle time: scaled by the
  // share of the window the client had a request in flight (a server decodes nothing while none is)
  const server = running !== undefined && busy !== undefined ? running * busy.busyShare : running;
  const own = input.clientLoad ?? clientLoad(timelines, ws, we, input.ttftFrom ?? 'send');

  const figures: CellFigures = {
    outputTokens,
    tokenSource: sources.length > 0 ? weakestTokenSource(sources) : weakestTokenSource(timelines.map((t) => t.tokenSource)),
    measuredForS,
    totalTokensPerSecond: outputTokens / measuredForS,
    clientActiveRequests: client,
    averageActiveRequests: server ?? client,
    averageActiveRequestsSource: server !== undefined ? 'server' : 'client',
    activeRequestsDisagree: server !== undefined && serverClientDisagree(running!, runningFrom, inWindow, busy?.whileBusy ?? client, client),
    completedRequests,
    failedRequests: 0,
    startedRequests: timelines.length,
    clientRunningRequests: own.meanRunning,
    clientWaitingRequests: own.meanWaiting,
    clientMaxWaitingRequests: own.maxWaiting,
  };
  // the running figure Requests queued is judged on (src/judge/status.ts): the server's; the client's own
  // when the server has neither running nor waiting; none when it has a waiting figure only
  if (runningFrom !== undefined) figures.runningFrom = runningFrom;
  else if (maxWaiting === undefined) figures.runningFrom = 'client';
  const perRequest = median(perRequestTps);
  if (perRequest !== undefined) figures.perRequestTokensPerSecond = perRequest;
  const tbt = distribution(tbtValues, input.percentiles);
  const limit = input.stallLimit === 'cell' ? stallLimitMs(tbt?.median, we - ws) : input.stallLimit;
  figures.failedRequests = cellFailures(timelines, ws, we, limit).count;
  if (limit !== undefined) figures.stallLimitMs = limit;
  if (tbt !== undefined) figures.timeBetweenTokensMs = tbt;
  const ttft = distribution(ttftValues, input.percentiles);
  if (ttft !== undefined) figures.ttftMs = ttft;
  const latencies = requestLatencies(timelines, ws, we, input.ttftFrom ?? 'send', input.percentiles);
  if (latencies.tpotMs) figures.tpotMs = latencies.tpotMs;
  if (latencies.e2eLatencyMs) figures.e2eLatencyMs = latencies.e2eLatencyMs;
  figures.requestsPerSecond = completedRequests / measuredForS;
  const gaps = cellGaps(timelines, ws, we, input.percentiles);
  if (gaps !== undefined) {
    figures.interTokenLatencyMs = gaps.interTokenLatencyMs;
    figures.longestGap = gaps.longestGap;
  }
  const notComputed = whyNotComputed(timelines, ws, we, tbt === undefined, ttft === undefined);
  if (notComputed !== undefined) figures.notComputed = notComputed;
  if (server !== undefined) figures.serverActiveRequests = server;
  if (maxWaiting !== undefined) figures.maxWaitingRequests = maxWaiting;
  const prompt = median(promptTokens);
  if (prompt !== undefined) figures.promptTokens = prompt;
  return figures;
}

/**
 * Why the time between tokens (and so per-request tok/s) or TTFT could not be computed, in words
 * for the page: no token in the window, every request's window tokens at one instant (one chunk,
 * or a burst that a buffering proxy released), or no request with two chunks in the window.
 */
export function whyNotComputed(
  timelines: readonly RequestTimeline[],
  ws: number,
  we: number,
  noTbt: boolean,
  noTtft: boolean,
): { timeBetweenTokensMs?: string; ttftMs?: string } | undefined {
  if (!noTbt && !noTtft) return undefined;
  const out: { timeBetweenTokensMs?: string; ttftMs?: string } = {};
  if (noTbt) {
    let withTokens = 0;
    let oneInstant = 0;
    for (const t of timelines) {
      let first: number | undefined;
      let spread = false;
      const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
      for (let i = 0; i < n; i++) {
        const at = t.chunkMs[i]!;
        if (t.chunkTokens[i]! <= 0 || at < ws || at > we) continue;
        if (first === undefined) first = at;
        else if (at - first > 0) spread = true;
      }
      if (first === undefined) continue;
      withTokens++;
      if (!spread) oneInstant++;
    }
    out.timeBetweenTokensMs =
      withTokens === 0
        ? 'no token arrived inside the window'
        : oneInstant === withTokens
          ? "each request's tokens inside the window arrived at one instant (one chunk, or a burst a proxy held back), so there is no gap between tokens to time"
          : 'no request had two token chunks inside the window';
  }
  if (noTtft) out.ttftMs = timelines.length === 0 ? 'no request was sent' : "no request's first token arrived by the window's end";
  return out;
}
