/**
 * The lengths a workload cell actually sent (issue 23, docs/workloads.md):
 * - input: over the requests SENT inside the window (at or after its start, before its end),
 *   each one's prompt tokens as the server counted them (usage.prompt_tokens, final or
 *   continuous), or, where the server reported none (a request cut at the window's end, a server
 *   without usage), as the workload built it (`plannedPromptTokens`: sized with the server's
 *   tokenizer or a local one); a request with neither is left out;
 * - output: over the same requests, each one's output length as sent: the max_tokens it asked
 *   for (`askedMaxTokens`; the runners force the length where the engine can, and the cell's own
 *   figures count what was produced). Not the produced tokens of the completed ones: those leave
 *   out the longest requests, still running when the window closes (−6 … −22 % on the mean in a
 *   simulated closed loop of uniform lengths). A request without the field (recorded before it) is
 *   counted by its produced tokens if it completed in the window.
 * Pure.
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
export function sentLengths(timelines: readonly RequestTimeline[], windowStartMs: number, windowEndMs: number): SentLengths {
  const input: number[] = [];
  const output: number[] = [];
  for (const t of timelines) {
    if (t.sendMs < windowStartMs || t.sendMs >= windowEndMs) continue;
    const p = t.promptTokens ?? t.plannedPromptTokens;
    if (p !== undefined) input.push(p);
    if (t.askedMaxTokens !== undefined) output.push(t.askedMaxTokens);
    else if (t.end?.kind === 'done' && t.end.atMs <= windowEndMs) output.push(outputTokens(t));
  }
  return { input, output };
}
