import { expect, test } from 'vitest';
import {
  formatCount, formatMs, formatMsPrecise, formatPrefillRate, formatRate, formatSeconds,
} from '../../src/text/format.js';

test('rates: one decimal with thousands commas', () => {
  expect(formatRate(2616.6)).toBe('2,616.6');
  expect(formatRate(59.25)).toBe('59.3');
  expect(formatRate(12345.67)).toBe('12,345.7');
  expect(formatRate(undefined)).toBe('—');
  expect(formatRate(Number.NaN)).toBe('—');
});

test('prefill rates: K at or above 10,000', () => {
  expect(formatPrefillRate(10_369.6)).toBe('10.4K');
  expect(formatPrefillRate(10_000)).toBe('10.0K');
  expect(formatPrefillRate(9995)).toBe('9,995');
  expect(formatPrefillRate(9995, 1)).toBe('9,995.0');
  expect(formatPrefillRate(2708.6, 0)).toBe('2,709');
});

test('times and counts', () => {
  expect(formatMs(1458.4)).toBe('1,458 ms');
  expect(formatMs(0)).toBe('0 ms');
  expect(formatMsPrecise(16.84)).toBe('16.8 ms');
  expect(formatSeconds(29.96)).toBe('30.0 s');
  expect(formatCount(78501)).toBe('78,501');
  expect(formatCount(undefined)).toBe('—');
});
