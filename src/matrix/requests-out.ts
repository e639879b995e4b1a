/**
 * A measured cell's requests to the per-request file (LLM_BENCH_REQUESTS_FILE): each repeat's
 * lines (metrics/request-records.ts) appended as soon as its window's figures are computed. A
 * write that fails is said on the cell's progress line and the run goes on: the file is a detail
 * beside the figures, which it does not change.
 */
import type { RunContext } from './context.js';
import { requestRecord, type RequestRecordCell } from '../metrics/request-records.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import { redactSecrets, redactValues } from '../redact.js';
import { RequestsFile } from '../results/requests-file.js';
import type { ResolvedSuite } from '../config/resolve.js';

/**
 * LLM_BENCH_REQUESTS_FILE's file, made (or emptied of another run's lines) before any cell, so a
 * path that cannot be written stops the bench file before it measures; none without the setting.
 * `startedAt`: the Vitest invocation's start (its bench files share the file); `resumed`: append.
 */
export function openRequestsFile(cfg: Pick<ResolvedSuite, 'requestsFile'>, startedAt: string, resumed: boolean): RequestsFile | undefined {
  if (cfg.requestsFile === undefined) return undefined;
  const file = new RequestsFile(cfg.requestsFile, startedAt, resumed);
  file.prepare();
  return file;
}

/** One request of a cell, and when a rate cell's schedule said to send it. */
export interface CellRequest {
  timeline: RequestTimeline;
  scheduledMs?: number;
}

export function writeCellRequests(
  run: RunContext,
  cell: Omit<RequestRecordCell, 'run'>,
  requests: Iterable<CellRequest>,
  window: { windowStartMs: number; windowEndMs: number },
  say: (m: string) => void,
): void {
  const file = run.requestsFile;
  if (!file) return;
  const redact = (text: string) => redactSecrets(redactValues(text, [run.cfg.target.apiKey]));
  const at = { run: file.run, ...cell };
  function* lines() {
    for (const r of requests) yield requestRecord(at, r.timeline, window, redact, r.scheduledMs);
  }
  try {
    file.append(lines());
  } catch (error) {
    say(`⚠ could not write its requests to ${file.path} (${(error as Error).message}); its figures are unaffected`);
  }
}
