import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { isThresholdsSchemaCurrent } from '../../src/thresholds/gen-schema.js';
import { loadThresholds, parseThresholds, ThresholdsError } from '../../src/thresholds/load.js';

const keys = { cellKeys: ['0/1', '8K/1', '8K/16', '64K/16'], prefillKeys: ['8K', '64K'] };
const dir = mkdtempSync(join(tmpdir(), 'sm-thr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function parseError(json: unknown): string {
  try {
    parseThresholds(typeof json === 'string' ? json : JSON.stringify(json), 'thresholds/t.json', keys);
  } catch (error) {
    expect(error).toBeInstanceOf(ThresholdsError);
    return (error as Error).message;
  }
  throw new Error('expected a parse error');
}

test('thresholds.schema.json is current (fix: npx tsx src/thresholds/gen-schema.ts)', () => {
  expect(isThresholdsSchemaCurrent()).toBe(true);
});

test('a valid file parses; cells and prefill default to empty', () => {
  const file = parseThresholds(
    JSON.stringify({
      $schema: '../src/thresholds/thresholds.schema.json',
      target: 'sim',
      headroom: 0.2,
      cells: { '64K/16': { status: 'valid', min: { perRequestTokensPerSecond: 24 }, max: { ttftMs: 450 } } },
    }),
    'thresholds/t.json',
    keys,
  );
  expect(file.cells['64K/16']?.min?.perRequestTokensPerSecond).toBe(24);
  expect(file.prefill).toEqual({});
});

test('unknown figure names the file, the key and the allowed figures', () => {
  const msg = parseError({ cells: { '64K/16': { min: { perRequestTps: 24 } } } });
  expect(msg).toContain('thresholds/t.json');
  expect(msg).toContain('cells["64K/16"].min: unknown figure "perRequestTps"');
  expect(msg).toContain('allowed: totalTokensPerSecond, perRequestTokensPerSecond, ttftMs, timeBetweenTokensMs');
});

test('unknown prefill figure lists the prefill figures', () => {
  const msg = parseError({ prefill: { '8K': { max: { ttft: 1 } } } });
  expect(msg).toContain('prefill["8K"].max: unknown figure "ttft"; allowed: promptTokensPerSecond, ttftMs');
});

test('unknown keys at the top and in a cell', () => {
  expect(parseError({ cels: {} })).toContain('(top level): unknown key "cels"; allowed: $schema, target, headroom');
  expect(parseError({ cells: { '8K/1': { minimum: {} } } })).toContain('cells["8K/1"]: unknown key "minimum"; allowed: status, min, max');
});

test('unknown cell and prefill row are errors listing the matrix', () => {
  const msg = parseError({ cells: { '128K/1': {} }, prefill: { '16K': {} } });
  expect(msg).toContain('cells["128K/1"]: not a cell of the current matrix (it has 0/1, 8K/1, 8K/16, 64K/16)');
  expect(msg).toContain('prefill["16K"]: not a prefill row of the current matrix (it has 8K, 64K)');
});

test('a cell written in tokens is pointed to its label', () => {
  expect(parseError({ cells: { '8192/16': {} } })).toContain('cells["8192/16"]: write this cell as "8K/16"');
});

test('malformed keys, bad values and bad statuses', () => {
  expect(parseError({ cells: { '8k/16': {} } })).toMatch(/cell keys are <context>\/<concurrency>/);
  expect(parseError({ cells: { '8K/16': { min: { ttftMs: -1 } } } })).toContain('cells["8K/16"].min.ttftMs');
  expect(parseError({ cells: { '8K/16': { status: 'ok' } } })).toContain('cells["8K/16"].status');
  expect(parseError({ headroom: 1.5 })).toContain('headroom');
});

test('bad JSON names the file', () => {
  expect(parseError('{ "cells": ')).toMatch(/^thresholds\/t\.json: not valid JSON/);
});

test('loadThresholds reads a file; a missing file is no budgets; an unreadable one says how to fix it', () => {
  const path = join(dir, 'x.json');
  writeFileSync(path, JSON.stringify({ prefill: { '8K': { min: { promptTokensPerSecond: 1000 } } } }));
  expect(loadThresholds(path, keys).prefill['8K']?.min?.promptTokensPerSecond).toBe(1000);
  expect(loadThresholds(join(dir, 'none.json'), keys)).toEqual({ cells: {}, prefill: {} });
  expect(() => loadThresholds(dir, keys)).toThrow(/cannot read the threshold file.*-u/);
});

test('allowUnknown (for -u) accepts entries outside the matrix', () => {
  const text = JSON.stringify({ cells: { '128K/1': {} } });
  expect(() => parseThresholds(text, 't.json', keys)).toThrow(/not a cell of the current matrix/);
  expect(Object.keys(parseThresholds(text, 't.json', { ...keys, allowUnknown: true }).cells)).toEqual(['128K/1']);
});

test('a byte-order mark before the JSON (an editor on Windows writes one) is read, not an invisible syntax error', () => {
  const file = parseThresholds(`\uFEFF${JSON.stringify({ cells: { '8K/1': { min: { totalTokensPerSecond: 10 } } } })}`, 'thresholds/t.json', keys);
  expect(file.cells['8K/1']?.min?.totalTokensPerSecond).toBe(10);
});
