/**
 * Figures of an open-loop rate cell (issue 22; defined in the README's method section, "Open-loop
 * rate cells"). Pure: computed from the runner's requests, each with its scheduled time.
 *
 * Which requests count: those the schedule put inside the window [start, end). Latencies are
 * taken from the scheduled time (what a user who arrived then waited) and from the send (what the
 * server alone took); their difference is the dispatch delay. Rates count events inside the window.
 */
import type { MetricsSample } from '../shapes/engine.js';
import type { RateFigures } from '../shapes/result.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import { distribution } from './stats.js';
import { cellGaps } from './gaps.js';
import { MATRIX_TTFT_FROM, requestTimeBetweenTokensMs, tokensInWindow, tokensPerSecondOfTbt, ttftStartMs } from './request.js';
import { maxOf } from '../extent.js';

/** A request of a rate cell (load/rate.ts ScheduledTimeline). */
export interface ScheduledRequest {
  timeline: RequestTimeline;
  scheduledMs: number;
  waitedForCeiling: boolean;
}

export interface RateFiguresInput {
  requests: readonly ScheduledRequest[];
  /** due times the schedule put inside the window (sent or not) */
  scheduledInWindow: number;
  /** due requests the ceiling kept from being sent */
  unsent: number;
  windowStartMs: number;
  windowEndMs: number;
  samples: readonly MetricsSample[];
  /** LLM_BENCH_PERCENTILES: the percentiles each latency distribution reports beside METHOD's (none by default) */
  percentiles?: readonly number[];
}

/** [scheduled, ended] of every request: in the system from its scheduled time to its end (or the window's end). */
export function inSystemIntervals(requests: readonly ScheduledRequest[], windowEndMs: number): Array<[number, number]> {
  return requests.map((r) => [r.scheduledMs, r.timeline.end ? Math.min(r.timeline.end.atMs, windowEndMs) : windowEndMs]);
}

/** Time-weighted mean and the most at once of a count given as [from, to) intervals, over [start, end). */
export function countOverWindow(intervals: ReadonlyArray<readonly [number, number]>, startMs: number, endMs: number): { mean: number; max: number } {
  const events: Array<[number, number]> = [];
  for (const [a, b] of intervals) {
    const from = Math.max(a, startMs);
    const to = Math.min(b, endMs);
    if (to > from) events.push([from, 1], [to, -1]);
  }
  // ends before starts at the same instant: a request that ends as another starts is not two at once
  events.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let level = 0;
  let max = 0;
  let area = 0;
  let at = startMs;
  for (const [t, d] of events) {
    area += level * (t - at);
    at = t;
    level += d;
    max = Math.max(max, level);
  }
  const span = endMs - startMs;
  return { mean: span > 0 ? area / span : 0, max };
}

const completed = (t: RequestTimeline) => t.end?.kind === 'done';

export function computeRateFigures(input: RateFiguresInput): RateFigures {
  const { windowStartMs: ws, windowEndMs: we } = input;
  const windowS = (we - ws) / 1000;
  const perS = (n: number) => (windowS > 0 ? n / windowS : 0);
  const scheduled = input.requests.filter((r) => r.scheduledMs >= ws && r.scheduledMs < we);
  const sentInWindow = input.requests.filter((r) => r.timeline.sendMs >= ws && r.timeline.sendMs < we).length;
  const completedInWindow = input.requests.filter((r) => completed(r.timeline) && r.timeline.end!.atMs >= ws && r.timeline.end!.atMs <= we).length;
  const outputTokens = input.requests.reduce((a, r) => a + tokensInWindow(r.timeline, ws, we), 0);
  const done = scheduled.filter((r) => completed(r.timeline));
  const tbt = done.map((r) => requestTimeBetweenTokensMs(r.timeline, -Infinity, Infinity)).filter((x): x is number => x !== undefined);
  const withToken = scheduled.filter((r) => r.timeline.firstTokenMs !== undefined);
  const waiting = input.samples.map((s) => s.waiting).filter((w): w is number => w !== undefined);
  // every gap whose later chunk is in the window, as a decode cell's (gaps.ts): an SLO on ITL judges a rate cell too
  const gaps = cellGaps(input.requests.map((r) => r.timeline), ws, we, input.percentiles);
  const optional = (key: keyof RateFigures, values: number[]) => {
    const d = distribution(values, input.percentiles);
    return d ? { [key]: d } : {};
  };
  return {
    offeredRate: perS(input.scheduledInWindow),
    sentRate: perS(sentInWindow),
    completedRate: perS(completedInWindow),
    totalTokensPerSecond: perS(outputTokens),
    ...optional('perRequestTokensPerSecond', tbt.map(tokensPerSecondOfTbt)),
    ...optional('ttftFromScheduleMs', withToken.map((r) => r.timeline.firstTokenMs! - r.scheduledMs)),
    ...optional('ttftFromSendMs', withToken.map((r) => r.timeline.firstTokenMs! - ttftStartMs(r.timeline, MATRIX_TTFT_FROM))),
    ...optional('e2eFromScheduleMs', done.map((r) => r.timeline.end!.atMs - r.scheduledMs)),
    ...optional('e2eFromSendMs', done.map((r) => r.timeline.end!.atMs - r.timeline.sendMs)),
    ...optional('tbtMs', tbt),
    ...optional('dispatchDelayMs', scheduled.map((r) => r.timeline.sendMs - r.scheduledMs)),
    ...(gaps ? { interTokenLatencyMs: gaps.interTokenLatencyMs, longestGap: gaps.longestGap } : {}),
    outputTokens,
    scheduled: input.scheduledInWindow,
    sent: scheduled.length,
    completed: done.length,
    failedRequests: scheduled.filter((r) => r.timeline.end?.kind === 'error').length,
    unsent: input.unsent,
    ceilingWaited: scheduled.filter((r) => r.waitedForCeiling).length,
    inSystem: countOverWindow(inSystemIntervals(input.requests, we), ws, we),
    ...(waiting.length > 0 ? { serverWaiting: { mean: waiting.reduce((a, b) => a + b, 0) / waiting.length, max: maxOf(waiting) } } : {}),
  };
}
