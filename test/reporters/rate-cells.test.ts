/**
 * Rate cells through a real Vitest run: the reporter prints a line per finished rate cell, and the
 * JSON and the page hold them in order; then the same tests as two blob reports merged
 * (`vitest --merge-reports`), one file each as shards split them: the task metas survive the blobs
 * and the merged result has the same rate cells.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { startVitest, type TestUserConfig } from 'vitest/node';
import SpeedMatrixReporter from '../../reporters/speed-matrix.js';
import { validateResult } from '../../src/results/validate.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';

const root = fileURLToPath(new URL('./rate-fixtures', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sm-rate-rep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(options: TestUserConfig, include = ['**/*.fixture.ts']): Promise<void> {
  const vitest = await startVitest('test', [], { config: false, root, include, watch: false, name: 'matrix', cache: false, ...options }, {}, { stdout: process.stdout, stderr: process.stderr });
  await vitest.close();
}

const read = (out: string): SpeedMatrixResult => JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
const keys = (r: SpeedMatrixResult) => (r.rateCells ?? []).map((c) => `${c.contextLabel}@${c.rate}:${c.status}`);

test('a line per rate cell, and the rate cells in the JSON and on the page; merged blobs keep them', { timeout: 120_000 }, async () => {
  const single = join(dir, 'single');
  const lines: string[] = [];
  await run({ reporters: [new SpeedMatrixReporter({ outDir: single, log: (l) => lines.push(l) })] });
  const a = read(single);
  expect(validateResult(a).ok).toBe(true);
  expect(keys(a)).toEqual(['8K@0.5:valid', '8K@1:valid', '8K@2:saturated', '8K@4:saturated']);
  expect(a.info.run.rates?.rates).toEqual([0.5, 1, 2, 4]);
  expect(lines).toContain('[speed-matrix] 8K@2/s: Saturated · offered/completed 2.0/1.6 req/s · TTFT p90 4.2 s (sched) · e2e p99 12.4 s');
  expect(lines).toContain('[speed-matrix] 8K@0.5/s: Valid · offered/completed 0.50/0.50 req/s · TTFT p90 340 ms (sched) · e2e p99 4.4 s');
  const md = readFileSync(join(single, 'speed-matrix.md'), 'utf8');
  expect(md).toContain('### Open-loop load');
  expect(md).toContain('| 8K | Valid · 0.50 req/s | Valid · 1.0 req/s | Saturated · 1.6 req/s | Saturated · 1.7 req/s |');

  // the same files as two shards' blobs, one file each, merged
  const blobs = join(dir, 'blobs');
  await run({ reporters: [['blob', { outputFile: join(blobs, 'blob-1.json') }]] }, ['rates-a.fixture.ts']);
  await run({ reporters: [['blob', { outputFile: join(blobs, 'blob-2.json') }]] }, ['rates-b.fixture.ts']);
  const merged = join(dir, 'merged');
  await run({ mergeReports: blobs, reporters: [new SpeedMatrixReporter({ outDir: merged, log: () => {} })] });
  const b = read(merged);
  expect(validateResult(b).ok).toBe(true);
  expect(keys(b)).toEqual(keys(a));
  expect(b.rateCells).toEqual(a.rateCells);
});
