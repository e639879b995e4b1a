/** The sweep's anchors from a context's decode cells and the rates spread between them (pure). */
import { describe, expect, test } from 'vitest';
import { completedPerS, spreadRates, sweepAnchors } from '../../src/metrics/sweep-rates.js';

const cell = (concurrency: number, completedRequests: number, measuredForS = 10) => ({ concurrency, figures: { completedRequests, measuredForS } });

describe('sweep rates', () => {
  test('spread evenly from the first to the last, both included, to 3 significant digits', () => {
    expect(spreadRates(1, 5, 5)).toEqual([1, 2, 3, 4, 5]);
    expect(spreadRates(1.5, 12.5, 3)).toEqual([1.5, 7, 12.5]);
    expect(spreadRates(1.23456, 9.87654, 4)).toEqual([1.23, 4.12, 7, 9.88]);
    expect(spreadRates(2, 2, 2)).toEqual([2, 2]);
    expect(() => spreadRates(0, 2, 3)).toThrow(/0 < from ≤ to/);
    expect(() => spreadRates(3, 2, 3)).toThrow(/0 < from ≤ to/);
    expect(() => spreadRates(1, 2, 1)).toThrow(/points ≥ 2/);
  });

  test('anchors: the synchronous rate at concurrency 1, the limit the best of the cells', () => {
    expect(completedPerS({ completedRequests: 15, measuredForS: 10 })).toBe(1.5);
    expect(completedPerS({ completedRequests: 0, measuredForS: 10 })).toBeUndefined();
    expect(sweepAnchors([cell(8, 125), cell(1, 15), cell(4, 90)])).toEqual({ synchronous: 1.5, limit: 12.5 });
    // past the knee a higher column may complete fewer: the limit is the best, not the last
    expect(sweepAnchors([cell(1, 15), cell(8, 125), cell(64, 100)])).toEqual({ synchronous: 1.5, limit: 12.5 });
    // cells without figures were not measured
    expect(sweepAnchors([cell(1, 15), { concurrency: 8 }])).toEqual({ synchronous: 1.5, limit: 1.5 });
  });

  test('no synchronous rate: an error saying so', () => {
    expect(sweepAnchors([cell(8, 125)])).toEqual({ error: expect.stringMatching(/concurrency 1 completed no request/) });
    expect(sweepAnchors([{ concurrency: 1 }, cell(8, 125)])).toHaveProperty('error');
    expect(sweepAnchors([cell(1, 0), cell(8, 125)])).toHaveProperty('error');
  });
});
