/**
 * The post-window work of a cell: its measured run → figures (metrics/) → what the judge reads of
 * it → one result record over its repeats. Everything a cell does after its window closes, up to
 * the verdicts (cell-test.ts judges and publishes): the scale benchmark (perf/cell-scale.ts) times
 * this same code on synthetic timelines of millions of token events.
 */
import type { runCell } from '../load/cell.js';
import { usageDisagreement } from '../metrics/usage-check.js';
import { maxTokensIgnored } from '../metrics/length-check.js';
import { noResponse } from '../metrics/no-response.js';
import { calibrationRecord, type CalibratedPrompt } from '../prompts/calibrate.js';
import { computeCellFigures } from '../metrics/figures.js';
import { MATRIX_TTFT_FROM } from '../metrics/request.js';
import { clientLoad } from '../metrics/client-load.js';
import { screenSamples } from '../metrics/server-load.js';
import { cellFailures } from '../metrics/failures.js';
import { streamEndings } from '../metrics/stream-endings.js';
import { crossCheckCell } from '../metrics/crosscheck.js';
import { cellSeries } from '../metrics/series.js';
import { gapHistogram, sumGapHistograms } from '../metrics/gaps.js';
import { medianFigures, repeatsOf } from '../metrics/repeat-figures.js';
import type { ServerCrossCheck } from '../shapes/result.gen.js';
import type { EngineKind } from '../shapes/engine.js';
import type { CellFigures, CellResult, CellSeries, Goodput, Slo, WorkloadFigures } from '../shapes/result.js';
import { computeGoodput, sumGoodput } from '../judge/index.js';
import type { CellStatusInput, CellStatusResult } from '../judge/status.js';
import type { PlannedCell } from './plan.js';

/** What the post-window work reads of the run's configuration (cell-test.ts builds it from the resolved suite). */
export interface CellOutcomeSettings {
  /** LLM_BENCH_STALL_S in ms; else each cell derives its own */
  stallLimitMs?: number;
  clientLimitedLoopDelayMs: number;
  slo?: Slo;
  /** the server's kind: which of its own timings the cross-check reads */
  engine: EngineKind;
  /** LLM_BENCH_PERCENTILES: the percentiles each latency distribution reports beside METHOD's */
  percentiles?: readonly number[];
}

/** A cell's measured run (load/cell.ts runCell): timelines, samples, window, gate, drain, the client's self-check. */
export type Raw = Awaited<ReturnType<typeof runCell>>;

/** One measured repeat of a cell: its raw run, its figures, what its status and goodput are judged on. */
export interface Repeat {
  raw: Raw;
  figures: CellFigures;
  status: CellStatusInput;
  goodput?: Goodput;
  crossCheck?: ServerCrossCheck;
  /** what a non-synthetic workload sent (its figures) */
  workload?: WorkloadFigures;
}

/**
 * The figures of one repeat, and what the judge reads of it: the status inputs (the client load
 * computed once, for the figures and the Requests-queued rule alike) and, with an SLO, its goodput.
 * The server's own counts and speeds are checked beside the client's (flagged at > 10 % apart).
 */
