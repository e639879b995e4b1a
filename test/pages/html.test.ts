/**
 * The HTML report without a browser (test/report/*.browser.test.ts open it in Chromium): what the
 * pure renderers put in the page, the per-cell series they draw, the Mermaid chart of the Markdown
 * page, and the `report` command's errors.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import type { RequestTimeline } from '../../src/shapes/timeline.js';
import { computeCellFigures } from '../../src/metrics/figures.js';
import { cellSeries } from '../../src/metrics/series.js';
import { distinctLabels, runReportCli } from '../../src/report/cli.js';
import { renderCompareHtml } from '../../src/pages/compare-html.js';
import { renderHtml } from '../../src/pages/html.js';
import { escapeHtml } from '../../src/text/escape.js';
import { histogram, lineChart } from '../../src/pages/svg.js';
import { mermaidChart, renderMarkdown } from '../../src/pages/markdown.js';
import { validateResult } from '../../src/results/validate.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

const dir = mkdtempSync(join(tmpdir(), 'lsm-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function steady(id: string, fromMs: number, everyMs: number, n: number): RequestTimeline {
  return {
    id,
    sendMs: fromMs - 50,
    firstTokenMs: fromMs,
    chunkMs: Array.from({ length: n }, (_, i) => fromMs + i * everyMs),
    chunkTokens: Array.from({ length: n }, () => 1),
    tokenSource: 'chunks',
    reasoningTokens: 0,
  };
}

describe('cellSeries', () => {
  const timelines = [steady('a', 1000, 10, 101), steady('b', 1000, 20, 51)];
  const samples = [
    { atMs: 900, running: 9 },
    { atMs: 1000, running: 2, waiting: 0, kvUsage: 0.123456 },
    { atMs: 1500, running: 2, waiting: 1 },
    { atMs: 2000, running: 1, waiting: 0, kvUsage: 0.2 },
    { atMs: 2100, running: 0 },
  ];
  const series = cellSeries({ timelines, samples, windowStartMs: 1000, windowEndMs: 2000 });

  test("each request's mean TBT in the window: the values the cell's TBT figures are quantiles of", () => {
    expect(series.requestTbtMs).toEqual([10, 20]);
    const f = computeCellFigures({ timelines, windowStartMs: 1000, windowEndMs: 2000, metricsSamples: [] });
    expect(f.timeBetweenTokensMs?.samples).toBe(series.requestTbtMs.length);
    expect(f.timeBetweenTokensMs?.median).toBeCloseTo(15, 6);
  });

  test('metric samples inside the window only, in seconds since it opened; missing values are null', () => {
    expect(series.metrics).toEqual({ atS: [0, 0.5, 1], running: [2, 2, 1], waiting: [0, 1, 0], kvUsage: [0.123, null, 0.2] });
  });

  test('a metric the server never reports is left out; no samples, no metrics', () => {
    const onlyRunning = cellSeries({ timelines, samples: [{ atMs: 1200, running: 3 }], windowStartMs: 1000, windowEndMs: 2000 });
    expect(onlyRunning.metrics).toEqual({ atS: [0.2], running: [3] });
    expect(cellSeries({ timelines, samples: [], windowStartMs: 1000, windowEndMs: 2000 }).metrics).toBeUndefined();
  });
});

describe('svg', () => {
  test('escapeHtml covers text and attribute contexts', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });

  test('a log axis drops points at or below 0 (a gap, not a wrong point); every drawn point is a mark', () => {
    const svg = lineChart({
      name: 't',
      title: 'T',
      description: 'd',
      x: { title: 'x' },
      y: { title: 'y', log: true },
      series: [{ name: 's', color: '#000', points: [{ x: 1, y: 10 }, { x: 2, y: 0 }, { x: 3, y: 100 }, { x: 4, y: undefined }] }],
    });
    expect(svg.match(/class="mark"/g)).toHaveLength(2);
    // the line breaks at the gap: two separate moves
    const line = /<g class="series"><title>s<\/title><path d="([^"]*)"/.exec(svg)![1]!;
    expect(line.match(/M/g)).toHaveLength(2);
    expect(svg).toContain('data-chart="t"');
    expect(svg).toContain('<title id="chart-t-t">T</title>');
  });

  test('histogram: one rect per non-empty bin, counts adding up to the values', () => {
    const values = [10, 10.02, 10.05, 11, 12, 12, 12, 30];
    const svg = histogram({ name: 'h', title: 'H', description: 'd', x: { title: 'ms' }, y: { title: 'n' }, values, color: '#000' });
    const counts = [...svg.matchAll(/<title>[^<]*: (\d+)<\/title><\/rect>/g)].map((m) => Number(m[1]));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(values.length);
    expect(svg.match(/class="mark"/g)!.length).toBe(counts.length);
  });
});

describe('renderHtml', () => {
  const result = sglangResult();
  const html = renderHtml(result);

  test('one file: a policy that forbids scripts and requests, and no script, stylesheet link or external URL', () => {
    expect(html).toMatch(/^<!doctype html>\n/);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'`);
    expect(html).not.toMatch(/<script|<link |src="http|href="http/i);
  });

  test("every chart of a run, and a detail view per result cell linked from the heat map", () => {
    for (const name of ['heatmap', 'total', 'perRequest', 'pareto', 'ttft', 'prefillTps', 'prefillTtft']) expect(html).toContain(`data-chart="${name}"`);
    const details = html.match(/<section class="cell-detail" id="cell-[^"]+"/g) ?? [];
    expect(details).toHaveLength(result.cells.length);
    for (const c of result.cells) expect(html).toContain(`href="#cell-${c.contextLabel}-${c.concurrency}"`);
  });

  test('a Client-limited cell is a hollow point on every decode chart, named in its tooltip, and the charts say what hollow means', () => {
    expect(html).not.toContain('data-hollow');
    expect(html).not.toContain('Hollow points');
    const r = sglangResult();
    const cell = r.cells.find((c) => c.figures && c.status === 'valid')!;
    cell.status = 'client-limited';
    cell.statuses = ['client-limited'];
    const page = renderHtml(r);
    const key = `${cell.contextLabel}/${cell.concurrency}`;
    for (const name of ['total', 'perRequest', 'pareto', 'ttft']) {
      const chart = page.slice(page.indexOf(`data-chart="${name}"`));
      const svg = chart.slice(0, chart.indexOf('</svg>'));
      const hollow = [...svg.matchAll(/<circle class="mark"[^>]*data-hollow="true"><title>([^<]*)<\/title>/g)].map((m) => m[1]);
      expect(hollow, name).toEqual([expect.stringMatching(new RegExp(`^${key}: .* \\(Client-limited\\)$`))]);
      expect(svg.match(/<circle class="mark"/g)!.length, name).toBeGreaterThan(1);
    }
    // each of the four charts says it, in its <desc> and its caption
    expect(page.match(/<figcaption>[^<]*Hollow points: Client-limited cells, whose timings are partly the client&#39;s\.[^<]*<\/figcaption>/g)).toHaveLength(4);
  });

  test('the run sections as on the Markdown page', () => {
    for (const h of ['<h3>Hardware</h3>', '<h3>Engine</h3>', '<h3>Run</h3>']) expect(html).toContain(h);
    expect(html).toContain(escapeHtml(result.info.title));
  });

  test("a cell's stream endings show in its detail view, as a line and in the evidence", () => {
    const r = sglangResult();
    const cell = r.cells[1]!;
    cell.evidence.streamEndings = { done: 25, closeAfterFinish: 12, unterminatedLast: 3 };
    const page = renderHtml(r);
    const detail = page.slice(page.indexOf(`id="cell-${cell.contextLabel}-${cell.concurrency}"`));
    const section = detail.slice(0, detail.indexOf('</section>'));
    expect(section).toContain('<p class="note">Stream endings: 12 closed after finish_reason without <code>[DONE]</code>, 3 unterminated last event (of 40 completed); read as completed requests.</p>');
    expect(section).toContain('&quot;streamEndings&quot;');
    expect(html).not.toContain('Stream endings');
  });

  test('user text is escaped wherever it lands', () => {
    const evil = sglangResult();
    evil.info.title = '<script>alert(1)</script>';
    evil.info.engine.version = '<img src=x onerror=alert(2)>';
    evil.info.launchCommand = 'serve "<b>x</b>"';
    const page = renderHtml(evil);
    expect(page).not.toContain('<script>');
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('&lt;img src=x onerror=alert(2)&gt;');
  });
});

describe('renderCompareHtml', () => {
  test('one series per run and context; ratios to the first run', () => {
    const a = sglangResult();
    const b = sglangResult();
    for (const c of b.cells) if (c.figures) c.figures.totalTokensPerSecond *= 0.5;
    const html = renderCompareHtml([
      { label: 'a', result: a },
      { label: 'b', result: b },
    ]);
    const contexts = new Set(a.cells.filter((c) => c.figures).map((c) => c.context)).size;
    const totalChart = html.slice(html.indexOf('data-chart="total"'), html.indexOf('data-chart="perRequest"'));
    expect(totalChart.match(/<g class="series" data-run="1"/g)).toHaveLength(contexts);
    const ratios = [...html.matchAll(/data-run="1" data-figure="totalTokensPerSecond" data-ratio="([\d.]+)"/g)].map((m) => Number(m[1]));
    expect(ratios.length).toBe(a.cells.filter((c) => c.figures).length);
    for (const r of ratios) expect(r).toBeCloseTo(0.5, 3);
    // the same statuses in both: no cell names them
    expect(html).not.toContain('data-statuses');
  });

  test("a cell whose status differs between the runs names each run's status beside its ratios", () => {
    const a = sglangResult();
    const b = sglangResult();
    const broken = a.cells.find((c) => c.context === 8 * 1024 && c.concurrency === 2)!;
    broken.status = 'errors';
    broken.statuses = ['errors'];
    broken.evidence = { ...broken.evidence, errors: { count: 32, byCode: { socket: 32 } } };
    const html = renderCompareHtml([
      { label: 'before', result: a },
      { label: 'after', result: b },
    ]);
    expect(html).toContain('<td class="text">8K/2<br><small data-statuses>before: Errors (32) · after: Valid</small></td>');
    expect(html.match(/data-statuses/g)).toHaveLength(1);
  });
});

describe('mermaidChart', () => {
  test('one line per context with its measured columns up to the first gap, the lines named in order', () => {
    const result = sglangResult();
    const lines = mermaidChart(result);
    const block = lines.join('\n');
    expect(block).toContain('```mermaid\nxychart-beta');
    const levels = [...new Set(result.info.run.concurrency)].sort((x, y) => x - y);
    expect(block).toContain(`x-axis "Requests at once" [${levels.join(', ')}]`);
    const drawn = lines.filter((l) => l.startsWith('    line ['));
    // each line: the context's total tok/s, column by column, until its first cell without figures
    const contexts = [...new Set(result.cells.map((c) => c.context))].sort((x, y) => x - y);
    const expected = contexts
      .map((context) => {
        const values: number[] = [];
        for (const c of levels) {
          const v = result.cells.find((x) => x.context === context && x.concurrency === c)?.figures?.totalTokensPerSecond;
          if (v === undefined) break;
          values.push(Math.round(v * 10) / 10);
        }
        return values;
      })
      .filter((v) => v.length > 0);
    expect(drawn).toEqual(expected.map((v) => `    line [${v.join(', ')}]`));
    expect(renderMarkdown(result)).toContain(block);
  });

  test('Mermaid draws every point alike, so the caption names the Client-limited ones drawn; none, nothing said', () => {
    const result = sglangResult();
    expect(mermaidChart(result)[0]).not.toContain('Client-limited');
    const cell = result.cells.find((c) => c.figures && c.concurrency === 1)!;
    cell.status = 'client-limited';
    cell.statuses = ['client-limited'];
    expect(mermaidChart(result)[0]).toMatch(new RegExp(` Drawn but Client-limited \\(timings partly the client's\\): ${cell.contextLabel}/1\\.$`));
  });

  test('nothing measured: no chart', () => {
    const result = sglangResult();
    result.cells = [];
    expect(mermaidChart(result)).toEqual([]);
  });
});

describe('llm-speed-matrix report', () => {
  const io = () => {
    const lines: string[] = [];
    return { lines, io: { out: (t: string) => lines.push(t), err: (t: string) => lines.push(t) } };
  };
  const file = (name: string, json: unknown) => {
    const p = join(dir, name);
    writeFileSync(p, JSON.stringify(json));
    return p;
  };

  test('one file: its report; several: the comparison, named by --label', async () => {
    const a = file('a.json', sglangResult());
    const b = file('b.json', sglangResult());
    expect(validateResult(JSON.parse(readFileSync(a, 'utf8'))).ok).toBe(true);
    const one = io();
    expect(await runReportCli([a, '--out', join(dir, 'one.html')], one.io)).toBe(0);
    expect(readFileSync(join(dir, 'one.html'), 'utf8')).toContain('<h1>Speed test matrix</h1>');
    const two = io();
    expect(await runReportCli([a, b, '--label', 'fp8', '--label', 'bf16', '--out', join(dir, 'two.html')], two.io)).toBe(0);
    expect(two.lines.join('\n')).toContain('2 runs: fp8, bf16');
    expect(readFileSync(join(dir, 'two.html'), 'utf8')).toContain('Speed matrix comparison');
  });

  test('runs of different matrices: overlaid, with a warning on stderr and a note on the page naming each difference (compare refuses them); the same matrix has none', async () => {
    const other = sglangResult();
    other.info.run.contexts = [0];
    other.info.run.maxOutputTokens = 64;
    other.cells = other.cells.filter((c) => c.context === 0);
    const a = file('m-a.json', sglangResult());
    const b = file('m-b.json', other);
    const r = io();
    expect(await runReportCli([a, b, '--label', 'h200', '--label', 'laptop', '--out', join(dir, 'mixed.html')], r.io)).toBe(0);
    const said = r.lines.join('\n');
    expect(said).toContain('warning: these runs measured different things (the page says so too):');
    expect(said).toContain('contexts: h200 8K, 16K, 32K, 64K, 123K, laptop 0');
    expect(said).toContain('maxOutputTokens: h200 4096, laptop 64');
    expect(said).toContain('no measured cell is in two of the runs: the ratio table is empty');
    const page = readFileSync(join(dir, 'mixed.html'), 'utf8');
    expect(page).toContain('<p class="note">These runs measured different things, so a cell compares only with the same cell of another run: contexts: h200 8K');
    const same = io();
    expect(await runReportCli([a, file('m-c.json', sglangResult()), '--label', 'x', '--label', 'y', '--out', join(dir, 'same-matrix.html')], same.io)).toBe(0);
    expect(same.lines.join('\n')).not.toContain('warning');
    expect(readFileSync(join(dir, 'same-matrix.html'), 'utf8')).not.toContain('measured different things');
  });

  test('runs with the same name (started in the same minute) are named by their files; --label still wins', async () => {
    const a = file('same-a.json', sglangResult());
    const b = file('same-b.json', sglangResult());
    const r = io();
    expect(await runReportCli([a, b, '--out', join(dir, 'same.html')], r.io)).toBe(0);
    expect(r.lines.join('\n')).toContain('2 runs: same-a.json, same-b.json');
    expect(distinctLabels(['x/run/speed-matrix.json', 'y/run/speed-matrix.json'], [], ['sglang', 'sglang'])).toEqual(['x/run/speed-matrix.json', 'y/run/speed-matrix.json']);
    expect(distinctLabels(['a.json', 'b.json'], ['fp8'], ['sglang', 'sglang'])).toEqual(['fp8', 'sglang']);
    expect(() => distinctLabels(['a.json', 'b.json'], ['x', 'x'], ['s', 't'])).toThrow(/--label "x" is given twice/);
  });

  test('bad input: a clear error naming the file, the version or the fix; exit 2', async () => {
    const a = file('a2.json', sglangResult());
    const v3 = file('v3.json', { ...sglangResult(), schemaVersion: 3 });
    const cases: Array<[string[], RegExp]> = [
      [[], /give at least one speed-matrix.json/],
      [[v3], /v3\.json has schemaVersion 3/],
      [[join(dir, 'missing.json')], /missing\.json \(no such file\)/],
      [[a, a], /two runs are named .*--label/],
      [[a, '--label', 'x', '--label', 'y'], /2 labels for 1 files/],
      [[a, '--colour'], /unknown option "--colour"/],
    ];
    for (const [argv, message] of cases) {
      const r = io();
      expect(await runReportCli(argv, r.io), argv.join(' ')).toBe(2);
      expect(r.lines.join('\n')).toMatch(message);
    }
  });
});
