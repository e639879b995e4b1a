import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { startVitest } from 'vitest/node';
import type { TestCase, TestModule } from 'vitest/node';
import SpeedMatrixReporter, { isUpdateMode } from '../../reporters/speed-matrix.js';
import { validateResult } from '../../src/results/validate.js';
import { resolveRunSettings } from '../../src/config/settings.js';
import type { SpeedMatrixMeta } from '../../src/shapes/result.js';
import { sglangCells, sglangInfo } from '../results/fixtures/sglang-h200.js';

const fixtures = fileURLToPath(new URL('./fixtures', import.meta.url));
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'sm-rep-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function runFixture(reporter: SpeedMatrixReporter, update = false) {
  const vitest = await startVitest(
    'test',
    [],
    {
      config: false,
      root: fixtures,
      include: ['**/*.fixture.ts'],
      reporters: [reporter],
      watch: false,
      update,
      name: 'matrix',
      cache: false,
    },
    {},
    { stdout: process.stdout, stderr: process.stderr },
  );
  await vitest.close();
  return vitest;
}

describe('reporter on a real Vitest run', () => {
  test('writes validated JSON and a Markdown page with the sections in order', async () => {
    const out = tempDir();
    const lines: string[] = [];
    const before = process.env.LLM_BENCH_OUT;
    const quiet = process.env.LLM_BENCH_QUIET;
    process.env.LLM_BENCH_OUT = out;
    // the cells' own lines off: the reporter says which cell runs
    process.env.LLM_BENCH_QUIET = '1';
    try {
      await runFixture(new SpeedMatrixReporter({ log: (l) => lines.push(l) }));
    } finally {
      if (before === undefined) delete process.env.LLM_BENCH_OUT;
      else process.env.LLM_BENCH_OUT = before;
      if (quiet === undefined) delete process.env.LLM_BENCH_QUIET;
      else process.env.LLM_BENCH_QUIET = quiet;
    }
    const json = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
    const outcome = validateResult(json);
    expect(outcome.ok ? [] : outcome.errors).toEqual([]);
    expect(json.partial).toBe(false);
    expect(json.cells.map((c: { concurrency: number; status: string }) => `${c.concurrency}:${c.status}`)).toEqual([
      '1:requests-queued', '2:valid', '4:valid', '8:over-capacity',
    ]);
    expect(json.prefill).toHaveLength(1);

    const md = readFileSync(join(out, 'speed-matrix.md'), 'utf8');
    const headings = md.split('\n').filter((l) => l.startsWith('#'));
    expect(headings).toEqual([
      '# Speed test matrix', '## Muse-Glimmer-30B on H200 NVL 141GB', '### Hardware', '### Engine', '### Run',
      '### Launch command', '### Prefill', '### Sustained decode', '### All measurements',
    ]);
    expect(md).toContain('| 8K | 59.3 · Requests queued · 122 ms TTFT | **114.2** tok/s · 186 ms TTFT | **221.9** tok/s · 200 ms TTFT | Over capacity |');
    expect(md).not.toContain('Partial');

    // the time left follows the count while cells are left to measure (8K/8 is planned Over capacity)
    expect(lines).toContain(
      '[speed-matrix] 8K/2: Valid · 114.2 tok/s total · 57.1 tok/s/req · TTFT 186 ms · TBT 17.5 ms · active 3.0 (client 2.0 ⚠) · 2/4 done · under a minute left',
    );
    expect(lines).toContain('[speed-matrix] 8K/1: Requests queued · 59.3 tok/s total · 59.4 tok/s/req · TTFT 122 ms · TBT 16.8 ms · active 1.0 · 1/4 done · under a minute left');
    expect(lines.find((l) => l.startsWith('[speed-matrix] 8K/4: '))).toMatch(/ · 3\/4 done$/);
    expect(lines).toContain('[speed-matrix] prefill 8K: Valid · 10.4K prompt tok/s · TTFT 790 ms · 8,192 prompt tokens');
    // the running line names the cell by its meta when Vitest reports readiness late, else by the test name
    expect(lines).toContain('[speed-matrix] running decode 8K/1 …');
    expect(lines.some((l) => l.startsWith('[speed-matrix] wrote '))).toBe(true);
    expect(lines.some((l) => l.includes('a test without meta'))).toBe(true); // matrix project: running line only
    expect(lines).toContain('[speed-matrix] 8K/8: Over capacity · 4/4 done'); // a test that skips itself, its meta set first
    expect(lines.filter((l) => / done( · under a minute left)?$/.test(l))).toHaveLength(4);
  });

  test('LLM_BENCH_OUT, resolved once, is where the results are written and the folder the last line names', async () => {
    const out = join(tempDir(), 'from-env');
    const lines: string[] = [];
    // an environment of its own, not process.env: the reporter reads nothing else
    const settings = resolveRunSettings({}, { LLM_BENCH_OUT: out });
    const reporter = new SpeedMatrixReporter({ settings, log: (l) => lines.push(l) });
    expect(reporter.settings).toBe(settings);
    await runFixture(reporter);
    expect(existsSync(join(out, 'speed-matrix.json'))).toBe(true);
    expect(lines).toContain(`[speed-matrix] wrote ${join(out, 'speed-matrix.md')}, ${join(out, 'speed-matrix.html')} and ${join(out, 'speed-matrix.json')}`);
    // not quiet: the cells print their own phase lines, so the reporter prints no "running" line
    expect(lines.filter((l) => l.startsWith('[speed-matrix] running '))).toEqual([]);
    expect(lines.filter((l) => / done( · under a minute left)?$/.test(l))).toHaveLength(4);
    expect(lines.filter((l) => / done · under a minute left$/.test(l))).toHaveLength(2);
  });

  test('a reporter added by hand resolves its settings once, when constructed', () => {
    const before = process.env.LLM_BENCH_OUT;
    process.env.LLM_BENCH_OUT = 'first';
    try {
      const reporter = new SpeedMatrixReporter({ log: () => {} });
      process.env.LLM_BENCH_OUT = 'second';
      expect(reporter.settings.outDir).toBe('first');
      expect(new SpeedMatrixReporter({ outDir: 'option', log: () => {} }).settings.outDir).toBe('option');
    } finally {
      if (before === undefined) delete process.env.LLM_BENCH_OUT;
      else process.env.LLM_BENCH_OUT = before;
    }
  });

  test('-u rewrites the threshold file from the run', async () => {
    const out = tempDir();
    const thresholds = join(out, 'thresholds', 'sim.json');
    const lines: string[] = [];
    const vitest = await runFixture(new SpeedMatrixReporter({ outDir: out, thresholdsPath: thresholds, log: (l) => lines.push(l) }), true);
    expect(isUpdateMode(vitest)).toBe(true);
    const file = JSON.parse(readFileSync(thresholds, 'utf8'));
    expect(Object.keys(file.cells)).toEqual(['8K/1', '8K/2', '8K/4', '8K/8']);
    expect(file.cells['8K/8']).toEqual({ status: 'over-capacity' });
    expect(file.cells['8K/2'].min.totalTokensPerSecond).toBe(102); // 114.2 × 0.9, rounded down
    expect(file.prefill['8K'].max.ttftMs).toBe(869);
    // a new file: every budget is new, each listed
    expect(lines.some((l) => l.startsWith(`[speed-matrix] updated ${thresholds}: `) && /\d+ budgets moved, 0 kept/.test(l))).toBe(true);
    expect(lines.some((l) => l.includes('  8K/2 min.totalTokensPerSecond new → 102.0'))).toBe(true);
  });

  test('without -u nothing is written to the threshold file', async () => {
    const out = tempDir();
    const thresholds = join(out, 'sim.json');
    const vitest = await runFixture(new SpeedMatrixReporter({ outDir: out, thresholdsPath: thresholds, log: () => {} }));
    expect(isUpdateMode(vitest)).toBe(false);
    expect(existsSync(thresholds)).toBe(false);
  });

  test('-u leaves a broken threshold file alone and says why', async () => {
    const out = tempDir();
    const thresholds = join(out, 'sim.json');
    writeFileSync(thresholds, '{ "cells": { "8K/1": { "min": { "tps": 1 } } } }');
    const lines: string[] = [];
    const exitCode = process.exitCode;
    await runFixture(new SpeedMatrixReporter({ outDir: out, thresholdsPath: thresholds, log: (l) => lines.push(l) }), true);
    process.exitCode = exitCode;
    expect(readFileSync(thresholds, 'utf8')).toBe('{ "cells": { "8K/1": { "min": { "tps": 1 } } } }');
    expect(lines.join('\n')).toMatch(/left unchanged: [\s\S]*unknown figure "tps"/);
  });
});

