/**
 * Pure: one request's line of the per-request file (LLM_BENCH_REQUESTS_FILE; the shape is
 * src/shapes/request-record.ts), from its timeline and the cell's window, with the same definitions
 * as the cell's figures: TTFT from the request written to the socket (request.ts), end-to-end
 * latency and TPOT as latency.ts (vLLM's), window tokens as the cell's total tok/s counts them.
 * Cost: one pass over the request's chunks and one sort of its gaps (a Float64Array), nothing kept.
 */
import type { RequestRecord } from '../shapes/request-record.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import { MATRIX_TTFT_FROM, tokensInWindow, ttftStartMs } from './request.js';
import { requestLatency } from './latency.js';
import { quantile } from './stats.js';

/** Which cell a request belongs to, as its line names it. */
export type RequestRecordCell = Pick<RequestRecord, 'run' | 'kind' | 'cell' | 'context' | 'concurrency' | 'rate' | 'repeat'>;

/** to 0.1 ms, in seconds from the window's start */
const sinceWindow = (atMs: number, windowStartMs: number): number => Math.round((atMs - windowStartMs) * 10) / 10_000;
/** to 0.001 ms */
const ms = (x: number): number => Math.round(x * 1000) / 1000;

/** The request's gaps between token chunks over its whole stream, in brief; undefined with fewer than two chunks. */
function itlSummary(t: RequestTimeline): RequestRecord['itl'] {
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  let chunks = 0;
  for (let i = 0; i < n; i++) if (t.chunkTokens[i]! > 0) chunks++;
  if (chunks < 2) return undefined;
  const gaps = new Float64Array(chunks - 1);
  let prev: number | undefined;
  let j = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    if (t.chunkTokens[i]! <= 0) continue;
    const at = t.chunkMs[i]!;
    if (prev !== undefined) {
      gaps[j++] = at - prev;
      sum += at - prev;
    }
    prev = at;
  }
  gaps.sort();
  return { gaps: gaps.length, meanMs: ms(sum / gaps.length), medianMs: ms(quantile(gaps, 0.5)!), p99Ms: ms(quantile(gaps, 0.99)!), maxMs: ms(gaps[gaps.length - 1]!) };
}

/** The line of one request; `redact` takes secrets out of an error message; `scheduledMs` for a rate cell's. */
export function requestRecord(
  cell: RequestRecordCell,
  t: RequestTimeline,
  window: { windowStartMs: number; windowEndMs: number },
  redact: (text: string) => string,
  scheduledMs?: number,
): RequestRecord {
  const { windowStartMs: ws, windowEndMs: we } = window;
  const n = Math.min(t.chunkMs.length, t.chunkTokens.length);
  let outputTokens = 0;
  let lastTokenMs: number | undefined;
  for (let i = 0; i < n; i++) {
    const k = t.chunkTokens[i]!;
    if (k <= 0) continue;
    outputTokens += k;
    lastTokenMs = t.chunkMs[i]!;
  }
  const line: RequestRecord = { ...cell, id: t.id, sentS: sinceWindow(t.sendMs, ws), outputTokens, windowTokens: tokensInWindow(t, ws, we), tokenSource: t.tokenSource, completedInWindow: false, end: 'open' };
  if (scheduledMs !== undefined) line.scheduledS = sinceWindow(scheduledMs, ws);
  if (t.firstTokenMs !== undefined) {
    line.firstTokenS = sinceWindow(t.firstTokenMs, ws);
    line.ttftMs = ms(t.firstTokenMs - ttftStartMs(t, MATRIX_TTFT_FROM));
  }
  if (lastTokenMs !== undefined) line.lastTokenS = sinceWindow(lastTokenMs, ws);
  const latency = requestLatency(t, MATRIX_TTFT_FROM);
  if (latency) {
    line.e2eMs = ms(latency.e2eMs);
    if (latency.tpotMs !== undefined) line.tpotMs = ms(latency.tpotMs);
  }
  const prompt = t.promptTokens ?? t.plannedPromptTokens;
  if (prompt !== undefined) line.promptTokens = prompt;
  const itl = itlSummary(t);
  if (itl) line.itl = itl;
  if (t.end) {
    line.end = t.end.kind;
    line.endS = sinceWindow(t.end.atMs, ws);
    line.completedInWindow = t.end.kind === 'done' && t.end.atMs >= ws && t.end.atMs <= we;
    if (t.end.kind === 'error') line.error = { code: t.end.code, message: redact(t.end.message), ...(t.end.httpStatus !== undefined ? { httpStatus: t.end.httpStatus } : {}) };
  }
  if (t.connectionRetries) line.resent = t.connectionRetries;
  return line;
}