export function repeatFigures(cfg: CellOutcomeSettings, cell: Pick<PlannedCell, 'concurrency'>, raw: Raw, say: (m: string) => void): Repeat {
  const window = { windowStartMs: raw.windowStartMs, windowEndMs: raw.windowEndMs };
  const own = clientLoad(raw.timelines, raw.windowStartMs, raw.windowEndMs, MATRIX_TTFT_FROM);
  // a sample that could not be taken (a late scrape, a 0 read with streams decoding) is no evidence of running or waiting
  const screened = screenSamples(raw.samples, raw.timelines);
  const figures = computeCellFigures({
    timelines: raw.timelines,
    ...window,
    metricsSamples: screened.samples,
    // the clock starts when the request is written to the socket: the client's own queueing is not the server's TTFT
    ttftFrom: MATRIX_TTFT_FROM,
    stallLimit: cfg.stallLimitMs ?? 'cell',
    clientLoad: own,
    ...(cfg.percentiles ? { percentiles: cfg.percentiles } : {}),
  });
  const status: CellStatusInput = {
    concurrency: cell.concurrency,
    figures,
    timelines: raw.timelines,
    failures: cellFailures(raw.timelines, raw.windowStartMs, raw.windowEndMs, figures.stallLimitMs),
    streamEndings: streamEndings(raw.timelines, raw.windowStartMs, raw.windowEndMs),
    samples: screened.samples,
    ...(screened.setAside ? { samplesSetAside: screened.setAside } : {}),
    ...window,
    clientLoad: own,
    gateTimedOut: raw.gate.timedOut,
    gateWaitedMs: raw.gate.waitedMs,
    drainTimedOut: raw.drain.timedOut,
    drainWaitedMs: raw.drain.waitedMs,
    loopDelayMs: raw.loopDelayMs,
    loopDelayBoundMs: cfg.clientLimitedLoopDelayMs,
    ...(raw.clientCpu ? { clientCpuCores: raw.clientCpu.cores } : {}),
    ...(raw.clientCpu?.coreWaitShare !== undefined ? { clientCoreWaitShare: raw.clientCpu.coreWaitShare } : {}),
    ...(raw.clientThreads ? { clientThreads: raw.clientThreads } : {}),
    ...(raw.arrivalLagMs ? { arrivalLagMs: raw.arrivalLagMs } : {}),
  };
  const out: Repeat = { raw, figures, status };
  if (cfg.slo) {
    const stall = figures.stallLimitMs !== undefined ? { stallLimitMs: figures.stallLimitMs } : {};
    out.goodput = computeGoodput({ timelines: raw.timelines, ...window, ttftFrom: MATRIX_TTFT_FROM, ...stall, slo: cfg.slo });
  }
  const check = crossCheckCell({ timelines: raw.timelines, ...window, samples: screened.samples, figures, serverTimings: raw.serverTimings, engine: cfg.engine });
  if (check) {
    out.crossCheck = check;
    for (const i of check.items.filter((x) => x.disagree)) {
      say(`⚠ server and client disagree on ${i.figure}: server ${i.server.toFixed(1)}, client ${i.client.toFixed(1)} (${i.source})`);
    }
  }
  return out;
}

/** The HTML report's series of a cell: the last repeat's, with the gap histogram of every repeat. */
function repeatedSeries(repeats: readonly Repeat[]): CellSeries {
  const last = repeats[repeats.length - 1]!.raw;
  const series = cellSeries({ timelines: last.timelines, samples: last.samples, windowStartMs: last.windowStartMs, windowEndMs: last.windowEndMs });
  if (repeats.length === 1) return series;
  const gaps = sumGapHistograms(repeats.map((x) => gapHistogram(x.raw.timelines, x.raw.windowStartMs, x.raw.windowEndMs)));
  if (gaps) series.gapHistogram = gaps;
  return series;
}

