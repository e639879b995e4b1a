/**
 * Result files of schema version 1 (before open-loop rate cells) are read as version 2; a version
 * this tool does not know is refused with both versions named.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadResultFile } from '../../src/compare/load.js';
import { migrateResultJson, RESULT_SCHEMA_VERSION } from '../../src/results/migrate.js';
import { sglangResult } from './fixtures/sglang-h200.js';

describe('reading older result files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-migrate-'));
  test('a version-1 file loads as version 2, unchanged otherwise', () => {
    const v1 = { ...sglangResult(), schemaVersion: 1 };
    const path = join(dir, 'v1.json');
    writeFileSync(path, JSON.stringify(v1));
    const read = loadResultFile(path, 'LLM_BENCH_BASELINE');
    expect(read.schemaVersion).toBe(RESULT_SCHEMA_VERSION);
    expect(read.cells).toEqual(v1.cells);
    expect(read.rateCells).toBeUndefined();
  });
  test('a result file that starts with a byte-order mark (saved by an editor on Windows) is read', () => {
    const path = join(dir, 'bom.json');
    writeFileSync(path, `\uFEFF${JSON.stringify(sglangResult())}`);
    expect(loadResultFile(path, 'LLM_BENCH_BASELINE').cells).toEqual(sglangResult().cells);
  });
  test('a version it does not know is refused, naming what it reads', () => {
    const path = join(dir, 'v9.json');
    writeFileSync(path, JSON.stringify({ ...sglangResult(), schemaVersion: 9 }));
    expect(() => loadResultFile(path, 'base.json')).toThrow(/has schemaVersion 9, but this version of llm-speed-matrix reads schemaVersion 1 to 2/);
  });
  test('migration leaves other values alone', () => {
    expect(migrateResultJson(null)).toBeNull();
    expect(migrateResultJson({ schemaVersion: 7 })).toEqual({ schemaVersion: 7 });
  });
});
