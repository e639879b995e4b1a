/**
 * The lengths a workload cell actually sent (issue 23, docs/workloads.md): over the requests that
 * completed inside the window (ended 'done' at or before its end, sent at or after its start: the
 * requests whose whole prompt and whole output are known),
 * - input: each request's prompt tokens as the server counted them (final usage.prompt_tokens),
 *   or, where the server reports none, as the workload built it (`plannedPromptTokens`: calibrated
 *   with the server's tokenizer or a local one);
 * - output: each request's output tokens as the stream counted them (the cell's token source).
 * A request with neither count is left out of the input summary. Pure.
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import type { LengthSummary } from '../shapes/result.js';
import { QUANTILES, quantile } from './stats.js';

/** mean, standard deviation (population), min, median, p90, max of whole-number lengths */
export function lengthSummary(values: readonly number[]): LengthSummary | undefined {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return undefined;
  const m = s.reduce((a, v) => a + v, 0) / s.length;
  const sd = Math.sqrt(s.reduce((a, v) => a + (v - m) ** 2, 0) / s.length);
  return { requests: s.length, mean: m, sd, min: s[0]!, p50: quantile(s, QUANTILES.median)!, p90: quantile(s, QUANTILES.p90)!, max: s[s.length - 1]! };
}

/** the requests whose prompt and output are wholly known: sent in the window, done by its end */
export function completedInWindow(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number): RequestTimeline[] {
  return timelines.filter((t) => t.end?.kind === 'done' && t.sendMs >= windowStartMs && t.end.atMs <= windowEndMs);
}

function outputTokens(t: RequestTimeline): number {
  let n = 0;
  for (let i = 0; i < t.chunkTokens.length; i++) n += t.chunkTokens[i]!;
  return n;
}

export interface SentLengths {
  input: number[];
  output: number[];
}

/** The per-request input and output lengths of the window's completed requests (see the file comment). */
export function sentLengths(
  timelines: readonly RequestTimeline[],
  windowStartMs: number,
  windowEndMs: number,
  plannedPromptTokens?: (id: string) => number | undefined,
): SentLengths {
  const input: number[] = [];
  const output: number[] = [];
  for (const t of completedInWindow(timelines, windowStartMs, windowEndMs)) {
    const p = t.promptTokens ?? plannedPromptTokens?.(t.id);
    if (p !== undefined) input.push(p);
    output.push(outputTokens(t));
  }
  return { input, output };
}
