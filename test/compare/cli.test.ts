import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runCompareCli } from '../../src/compare/cli.js';
import { main } from '../../src/cli.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';
import { rateResult } from '../results/fixtures/rate-cells.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-compare-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

async function run(args: string[], env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCompareCli(args, { out: (t) => out.push(t), err: (t) => err.push(t), env });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const base = file('base.json', sglangResult());
const slower = (() => {
  const r = sglangResult();
  const cell = r.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 16)!;
  cell.figures!.totalTokensPerSecond = 690.1;
  return file('slower.json', r);
})();

describe('llm-speed-matrix compare', () => {
  test('identical files: exit 0 and the page says Pass', async () => {
    const r = await run([base, file('same.json', sglangResult())]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('# Speed matrix comparison');
    expect(r.out).toContain('**Pass**');
  });

  test('a regression: exit 1, --out writes the page, the verdict and the regression are printed', async () => {
    const out = join(dir, 'sub', 'diff.md');
    const r = await run([base, slower, '--out', out]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('FAIL: 1 regressed');
    expect(r.out).toContain('8K/16 totalTokensPerSecond 690.1 vs baseline 857.3: −19.5% (tolerance 5%)');
    expect(readFileSync(out, 'utf8')).toContain('## Regressions');
  });

  test('--thresholds loosens the tolerance; the step summary gets the page', async () => {
    const thresholds = file('th.json', { tolerances: { regression: { cells: { totalTokensPerSecond: 0.25 } } }, cells: {}, prefill: {} });
    const summary = join(dir, 'summary.md');
    const r = await run([base, slower, `--thresholds=${thresholds}`], { GITHUB_STEP_SUMMARY: summary });
    expect(r.code).toBe(0);
    expect(readFileSync(summary, 'utf8')).toContain('# Speed matrix comparison');
  });

  test('open-loop rate cells: a slower one fails figure by figure; one of another arrival process is a note on stderr', async () => {
    const withRates = file('rates.json', rateResult());
    const slowRate = rateResult((cells) => cells.map((c) => (c.contextLabel === '8K' && c.rate === 0.5 ? { ...c, figures: { ...c.figures!, tbtMs: { ...c.figures!.tbtMs!, median: 27.06 } } } : c)));
    const r = await run([withRates, file('rates-slow.json', slowRate), '--out', join(dir, 'rates-diff.md')]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('FAIL: 1 regressed');
    expect(r.out).toContain('8K@0.5/s tbtMs 27.1 vs baseline 18.0: +50.0% (tolerance 5% + spread 4.8%, at least 0.5 ms)');
    const constant = rateResult((cells) => cells.map((c) => (c.contextLabel === '8K' && c.rate === 0.5 ? { ...c, arrival: 'constant' } : c)));
    const other = await run([withRates, file('rates-constant.json', constant), '--out', join(dir, 'rates-diff2.md')]);
    expect(other.code).toBe(0);
    expect(other.err).toContain('note: 8K@0.5/s not compared: another schedule (arrival poisson → constant), so other requests fall in the window');
    // a schedule that differs run-wide: one note, not one per cell
    const reseeded = rateResult((cells) => cells.map((c) => ({ ...c, seed: c.seed + 1 })));
    reseeded.info.run.rates = { ...reseeded.info.run.rates!, seed: 7 };
    const seeded = await run([withRates, file('rates-seed.json', reseeded), '--out', join(dir, 'rates-diff3.md')]);
    expect(seeded.code).toBe(0);
    expect(seeded.err.split('\n').filter((l) => l.includes('not compared'))).toEqual([
      "note: the baseline's open-loop rates were scheduled otherwise (seed 1 → 7): other requests fall in each window, so its rate cells are not compared with this run's (the decode cells are)",
    ]);
    // with the same schedule, a cell's own reason is said per cell (8K@2: Client-limited by its dispatch delay in the new run)
    const late = rateResult((cells) =>
      cells.map((c) => (c.contextLabel === '8K' && c.rate === 2 ? { ...c, status: 'client-limited' as const, statuses: ['client-limited' as const], evidence: { clientLimited: { dispatchDelayP99Ms: 40, boundMs: 10, ceilingWaited: 0, unsent: 0, causes: ['dispatch-delay' as const] } } } : c)),
    );
    const lateRun = await run([withRates, file('rates-late.json', late), '--out', join(dir, 'rates-diff4.md')]);
    expect(lateRun.err).toContain("note: 8K@2/s not compared: the new run's cell is Client-limited, so their latencies from the schedule are partly the client's");
  });

  test('different schema versions: exit 2 naming both', async () => {
    const v3 = file('v3.json', { ...sglangResult(), schemaVersion: 3 });
    const r = await run([base, v3]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`the files have different schema versions: ${base} has 2, ${v3} has 3`);
  });

  test('a file that is no result at all (package.json): exit 2, said so, not a version mismatch', async () => {
    const pkg = file('package.json', { name: 'x', version: '1.0.0' });
    const r = await run([base, pkg]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`new: ${pkg} is not a speed-matrix result (no schemaVersion, info or cells); give the speed-matrix.json a run wrote`);
    expect(r.err).not.toContain('schema version');
  });

  test('a version-1 file (before rate cells) compares with a version-2 one: it is read as version 2', async () => {
    const v1 = file('v1.json', { ...sglangResult(), schemaVersion: 1 });
    const r = await run([v1, base]);
    expect(r.err).not.toContain('schema version');
    expect(r.code).toBe(0);
  });

  test('different matrices: exit 2 naming what differs', async () => {
    const other = sglangResult();
    other.info.run.concurrency = [1, 2, 4];
    other.info.run.maxOutputTokens = 256;
    const r = await run([base, file('other.json', other)]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('are runs of different matrices');
    expect(r.err).toContain('concurrency: baseline 1, 2, 4, 8, 16, 32, 64, 128, new 1, 2, 4');
    expect(r.err).toContain('maxOutputTokens: baseline 4096, new 256');
  });

  test('unreadable, non-JSON and invalid files: exit 2 with the file and the problem', async () => {
    expect((await run([join(dir, 'nope.json'), base])).err).toContain(`base: cannot read ${join(dir, 'nope.json')} (no such file)`);
    expect((await run([base, file('bad.json', '{nope')])).err).toMatch(/new: .*bad\.json is not valid JSON/);
    const invalid = { ...sglangResult(), cells: [{ context: 1 }] };
    const r = await run([base, file('invalid.json', invalid)]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('is not a valid speed-matrix result');
    expect(r.err).toContain('cells.0');
  });

  test('usage errors: exit 2', async () => {
    expect((await run([base])).code).toBe(2);
    expect((await run([base, slower, '--bogus'])).err).toContain('unknown option "--bogus"');
    expect((await run([base, slower, '--out'])).err).toContain('--out needs a file name');
    expect((await run(['--help'])).code).toBe(0);
  });

  test('wired into the llm-speed-matrix command', async () => {
    const write = process.stdout.write.bind(process.stdout);
    let printed = '';
    process.stdout.write = ((chunk: string) => {
      printed += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      expect(await main(['compare', base, slower, '--out', join(dir, 'main.md')])).toBe(1);
    } finally {
      process.stdout.write = write;
    }
    expect(printed).toContain('FAIL: 1 regressed');
  });
});
