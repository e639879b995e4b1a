/**
 * The single-run HTML report (speed-matrix.html, written by the reporter beside the .md and .json)
 * in a real headless Chromium: a tiny matrix against the embedded simulator, with an Over capacity
 * cell (16K × 4 needs 4 × (16,384 + 64) KV tokens, the tiny profile has 65,536) and a prefill row.
 *
 * Checked: no console error, no page error, not one request besides the page itself; every chart
 * with as many marks as the JSON has figures for it; the heat map's cells open their detail view
 * (CSS :target) with the cell's metrics and TBT charts; hostile text in the result is shown
 * literally and never runs. Screenshots go to a temp folder (and LLM_BENCH_SCREENSHOTS when set).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CellResult, SpeedMatrixResult } from '../../src/shapes/result.js';
import { runVitest } from '../compare/run-vitest.js';
import { launchBrowser, pageProblems, screenshotPaths, skipWithoutBrowser, tempDir, type ReportBrowser } from './browser.js';

const skip = skipWithoutBrowser('HTML report browser tests');
const dir = tempDir('lsm-html-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** finite and, for a log axis, positive */
const plottable = (v: number | undefined, log = false): boolean => v !== undefined && Number.isFinite(v) && (!log || v > 0);
const measured = (r: SpeedMatrixResult): CellResult[] => r.cells.filter((c) => !c.adaptive);
const key = (c: { contextLabel: string; concurrency: number }) => `${c.contextLabel}/${c.concurrency}`;
const anchor = (k: string) => `cell-${k.replace('/', '-')}`;

/** The marks each chart of the single-run page must have, computed from the JSON. */
function expectedMarks(r: SpeedMatrixResult): Record<string, number> {
  const cells = measured(r);
  const grid = new Set([...(r.info.plannedCells ?? []), ...cells.map(key)]);
  const rows = r.prefill.filter((p) => p.figures);
  return {
    total: cells.filter((c) => plottable(c.figures?.totalTokensPerSecond)).length,
    perRequest: cells.filter((c) => plottable(c.figures?.perRequestTokensPerSecond)).length,
    pareto: cells.filter((c) => plottable(c.figures?.perRequestTokensPerSecond) && plottable(c.figures?.totalTokensPerSecond)).length,
    ttft: cells.filter((c) => plottable(c.figures?.ttftMs?.median, true)).length,
    prefillTps: rows.filter((p) => plottable(p.figures?.promptTokensPerSecond)).length,
    prefillTtft: rows.filter((p) => plottable(p.figures?.ttftMs, true)).length,
    heatmap: grid.size,
  };
}

