/**
 * The results folder: created one level at a time (never Node 20's recursive mkdir, which spins for
 * ever under /proc), and checked before a run measures anything.
 */
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { checkResultsDir, ensureDir } from '../../src/results/write.js';

describe('ensureDir', () => {
  test('creates missing parents; an existing folder is fine', () => {
    const base = mkdtempSync(join(tmpdir(), 'lsm-w-'));
    const deep = join(base, 'a', 'b', 'c');
    ensureDir(deep);
    expect(existsSync(deep)).toBe(true);
    ensureDir(deep);
  });
  test('a path under /proc or /sys fails at once; a file in the way fails', () => {
    // each throws from its first mkdir (no retry loop: the test's own timeout would catch a hang)
    expect(() => ensureDir('/proc/forbidden/x')).toThrow(/ENOENT/);
    expect(() => ensureDir('/sys/forbidden')).toThrow(/EPERM|EACCES|ENOENT|EROFS/);
    const base = mkdtempSync(join(tmpdir(), 'lsm-w-'));
    writeFileSync(join(base, 'file'), 'x');
    expect(() => ensureDir(join(base, 'file'))).toThrow(/exists and is not a folder/);
  });
});

describe('checkResultsDir', () => {
  test('a writable folder passes and keeps no trace', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'lsm-w-')), 'reports');
    checkResultsDir(dir);
    expect(readdirSync(dir)).toEqual([]);
  });
  test('an unwritable one is a ConfigError naming LLM_BENCH_OUT and the fix', () => {
    expect(() => checkResultsDir('/proc/forbidden')).toThrow(ConfigError);
    expect(() => checkResultsDir('/sys/forbidden')).toThrow(/results cannot be written to \/sys\/forbidden .*set LLM_BENCH_OUT to a folder you can write/);
  });
});
