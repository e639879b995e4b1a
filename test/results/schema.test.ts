import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { isGeneratedCurrent } from '../../src/results/gen-types.js';
import { validateResult } from '../../src/results/validate.js';
import { writeResults } from '../../src/results/write.js';
import { renderResultPages } from '../../src/pages/result-pages.js';
import { sglangResult } from './fixtures/sglang-h200.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

test('src/shapes/result.gen.ts is current with the schema (fix: npx tsx src/results/gen-types.ts)', async () => {
  expect(await isGeneratedCurrent()).toBe(true);
});

test('gen-types --check exits 0 when current', () => {
  const script = new URL('../../src/results/gen-types.ts', import.meta.url).pathname;
  expect(() => execFileSync(process.execPath, ['--import', 'tsx', script, '--check'], { stdio: 'pipe' })).not.toThrow();
});

test('the reference result validates', () => {
  const outcome = validateResult(JSON.parse(JSON.stringify(sglangResult())));
  expect(outcome.ok ? [] : outcome.errors).toEqual([]);
});

test('cell evidence streamEndings validates; a missing count or a negative one does not', () => {
  const r = sglangResult();
  r.cells[0]!.evidence.streamEndings = { done: 25, closeAfterFinish: 12, unterminatedLast: 3 };
  const outcome = validateResult(JSON.parse(JSON.stringify(r)));
  expect(outcome.ok ? [] : outcome.errors).toEqual([]);
  const bad = JSON.parse(JSON.stringify(r));
  delete bad.cells[0].evidence.streamEndings.unterminatedLast;
  const o = validateResult(bad);
  expect(o.ok ? [] : o.errors.join()).toMatch(/streamEndings/);
  const negative = JSON.parse(JSON.stringify(r));
  negative.cells[0].evidence.streamEndings.closeAfterFinish = -1;
  expect(validateResult(negative).ok).toBe(false);
});

test('validation rejects unknown fields, wrong enums, wrong schemaVersion, bad keys', () => {
  const r = sglangResult() as unknown as Record<string, unknown>;
  const errorsOf = (json: unknown) => {
    const o = validateResult(json);
    return o.ok ? [] : o.errors;
  };
  expect(errorsOf({ ...r, extra: 1 }).join()).toMatch(/extra/);
  expect(errorsOf({ ...r, schemaVersion: 3 }).join()).toMatch(/schemaVersion/);
  expect(errorsOf({ ...r, schemaVersion: 1 }).join()).toMatch(/schemaVersion/); // a version-1 file is migrated by the reader (results/migrate.ts), not by validation
  const bad = sglangResult();
  (bad.cells[0] as unknown as { status: string }).status = 'fine';
  expect(errorsOf(bad).join()).toMatch(/cells\.0\.status/);
  const badKey = sglangResult();
  badKey.info.plannedCells = ['8k/1'];
  expect(errorsOf(badKey).join()).toMatch(/info\.plannedCells\.0/);
  const missing = sglangResult() as unknown as { cells: Array<Record<string, unknown>> };
  delete missing.cells[1]!.finishedAt;
  expect(errorsOf(missing).join()).toMatch(/cells\.1\.finishedAt/);
});

test('writeResults writes the JSON, the Markdown page and the HTML report into a new folder and leaves no temp files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sm-write-'));
  dirs.push(dir);
  const out = join(dir, 'nested', 'reports');
  const { jsonPath, mdPath, htmlPath } = writeResults(out, sglangResult(), renderResultPages(sglangResult()));
  expect(JSON.parse(readFileSync(jsonPath, 'utf8'))).toEqual(JSON.parse(JSON.stringify(sglangResult())));
  expect(readFileSync(mdPath, 'utf8')).toMatch(/^# Speed test matrix\n/);
  expect(readFileSync(htmlPath, 'utf8')).toMatch(/^<!doctype html>\n/);
  writeResults(out, sglangResult(), renderResultPages(sglangResult())); // overwrite
  expect(readdirSync(out).sort()).toEqual(['speed-matrix.html', 'speed-matrix.json', 'speed-matrix.md']);
});

test('writeResults refuses an invalid result and writes nothing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sm-write-'));
  dirs.push(dir);
  const bad = sglangResult();
  (bad as unknown as { partial: string }).partial = 'yes';
  expect(() => writeResults(join(dir, 'out'), bad, { markdown: '', html: '' })).toThrow(/partial/);
  expect(readdirSync(dir)).toEqual([]);
});
