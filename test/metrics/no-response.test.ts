/**
 * A server that accepts requests and answers nothing (issue 60, row 3): the requests in flight in
 * the window that got no response headers in 5 s or more are named on the cell, the "no output
 * tokens" failure says why, and the next cell's readiness gate waits 10 s at most instead of its
 * full minute. It read "measured no output tokens (0 failed requests)", 64 s a cell, every cell.
 */
import { describe, expect, test } from 'vitest';
import { noResponse } from '../../src/metrics/no-response.js';
import { judgeCell } from '../../src/judge/index.js';
import { cellGateTimeoutMs, SILENT_GATE_MS } from '../../src/matrix/cell-test.js';
import type { RunContext } from '../../src/matrix/context.js';
import type { CellResult } from '../../src/shapes/result.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';

const waiting = (id: string, sendMs: number, headersMs?: number, end?: RequestTimeline['end']): RequestTimeline =>
  ({ id, sendMs, ...(headersMs !== undefined ? { headersMs } : {}), chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0, ...(end ? { end } : {}) }) as RequestTimeline;

describe('no response headers', () => {
  test('requests in flight in the window without headers for 5 s or more are counted; a queued request with its headers, or one just sent, is not', () => {
    const window = [60_000, 65_000] as const;
    const n = noResponse([waiting('a', 0, undefined, { kind: 'aborted', atMs: 65_000 }), waiting('b', 0), waiting('c', 64_000), waiting('d', 0, 3)], ...window)!;
    expect(n).toEqual({ requests: 2, of: 4, longestWaitS: 65 });
    // ended before the window: not in flight in it
    expect(noResponse([waiting('e', 0, undefined, { kind: 'error', atMs: 100, code: 'connect', message: 'x' })], ...window)).toBeUndefined();
  });

  test('the cell\'s "no output tokens" failure names the cause', () => {
    const cell = {
      context: 0, contextLabel: '0', concurrency: 2, status: 'valid', statuses: ['valid'],
      evidence: { noResponse: { requests: 2, of: 2, longestWaitS: 64.2 } },
      figures: { outputTokens: 0, failedRequests: 0, completedRequests: 0, startedRequests: 2, measuredForS: 5, totalTokensPerSecond: 0, clientActiveRequests: 2, averageActiveRequests: 2, averageActiveRequestsSource: 'client', activeRequestsDisagree: false, tokenSource: 'chunks' },
      finishedAt: '2026-12-07T00:00:00Z',
    } as unknown as CellResult;
    const j = judgeCell('0/2', cell, { allowClientLimited: false, allowErrors: false, maxOutputTokens: 32 });
    expect(j.thresholdFailures?.join('\n')).toContain('0/2 measured no output tokens in its window (0 failed requests): 2 of 2 requests got no response headers in up to 64 s (the server, or a gateway, took them and answered nothing; check its log)');
  });

  test('after a cell the server answered nothing of, the next cell\'s gate waits 10 s at most, and says so', () => {
    const said: string[] = [];
    const run = { cfg: { timeouts: { gateMs: 60_000, gatePerContextTokenMs: 0 } }, opened: { session: { answeredNothing: true } } } as unknown as RunContext;
    const cell = { context: 0, concurrency: 2 } as Parameters<typeof cellGateTimeoutMs>[1];
    expect(cellGateTimeoutMs(run, cell, (m) => said.push(m))).toBe(SILENT_GATE_MS);
    expect(said[0]).toBe("the server answered none of the last cell's requests (no response headers): the readiness gate waits 10 s at most, not 60 s");
    delete (run.opened.session as { answeredNothing?: boolean }).answeredNothing;
    expect(cellGateTimeoutMs(run, cell, () => {})).toBe(60_000);
  });
});