describe('run end uses every test case (as after --merge-reports)', () => {
  const fakeModules = (metas: Array<SpeedMatrixMeta | undefined>): TestModule[] =>
    [
      {
        project: { name: 'matrix' },
        children: {
          *allTests() {
            for (const [i, m] of metas.entries()) {
              // the third cell failed its checks
              yield { name: `test ${i}`, meta: () => (m ? { speedMatrix: m } : {}), result: () => ({ state: i === 4 ? 'failed' : 'passed' }) };
            }
          },
        },
      },
    ] as unknown as TestModule[];

  test('the final page holds cells never seen live; the last line tallies the cells and the tests', () => {
    const out = tempDir();
    const lines: string[] = [];
    const reporter = new SpeedMatrixReporter({ outDir: out, log: (l) => lines.push(l) });
    const cells = sglangCells();
    reporter.onTestRunEnd(fakeModules([{ kind: 'run', info: sglangInfo() }, undefined, ...cells.map((cell) => ({ kind: 'cell' as const, cell }))]));
    const json = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
    expect(json.cells).toHaveLength(40);
    expect(json.partial).toBe(false);
    // `vitest bench` prints no tally of its own
    expect(lines.at(-1)).toBe('[speed-matrix] finished: 40 of 40 cells (28 Valid, 11 Over capacity, 1 Requests queued) · tests: 41 passed, 1 failed (test 4)');
  });

  test('shards that measured different things (another workload): no page, exit 1, the difference and the fix named', () => {
    const out = tempDir();
    const lines: string[] = [];
    const reporter = new SpeedMatrixReporter({ outDir: out, log: (l) => lines.push(l) });
    const cells = sglangCells();
    const other = { ...sglangInfo(), startedAt: '2026-12-01T10:00:00.000Z' };
    other.run = { ...other.run, workload: { kind: 'sharedPrefix', text: 'sharedPrefix:groups=4,prefix=3072,suffix=1024,seed=1' } };
    const exitCode = process.exitCode;
    const metas = [
      ...cells.slice(0, 20).map((cell) => ({ kind: 'cell' as const, cell, info: sglangInfo() })),
      ...cells.slice(20).map((cell) => ({ kind: 'cell' as const, cell, info: other })),
    ];
    try {
      // --merge-reports replays every test case first: the live page must not mix them either
      for (const m of metas) reporter.onTestCaseResult({ meta: () => ({ speedMatrix: m }) } as unknown as TestCase);
      // the first shard's cells alone made a live page; the other run's never joined it
      const live = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
      expect(live.cells).toHaveLength(20);
      expect(live.partial).toBe(true);
      rmSync(join(out, 'speed-matrix.json'));
      reporter.onTestRunEnd(fakeModules(metas));
      expect(process.exitCode).toBe(1);
    } finally {
      process.exitCode = exitCode;
    }
    expect(existsSync(join(out, 'speed-matrix.json'))).toBe(false);
    const text = lines.join('\n');
    expect(text).toMatch(/measured different things, so no page is written/);
    expect(text).toMatch(/workload: the run started .* synthetic, the run started 2026-12-01T10:00:00.000Z sharedPrefix:groups=4/);
    expect(text).toMatch(/Merge only the blobs of one run/);
    expect(text).toMatch(/written as results came in holds only the 20 results before the first of another run, and stays marked partial\./);
    // the same run's shards (the same info) still make one page
    const again = tempDir();
    new SpeedMatrixReporter({ outDir: again, log: () => {} }).onTestRunEnd(fakeModules(cells.map((cell) => ({ kind: 'cell' as const, cell, info: sglangInfo() }))));
    expect(JSON.parse(readFileSync(join(again, 'speed-matrix.json'), 'utf8')).cells).toHaveLength(40);
  });

  test('no speed-matrix meta: writes nothing', () => {
    const out = tempDir();
    new SpeedMatrixReporter({ outDir: join(out, 'r'), log: () => {} }).onTestRunEnd(fakeModules([undefined]));
    expect(existsSync(join(out, 'r'))).toBe(false);
  });
});
