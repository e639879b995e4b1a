/**
 * A 429's Retry-After (issue 60): read as seconds or as an HTTP date, and what a worker waits
 * after a rate-limited request (the Retry-After, else the usual backoff, at most a minute); any
 * other failure waits the backoff alone.
 */
import { describe, expect, test } from 'vitest';
import { retryAfterMs } from '../../src/client/retry-after.js';
import { backoffMs, RATE_LIMIT_MAX_WAIT_MS, waitAfterFailureMs } from '../../src/load/closed-loop.js';
import type { RequestTimeline } from '../../src/shapes/timeline.js';

describe('Retry-After', () => {
  const now = Date.parse('Mon, 07 Dec 2026 19:00:00 GMT');
  test('delay-seconds, an HTTP date (in the past: 0), or nothing readable', () => {
    expect(retryAfterMs('1', now)).toBe(1000);
    expect(retryAfterMs(' 120 ', now)).toBe(120_000);
    expect(retryAfterMs('Mon, 07 Dec 2026 19:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Mon, 07 Dec 2026 18:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs(['2', '9'], now)).toBe(2000);
    for (const bad of [undefined, '', '1.5', '-1', 'soon', 'Mon, 07 Dec 2026 19:00:05']) expect(retryAfterMs(bad, now), String(bad)).toBeUndefined();
  });
});

describe('the wait after a failed request', () => {
  const failed = (code: 'rate-limited' | 'http-status', retryAfter?: number): RequestTimeline =>
    ({ id: 'x', sendMs: 0, chunkMs: [], chunkTokens: [], tokenSource: 'chunks', reasoningTokens: 0, end: { kind: 'error', atMs: 1, code, message: 'm', httpStatus: code === 'rate-limited' ? 429 : 500, ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}) } }) as RequestTimeline;
  test("a 429 waits its Retry-After (at most a minute), or the backoff where it gave none; a 500 the backoff whatever it says", () => {
    expect(waitAfterFailureMs(failed('rate-limited', 1000), 1)).toBe(1000);
    expect(waitAfterFailureMs(failed('rate-limited', 10 * 60_000), 1)).toBe(RATE_LIMIT_MAX_WAIT_MS);
    expect(waitAfterFailureMs(failed('rate-limited'), 3)).toBe(backoffMs(3));
    expect(waitAfterFailureMs(failed('http-status', 5000), 2)).toBe(backoffMs(2));
  });
});
