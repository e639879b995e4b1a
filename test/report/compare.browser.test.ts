/**
 * The comparison page (`llm-speed-matrix report a.json b.json c.json --label … --out compare.html`)
 * in a real headless Chromium: one tiny simulator run, and two result files made from it as the
 * page reads them (the page is a pure function of its files, so measuring three runs for it spent
 * about 25 s on windows that decide nothing here): a rerun 3 % slower, and a seeded slowdown as a
 * step time of 12 ms instead of 10 would give (−17 % tok/s, +20 % on TTFT and time between
 * tokens). Checked: no console error, page error or request;
 * one series per run × context in each chart, the slow run's among them; the slow run's total
 * tok/s ratios against the first run below 1; a result of another schema version is refused with
 * a message naming the file and the version.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { shortStatusWords } from '../../src/pages/view.js';
import { root, runVitest } from '../compare/run-vitest.js';
import { launchBrowser, pageProblems, screenshotPaths, skipWithoutBrowser, tempDir, type ReportBrowser } from './browser.js';

const skip = skipWithoutBrowser('HTML comparison page browser tests');
const dir = tempDir('lsm-html-compare-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const matrix = {
  LLM_BENCH_SIM_PROFILE: 'tiny',
  LLM_BENCH_CONTEXTS: '0,1K',
  LLM_BENCH_CONCURRENCY: '1,4',
  LLM_BENCH_PREFILL: '1K',
  LLM_BENCH_DURATION_S: '1.5',
  LLM_BENCH_MAX_TOKENS: '64',
};
const labels = ['base', 'same', 'slow'];
/** each run's speed against the measured one: its tok/s × speed, its TTFT and time between tokens ÷ speed */
const speeds = [1, 0.97, 10 / 12];

/** `base` as a run at `speed` × its rates would read (step times ÷ speed) */
function atSpeed(base: SpeedMatrixResult, speed: number): SpeedMatrixResult {
  const r = structuredClone(base);
  const slower = (d: { median: number; p90: number; p99: number } | undefined) => {
    if (d) for (const k of ['median', 'p90', 'p99'] as const) d[k] /= speed;
  };
  for (const c of r.cells) {
    const f = c.figures;
    if (!f) continue;
    f.totalTokensPerSecond *= speed;
    if (f.perRequestTokensPerSecond !== undefined) f.perRequestTokensPerSecond *= speed;
    f.outputTokens = Math.round(f.outputTokens * speed);
    slower(f.timeBetweenTokensMs);
    slower(f.ttftMs);
  }
  for (const p of r.prefill) {
    if (!p.figures) continue;
    p.figures.promptTokensPerSecond *= speed;
    p.figures.ttftMs /= speed;
  }
  return r;
}

function cli(args: string[]): { code: number | null; out: string } {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'llm-speed-matrix.mjs'), 'report', ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}

