import { expect, test } from 'vitest';
import { cellKey, compareCellKeys, compareRateCellKeys, contextLabel, parseCellKey, parseContext, parseRateCellKey, rateCellKey, testNames } from '../../src/shapes/labels.js';

test('contextLabel uses K = 1024 and exact numbers otherwise', () => {
  expect(contextLabel(0)).toBe('0');
  expect(contextLabel(8192)).toBe('8K');
  expect(contextLabel(125_952)).toBe('123K');
  expect(contextLabel(131_072)).toBe('128K');
  expect(contextLabel(1000)).toBe('1000');
  expect(() => contextLabel(-1)).toThrow(/whole number of tokens/);
  expect(() => contextLabel(1.5)).toThrow(/whole number of tokens/);
});

test('parseContext is the inverse and accepts plain counts', () => {
  expect(parseContext('64K')).toBe(65_536);
  expect(parseContext('64k')).toBe(65_536);
  expect(parseContext('123K')).toBe(125_952);
  expect(parseContext('8192')).toBe(8192);
  expect(parseContext('0')).toBe(0);
  expect(parseContext('1.5K')).toBe(1536);
  for (const bad of ['', 'K', '8M', '-8K', '1.5', 'abc']) expect(() => parseContext(bad)).toThrow(/not a context length/);
  for (const n of [0, 1000, 8192, 125_952]) expect(parseContext(contextLabel(n))).toBe(n);
});

test('cell keys', () => {
  expect(cellKey(8192, 16)).toBe('8K/16');
  expect(cellKey(0, 1)).toBe('0/1');
  expect(parseCellKey('123K/8')).toEqual({ context: 125_952, concurrency: 8 });
  expect(() => parseCellKey('8K')).toThrow(/not a cell key/);
  expect(() => parseCellKey('8K/0')).toThrow(/not a cell key/);
  expect(['64K/1', '8K/16', '0/4', '8K/2'].sort(compareCellKeys)).toEqual(['0/4', '8K/2', '8K/16', '64K/1']);
});

test('rate cell keys: the rate as given, parsed back, sorted by context then rate', () => {
  expect(rateCellKey(8192, 2)).toBe('8K@2');
  expect(rateCellKey(8192, 0.5)).toBe('8K@0.5');
  expect(rateCellKey(0, 12.25)).toBe('0@12.25');
  expect(parseRateCellKey('8K@0.5')).toEqual({ context: 8192, rate: 0.5 });
  expect(parseRateCellKey('123K@16')).toEqual({ context: 125_952, rate: 16 });
  for (const [context, rate] of [[0, 0.1], [8192, 1], [65_536, 3.75]] as const) {
    expect(parseRateCellKey(rateCellKey(context, rate))).toEqual({ context, rate });
  }
  for (const bad of ['8K', '8K@', '8K@0', '8K@-1', '8K@fast', '8K/2', 'lots@2']) expect(() => parseRateCellKey(bad)).toThrow(/not a (rate cell key|context length)/);
  for (const rate of [0, -1, Number.NaN, Infinity]) expect(() => rateCellKey(8192, rate)).toThrow(/above 0/);
  // a decode key is not a rate key and the other way round
  expect(() => parseCellKey('8K@2')).toThrow(/not a cell key/);
  expect(['8K@4', '0@2', '8K@0.5', '8K@16', '0@0.25'].sort(compareRateCellKeys)).toEqual(['0@0.25', '0@2', '8K@0.5', '8K@4', '8K@16']);
});

test('test names: one per kind, built from the keys, so the matrix and the progress lines name a test alike', () => {
  expect(testNames.decode(cellKey(8192, 16))).toBe('decode 8K/16');
  expect(testNames.prefill(contextLabel(65_536))).toBe('prefill 64K');
  expect(testNames.rate(rateCellKey(0, 0.5))).toBe('rate 0@0.5');
  expect(testNames.capacity('8K')).toBe('capacity 8K');
  expect(testNames.rateCapacity('8K')).toBe('rate capacity 8K');
  // no two kinds give one name for the same key, so results and progress lines keyed by name never mix kinds
  // (`-t` matches a substring, though: `-t 'capacity 8K'` also runs `rate capacity 8K`)
  const names = Object.values(testNames).map((name) => name('8K'));
  expect(new Set(names).size).toBe(names.length);
});