/** A measured cell's result record from its repeats (figures: the medians) and its status. */
export function cellResultOf(cell: Pick<PlannedCell, 'context' | 'contextLabel' | 'concurrency'>, prompt: CalibratedPrompt | undefined, repeats: readonly Repeat[], verdict: CellStatusResult, say: (m: string) => void): CellResult {
  const figures = medianFigures(repeats.map((x) => x.figures));
  const goodputs = repeats.flatMap((x) => (x.goodput ? [x.goodput] : []));
  const crossChecks = repeats.flatMap((x) => (x.crossCheck ? [x.crossCheck] : []));
  // the client's worst event-loop delay over the repeats
  const raw = repeats.reduce((worst, x) => ((x.raw.loopDelayMs?.p99 ?? 0) > (worst.raw.loopDelayMs?.p99 ?? 0) ? x : worst)).raw;
  const lastRepeat = repeats[repeats.length - 1]!;
  const last = lastRepeat.raw;
  // final usage that disagrees with the stream (the counts stay the stream's), over every repeat
  const usageDisagrees = usageDisagreement(repeats.flatMap((x) => x.raw.timelines));
  if (usageDisagrees) {
    say(`⚠ the server's usage.completion_tokens disagrees with the streamed tokens in ${usageDisagrees.requests} of ${usageDisagrees.of} requests (e.g. usage ${usageDisagrees.example.usage}, streamed ${usageDisagrees.example.counted}); counting the stream`);
  }
  // a server that streams past max_tokens, over every repeat
  const overrun = maxTokensIgnored(repeats.flatMap((x) => x.raw.timelines));
  if (overrun) say(`⚠ the server ignored max_tokens in ${overrun.requests} of ${overrun.of} requests (e.g. ${overrun.example.tokens} tokens for ${overrun.example.asked} asked); counting what it streamed`);
  // a window shorter than the wait for a first token holds mostly waiting (issue 60)
  const ttft = figures.ttftMs;
  const short = ttft && ttft.median > figures.measuredForS * 1000 ? { ttftMedianMs: ttft.median, windowS: figures.measuredForS, ttftSamples: ttft.samples } : undefined;
  if (short) say(`⚠ the window (${short.windowS.toFixed(1)} s) is shorter than the median TTFT (${(short.ttftMedianMs / 1000).toFixed(1)} s, from ${short.ttftSamples} first token${short.ttftSamples === 1 ? '' : 's'}): lengthen it (LLM_BENCH_DURATION_S) to measure the steady state`);
  // requests the server took and answered nothing (no headers), over the last repeat's window
  const silent = noResponse(last.timelines, last.windowStartMs, last.windowEndMs);
  if (silent) say(`⚠ ${silent.requests} of ${silent.of} requests got no response headers in up to ${silent.longestWaitS.toFixed(0)} s (a server that answers nothing, or one that sends its headers with the first token and queued these)`);
  const evidence = {
    ...verdict.evidence,
    ...(usageDisagrees ? { usageDisagrees } : {}),
    ...(overrun ? { maxTokensIgnored: overrun } : {}),
    ...(short ? { windowShorterThanTtft: short } : {}),
    ...(silent ? { noResponse: silent } : {}),
  };
  return {
    context: cell.context,
    contextLabel: cell.contextLabel,
    concurrency: cell.concurrency,
    status: verdict.status,
    statuses: verdict.statuses,
    evidence,
    figures,
    ...(goodputs.length > 0 ? { goodput: sumGoodput(goodputs) } : {}),
    ...(raw.loopDelayMs ? { clientEventLoopDelayMs: raw.loopDelayMs } : {}),
    ...(raw.arrivalLagMs ? { clientArrivalLagMs: raw.arrivalLagMs } : {}),
    // what the HTML report draws, from the last repeat; the gaps of every repeat (a stall in any stays visible, as in the longest gap)
    series: repeatedSeries(repeats),
    ...(raw.clientCpu ? { clientCpu: { ...raw.clientCpu, ...(raw.clientThreads && raw.clientThreads.length > 1 ? { threads: raw.clientThreads.length } : {}) } } : {}),
    ...(prompt?.promptTokens !== undefined ? { promptTokens: prompt.promptTokens } : {}),
    ...(prompt ? { calibration: calibrationRecord(prompt) } : {}),
    // a workload's figures: the last repeat's (lengths and cache figures do not combine as medians)
    ...(lastRepeat.workload ? { workload: lastRepeat.workload } : {}),
    ...(repeats.length > 1 ? { repeats: repeatsOf(repeats.map((x) => x.figures)) } : {}),
    // a repeat whose numbers disagree is the one kept; else the last
    ...(crossChecks.length > 0 ? { serverCrossCheck: crossChecks.find((c) => c.disagree) ?? crossChecks[crossChecks.length - 1]! } : {}),
    connections: last.connections,
    finishedAt: new Date().toISOString(),
  };
}