describe.skipIf(skip)('comparison HTML page in Chromium', () => {
  let browser: ReportBrowser;
  const files: string[] = [];
  const results: SpeedMatrixResult[] = [];

  beforeAll(async () => {
    const out = join(dir, 'base');
    const run = runVitest(['bench', '--run'], { ...matrix, LLM_BENCH_OUT: out });
    expect(run.code, run.out).toBe(0);
    const measured = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8')) as SpeedMatrixResult;
    labels.forEach((label, i) => {
      const result = i === 0 ? measured : atSpeed(measured, speeds[i]!);
      // the slowed run queued at its largest cell (as a real slowdown may; Valid there if the
      // measured run had it queued): a cell whose runs read different statuses names them under its key
      if (label === 'slow') {
        const last = result.cells.filter((c) => !c.adaptive && c.figures).at(-1)!;
        const status = last.status === 'requests-queued' ? 'valid' : 'requests-queued';
        Object.assign(last, { status, statuses: [status] });
      }
      const file = join(dir, `${label}.json`);
      writeFileSync(file, JSON.stringify(result));
      files.push(file);
      results.push(result);
    });
    browser = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
  });

  test('three runs, one slowed down: one series per run × context, the slow one below 1×', { timeout: 60_000 }, async () => {
    const html = join(dir, 'compare.html');
    const made = cli([...files, ...labels.flatMap((l) => ['--label', l]), '--out', html]);
    expect(made.code, made.out).toBe(0);
    const p = await browser.open(html);
    try {
      expect(pageProblems(p)).toEqual([]);
      expect(await p.count('script')).toBe(0);
      const csp = await p.page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
      expect(csp).toMatch(/default-src 'none'/);

      // each run named by its label
      const text = await p.page.locator('body').innerText();
      for (const l of labels) expect(text).toContain(l);

      // the charts, one series per run × context (a run's series carry data-run)
      const contexts = results[0]!.info.run.contexts.length;
      for (const name of ['total', 'perRequest', 'pareto', 'ttft']) {
        const chart = `figure.chart[data-chart="${name}"]`;
        expect(await p.count(chart), `chart ${name}`).toBe(1);
        const runs = await p.page.locator(`${chart} g.series[data-run]`).evaluateAll((els) => els.map((e) => e.getAttribute('data-run')));
        expect(runs, `series of ${name}`).toHaveLength(labels.length * contexts);
        const perRun = new Map<string, number>();
        for (const r of runs) perRun.set(r!, (perRun.get(r!) ?? 0) + 1);
        expect([...perRun.values()], `series per run in ${name}`).toEqual(labels.map(() => contexts));
        // the slow run's curves have their points
        expect([...perRun.keys()], `data-run values in ${name}`).toEqual(['0', '1', '2']);
        expect(await p.count(`${chart} g.series[data-run="2"] .mark`), `slow run's marks in ${name}`).toBe(
          results[2]!.cells.filter((c) => !c.adaptive && c.figures).length,
        );
      }

      // ratios against the first run, one column per later run and figure, headed "<label>: total tok/s"
      const ratios = await p.page.locator('table:has(.ratio)').evaluate((t) => ({
        head: [...t.querySelectorAll('thead th')].map((th) => (th.textContent ?? '').trim()),
        rows: [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((td) => (td.textContent ?? '').trim())),
        // the cell key, without the runs' statuses a cell shows under it when they differ
        keys: [...t.querySelectorAll('tbody tr')].map((tr) => (tr.children[0]?.firstChild?.textContent ?? '').trim()),
        notes: [...t.querySelectorAll('tbody tr')].map((tr) => (tr.querySelector('small[data-statuses]')?.textContent ?? '').trim()),
      }));
      const column = (header: string): number[] => {
        const i = ratios.head.indexOf(header);
        expect(i, `ratio column "${header}" in ${ratios.head.join(' | ')}`).toBeGreaterThan(0);
        return ratios.rows.map((r) => {
          expect(r[i], `ratio text in column "${header}"`).toMatch(/^\d+\.\d\d×$/);
          return Number(r[i]!.replace('×', ''));
        });
      };
      const cells = results[0]!.cells.filter((c) => !c.adaptive && c.figures).length;
      expect(ratios.rows).toHaveLength(cells);
      expect(ratios.keys).toEqual(results[0]!.cells.filter((c) => !c.adaptive && c.figures).map((c) => `${c.contextLabel}/${c.concurrency}`));
      // a cell whose runs read different statuses (the slowed run may queue) names them; the others do not
      const statusOf = (run: number, key: string) => {
        const cell = results[run]!.cells.find((c) => !c.adaptive && `${c.contextLabel}/${c.concurrency}` === key);
        return cell === undefined ? 'Not run' : shortStatusWords(cell);
      };
      let named = 0;
      ratios.keys.forEach((key, i) => {
        const differ = [1, 2].some((run) => statusOf(run, key) !== statusOf(0, key));
        if (differ) named++;
        if (differ) expect(ratios.notes[i], `statuses under ${key}`).toMatch(/^base: .* · same: .* · slow: .*$/);
        else expect(ratios.notes[i], `no statuses under ${key}`).toBe('');
      });
      // the slowed run's queued cell, at least, differs (the measured run's may too, on a loaded machine)
      expect(named).toBeGreaterThan(0);
      const slow = column('slow: total tok/s');
      for (const r of slow) expect(r, `slow total tok/s ratios ${slow.join(', ')}`).toBeLessThan(1);
      const same = column('same: total tok/s');
      console.log(`compare page: total tok/s ratios to base — same ${same.join(', ')}; slow ${slow.join(', ')}`);
      for (const r of same) expect(r, `rerun total tok/s ratios ${same.join(', ')}`).toBeGreaterThan(0.8);
      // the slow run is marked worse where it is more than 5 % slower
      expect(await p.count('.ratio.worse')).toBeGreaterThan(0);
      await p.screenshot(screenshotPaths('compare.png'));
      console.log(`screenshot: ${screenshotPaths('compare.png').join(', ')}`);
    } finally {
      await p.close();
    }
  });

  test('a result of another schema version is refused, naming the file and the version', () => {
    const other = join(dir, 'v3.json');
    writeFileSync(other, JSON.stringify({ ...results[0], schemaVersion: 3 }));
    const r = cli([files[0]!, other, '--out', join(dir, 'bad.html')]);
    expect(r.code).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.out).toContain(other);
    expect(r.out).toMatch(/schemaVersion 3\b/);
  });
});
