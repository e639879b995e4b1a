/**
 * Pure: what the HTML report draws for a cell, from the same inputs as its figures: the server's
 * metric samples inside the window (seconds since it opened; a metric the server does not report
 * is left out), each request's mean time between tokens in the window, computed as the cell's
 * TBT figures are (request.ts), so the histogram and the figures describe the same values, and
 * every gap between tokens counted in fixed bins (gaps.ts, as the cell's ITL figures count them).
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import type { MetricsSample } from '../shapes/engine.js';
import type { CellSeries } from '../shapes/result.js';
import { requestTimeBetweenTokensMs } from './request.js';
import { gapHistogram } from './gaps.js';

export interface CellSeriesInput {
  timelines: readonly RequestTimeline[];
  samples: readonly MetricsSample[];
  windowStartMs: number;
  windowEndMs: number;
}

/** 3 significant digits are plenty for a chart, and keep a 40-cell page small */
const round = (x: number): number => Number(x.toPrecision(3));

export function cellSeries(input: CellSeriesInput): CellSeries {
  const { windowStartMs: ws, windowEndMs: we } = input;
  const requestTbtMs = input.timelines
    .map((t) => requestTimeBetweenTokensMs(t, ws, we))
    .filter((x): x is number => x !== undefined)
    .map(round);
  const inWindow = input.samples.filter((s) => s.atMs >= ws && s.atMs <= we);
  const series: CellSeries = { requestTbtMs };
  const gaps = gapHistogram(input.timelines, ws, we);
  if (gaps) series.gapHistogram = gaps;
  if (inWindow.length === 0) return series;
  const metrics: NonNullable<CellSeries['metrics']> = { atS: inWindow.map((s) => Math.round(s.atMs - ws) / 1000) };
  for (const key of ['running', 'waiting', 'kvUsage'] as const) {
    if (inWindow.some((s) => s[key] !== undefined)) metrics[key] = inWindow.map((s) => (s[key] === undefined ? null : round(s[key]!)));
  }
  series.metrics = metrics;
  return series;
}
