/**
 * Extremes and appends of any size (src/extent.ts): the same answers as Math.max, Math.min and
 * push, at a length where the spread forms throw.
 */
import { describe, expect, test } from 'vitest';
import { appendAll, maxOf, minOf } from '../src/extent.js';

describe('extent', () => {
  test('as Math.max and Math.min on small input, empty and NaN included', () => {
    for (const xs of [[3, -1, 7.5, 7.5, 0], [-0.5], [], [2, NaN, 9], [Infinity, -Infinity], [-0, 0], [0, -0], [-0]]) {
      expect(maxOf(xs)).toBe(Math.max(...xs));
      expect(minOf(xs)).toBe(Math.min(...xs));
    }
    // any iterable, not only arrays
    expect(maxOf(new Set([4, 9, 1]))).toBe(9);
    expect(minOf(new Float64Array([4, 9, 1]))).toBe(1);
  });

  test('two million values: the spread forms throw, these do not', () => {
    const xs = Float64Array.from({ length: 2_000_000 }, (_, i) => (i * 7919) % 1_000_003);
    expect(() => Math.max(...xs)).toThrow(RangeError);
    expect(maxOf(xs)).toBe(1_000_002);
    expect(minOf(xs)).toBe(0);
    const out = [1];
    expect(() => out.push(...xs)).toThrow(RangeError);
    expect(appendAll(out, xs)).toBe(out);
    expect(out.length).toBe(2_000_001);
    expect(out[2_000_000]).toBe(xs[1_999_999]);
  });
});
