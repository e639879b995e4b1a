/**
 * The figures of an open-loop rate cell (metrics/rate-figures.ts) on hand-made requests whose
 * every figure is known: rates count window events, latencies start at the schedule or the send,
 * requests in the system are time-weighted.
 */
import { describe, expect, test } from 'vitest';
import { computeRateFigures, countOverWindow, inSystemIntervals, type ScheduledRequest } from '../../src/metrics/rate-figures.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';

/** a request scheduled at `at`, sent `delay` later, first token 100 ms after the send, 4 tokens 10 ms apart */
function request(id: string, at: number, delay: number, end: 'done' | 'error' | 'none' = 'done', waited = false): ScheduledRequest {
  const send = at + delay;
  const chunkMs = [send + 100, send + 110, send + 120, send + 130];
  const timeline: RequestTimeline = {
    id,
    sendMs: send,
    sentHeadersMs: send,
    firstTokenMs: end === 'error' ? undefined : send + 100,
    chunkMs: end === 'error' ? [] : chunkMs,
    chunkTokens: end === 'error' ? [] : [1, 1, 1, 1],
    tokenSource: 'usage',
    reasoningTokens: 0,
    ...(end === 'done' ? { end: { kind: 'done' as const, atMs: send + 131 } } : end === 'error' ? { end: { kind: 'error' as const, atMs: send + 5, code: 'http-status' as const, message: 'HTTP 500' } } : {}),
  };
  return { timeline, scheduledMs: at, waitedForCeiling: waited };
}

describe('rate figures', () => {
  test('rates, latencies from the schedule and the send, dispatch delay, failures', () => {
    // window [1000, 3000): 4 scheduled inside (one failed), one in the ramp before it
    const requests = [request('r0', 900, 0), request('a', 1000, 2), request('b', 1500, 4), request('c', 2000, 50, 'done', true), request('d', 2500, 1, 'error')];
    const f = computeRateFigures({ requests, scheduledInWindow: 5, unsent: 1, windowStartMs: 1000, windowEndMs: 3000, samples: [{ atMs: 1500, waiting: 2 }, { atMs: 2500, waiting: 4 }] });
    expect(f.offeredRate).toBe(2.5); // 5 due (one unsent) over 2 s
    expect(f.sentRate).toBe(2); // a, b, c, d sent inside the window
    expect(f.completedRate).toBe(2); // r0 (ends at 1031), a, b, c: 4 over 2 s
    expect(f.scheduled).toBe(5);
    expect(f.sent).toBe(4);
    expect(f.completed).toBe(3);
    expect(f.failedRequests).toBe(1);
    expect(f.unsent).toBe(1);
    expect(f.ceilingWaited).toBe(1);
    expect(f.outputTokens).toBe(16); // r0's 4 arrive from 1000 on, a, b, c
    expect(f.totalTokensPerSecond).toBe(8);
    // TTFT from the send is always 100; from the schedule 100 + the dispatch delay
    expect(f.ttftFromSendMs?.median).toBe(100);
    expect(f.ttftFromScheduleMs?.median).toBe(104);
    expect(f.ttftFromScheduleMs?.samples).toBe(3); // the failed one has no first token
    expect(f.e2eFromSendMs?.median).toBe(131);
    expect(f.e2eFromScheduleMs?.median).toBe(135);
    expect(f.tbtMs?.median).toBe(10);
    expect(f.perRequestTokensPerSecond?.median).toBe(100);
    expect(f.dispatchDelayMs?.median).toBe(3); // 2, 4, 50, 1 → between 2 and 4
    expect(f.serverWaiting).toEqual({ mean: 3, max: 4 });
  });

  test('requests in the system: from the scheduled time to the end, time-weighted, the most at once', () => {
    const requests = [request('a', 0, 0), request('b', 50, 0, 'none')];
    const intervals = inSystemIntervals(requests, 200);
    expect(intervals).toEqual([[0, 131], [50, 200]]);
    const c = countOverWindow(intervals, 0, 200);
    expect(c.max).toBe(2);
    expect(c.mean).toBeCloseTo((131 + 150) / 200, 9);
    // ends and starts at the same instant are not two at once
    expect(countOverWindow([[0, 10], [10, 20]], 0, 20).max).toBe(1);
  });

  test('a window without requests: zero rates and no latency figures (never a made-up 0 ms)', () => {
    const f = computeRateFigures({ requests: [], scheduledInWindow: 0, unsent: 0, windowStartMs: 0, windowEndMs: 1000, samples: [] });
    expect(f.offeredRate).toBe(0);
    expect(f.ttftFromScheduleMs).toBeUndefined();
    expect(f.dispatchDelayMs).toBeUndefined();
    expect(f.serverWaiting).toBeUndefined();
  });
});

describe('a rate cell and the gaps between tokens', () => {
  test('ITL over every gap whose later chunk is in the window, as a decode cell; an itlP99 SLO judges the rate cell on it', async () => {
    const { rateSloVerdict } = await import('../../src/judge/slo-verdict.js');
    const { parseSloText } = await import('../../src/slo/slo.js');
    const requests = [request('a', 1000, 0), request('b', 1200, 0)];
    // b pauses 800 ms before its last token
    (requests[1]!.timeline.chunkMs as number[])[3] = 1200 + 120 + 800;
    const f = computeRateFigures({ requests, scheduledInWindow: 2, unsent: 0, windowStartMs: 1000, windowEndMs: 3000, samples: [] });
    expect(f.interTokenLatencyMs).toMatchObject({ median: 10, max: 800, gaps: 6 });
    expect(f.longestGap).toMatchObject({ requestId: 'b', ms: 800 });
    const cell = { context: 0, contextLabel: '0', rate: 1, status: 'valid', statuses: ['valid'], evidence: {}, figures: f, finishedAt: '' } as unknown as Parameters<typeof rateSloVerdict>[0];
    expect(rateSloVerdict(cell, parseSloText('maxGapMs<=500')).binding?.detail).toBe('longest gap 800.0 ms > 500.0 ms');
    expect(rateSloVerdict(cell, parseSloText('itl<=20,maxGapMs<=1000')).meets).toBe(true);
  });
});