describe.skipIf(skip)('single-run HTML report in Chromium', () => {
  let browser: ReportBrowser;
  let result: SpeedMatrixResult;
  let html: string;
  const out = join(dir, 'run');

  beforeAll(async () => {
    const run = runVitest(['bench', '--run'], {
      LLM_BENCH_SIM_PROFILE: 'tiny',
      LLM_BENCH_CONTEXTS: '0,16K',
      LLM_BENCH_CONCURRENCY: '1,4',
      LLM_BENCH_PREFILL: '1K',
      LLM_BENCH_DURATION_S: '1.5',
      LLM_BENCH_MAX_TOKENS: '64',
      LLM_BENCH_OUT: out,
    });
    expect(run.code, run.out).toBe(0);
    result = JSON.parse(readFileSync(join(out, 'speed-matrix.json'), 'utf8'));
    html = join(out, 'speed-matrix.html');
    browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
  });

  test('the run has what the page must draw: an Over capacity cell, cells with series, a prefill row', () => {
    expect(result.cells.find((c) => key(c) === '16K/4')?.status).toBe('over-capacity');
    expect(measured(result).filter((c) => c.series?.metrics && c.series.requestTbtMs.length > 0).length).toBeGreaterThan(0);
    expect(result.prefill.filter((p) => p.figures)).toHaveLength(1);
  });

  test('opens cleanly, every chart with one mark per figure; the cell detail opens on click', { timeout: 60_000 }, async () => {
    const p = await browser.open(html);
    try {
      expect(pageProblems(p)).toEqual([]);

      // offline and script-free by policy
      const csp = await p.page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
      expect(csp, 'the page has a Content-Security-Policy meta').toBeTruthy();
      expect(csp).toMatch(/default-src 'none'/);
      expect(csp).not.toMatch(/script-src(?![^;]*'none')/);
      expect(await p.count('script')).toBe(0);

      // the sections at the top, as on the Markdown page
      for (const name of ['Hardware', 'Engine', 'Run']) {
        expect(await p.page.getByRole('heading', { name, exact: true }).count(), `heading ${name}`).toBeGreaterThanOrEqual(1);
      }

      // every chart, with one mark per figure the JSON has
      const expected = expectedMarks(result);
      const counts: Record<string, number> = {};
      for (const name of Object.keys(expected)) {
        expect(await p.count(`figure.chart[data-chart="${name}"]`), `chart ${name}`).toBe(1);
        expect(await p.count(`figure.chart[data-chart="${name}"] svg`), `chart ${name} svg`).toBeGreaterThanOrEqual(1);
        counts[name] = await p.count(`figure.chart[data-chart="${name}"] svg .mark`);
      }
      expect(counts).toEqual(expected);
      // the Over capacity cell: a heat-map cell, no point
      expect(expected.heatmap).toBeGreaterThan(expected.total!);
      expect(expected.total).toBeGreaterThan(0);
      expect(await p.count('figure.chart[data-chart="heatmap"] rect.mark')).toBe(expected.heatmap);
      expect(await p.count('figure.chart[data-chart="ttft"] circle.mark')).toBe(expected.ttft);
      // Pareto: each point labelled with its concurrency
      const labels = await p.page.locator('figure.chart[data-chart="pareto"] text.point-label').allTextContents();
      const concurrencies = measured(result)
        .filter((c) => c.figures?.perRequestTokensPerSecond !== undefined)
        .map((c) => String(c.concurrency));
      expect(labels.map((t) => t.trim()).sort()).toEqual(concurrencies.sort());

      // each measured cell is a link to its detail view, hidden until targeted
      const withFigures = measured(result).filter((c) => c.figures);
      for (const c of withFigures) {
        const link = p.page.locator(`figure.chart[data-chart="heatmap"] a[data-cell="${key(c)}"]`);
        expect(await link.count(), `heat-map link of ${key(c)}`).toBe(1);
        expect(await link.getAttribute('href')).toBe(`#${anchor(key(c))}`);
        expect(await p.count(`section.cell-detail[id="${anchor(key(c))}"]`), `detail of ${key(c)}`).toBe(1);
      }
      const target = withFigures.find((c) => c.series?.metrics && c.series.requestTbtMs.length > 0 && c.concurrency > 1) ?? withFigures[0]!;
      const detail = p.page.locator(`section.cell-detail[id="${anchor(key(target))}"]`);
      await p.screenshot(screenshotPaths('speed-matrix.png'));
      expect(await detail.isVisible(), 'detail hidden before its cell is clicked').toBe(false);
      await p.page.locator(`figure.chart[data-chart="heatmap"] a[data-cell="${key(target)}"]`).click();
      await expect.poll(() => detail.isVisible(), { timeout: 5_000 }).toBe(true);
      expect(new URL(p.page.url()).hash).toBe(`#${anchor(key(target))}`);
      // the cell's figures, and its charts with marks
      const text = await detail.innerText();
      expect(text).toContain(target.contextLabel);
      expect(await detail.locator('figure.chart[data-chart="metrics"] svg .mark').count(), 'metrics chart marks').toBeGreaterThan(0);
      expect(await detail.locator('figure.chart[data-chart="tbt"] svg .mark').count(), 'tbt histogram bars').toBeGreaterThan(0);
      // only one detail shown at a time
      expect(await p.page.locator('section.cell-detail:visible').count()).toBe(1);
      await p.screenshot(screenshotPaths('speed-matrix-cell.png'), `section.cell-detail[id="${anchor(key(target))}"]`);
      console.log(`screenshots: ${[...screenshotPaths('speed-matrix.png'), ...screenshotPaths('speed-matrix-cell.png')].join(', ')}`);
      expect(pageProblems(p), 'nothing after the click either').toEqual([]);
    } finally {
      await p.close();
    }
  });

  test('hostile text in the result is shown literally and never runs', { timeout: 60_000 }, async () => {
    const { renderHtml } = await import('../../src/pages/html.js');
    const script = '<script>window.__x=1</script>';
    const img = '<img src=x onerror="window.__y=1">';
    const md = '**bold** _em_ [link](http://127.0.0.1:9/)';
    const evil = `${script} ${img} ${md}`;
    const r: SpeedMatrixResult = structuredClone(result);
    r.info.title = `title ${evil}`;
    r.info.server.model.value = `model ${evil}`;
    r.info.run.servedModel = `served ${evil}`;
    r.info.launchCommand = `vllm serve ${evil} --api-key <redacted>`;
    r.info.server.launchArgs = { value: { 'served-model-name': `arg ${evil}`, [`key ${script}`]: 1 }, source: 'test' };
    r.info.hardware.gpu = `gpu ${img}`;
    r.info.engine.version = `version ${md}`;
    const file = join(dir, 'xss.html');
    writeFileSync(file, renderHtml(r));

    // with the page's CSP, and without it (the escaping alone must hold)
    for (const bypassCSP of [false, true]) {
      const p = await browser.open(file, { bypassCSP });
      try {
        const g = await p.page.evaluate(() => ({ x: (globalThis as Record<string, unknown>).__x, y: (globalThis as Record<string, unknown>).__y }));
        expect(g, `bypassCSP=${bypassCSP}`).toEqual({ x: undefined, y: undefined });
        expect(await p.count('script')).toBe(0);
        expect(await p.count('img')).toBe(0);
        expect(await p.count('a[href*="127.0.0.1"]')).toBe(0);
        expect(pageProblems(p), `bypassCSP=${bypassCSP}`).toEqual([]);
        const text = await p.page.locator('body').innerText();
        for (const literal of [script, img, '**bold**', '_em_', '[link](http://127.0.0.1:9/)']) expect(text).toContain(literal);
        expect(await p.page.locator('strong, b, em, i').filter({ hasText: /^bold$|^em$/ }).count()).toBe(0);
        if (!bypassCSP) await p.screenshot(screenshotPaths('speed-matrix-escaped.png'));
      } finally {
        await p.close();
      }
    }
  });
});
