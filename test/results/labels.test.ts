import { expect, test } from 'vitest';
import { cellKey, compareCellKeys, contextLabel, parseCellKey, parseContext } from '../../src/shapes/labels.js';

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
