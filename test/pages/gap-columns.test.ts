/**
 * The pages' stall note, the HTML gap chart, and the all-measurements columns LLM_BENCH_COLUMNS
 * adds (issue 59), on the reference SGLang page's numbers with one cell given a long gap.
 */
import { describe, expect, test } from 'vitest';
import { renderMarkdown } from '../../src/pages/markdown.js';
import { renderHtml } from '../../src/pages/html.js';
import { parseColumns, parsePercentiles } from '../../src/config/columns-input.js';
import { medianFigures } from '../../src/metrics/repeat-figures.js';
import { resolveSuite } from '../../src/config/resolve.js';
import { validateResult } from '../../src/results/validate.js';
import type { SpeedMatrixResult } from '../../src/shapes/result.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

function withStall(columns?: SpeedMatrixResult['info']['run']['columns']): SpeedMatrixResult {
  const r = sglangResult();
  if (columns) r.info.run.columns = columns;
  const cell = r.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 16)!;
  cell.figures = {
    ...cell.figures!,
    interTokenLatencyMs: { median: 19.6, p90: 21.2, p95: 22.8, p99: 31.4, max: 2950.5, gaps: 48_211 },
    longestGap: { requestId: 'run-c8192x16-w3-r7', atS: 12.25, ms: 2950.5, medianGaps: 150.5 },
    tpotMs: { median: 20.1, p90: 21.9, p99: 24.0, samples: 96 },
    e2eLatencyMs: { median: 82_310, p90: 84_020, p99: 85_400, samples: 96 },
    requestsPerSecond: 0.18,
  };
  cell.series = { requestTbtMs: [20, 21], gapHistogram: { edgesMs: [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000], counts: [0, 0, 0, 0, 0, 0, 0, 40_000, 8_200, 10, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0] } };
  return r;
}

describe('a cell with a long stall', () => {
  test('the Markdown page notes it under All measurements with its request, time and ITL; no note without one', () => {
    const md = renderMarkdown(withStall());
    expect(md).toContain("Stalls inside streams: these cells' longest gap between two tokens of one request is 10 or more times their median gap, and 100 ms or more.");
    expect(md).toContain('- 8K/16: longest 2,950.5 ms (151 median gaps) in request run-c8192x16-w3-r7, 12.3 s into the window; ITL 19.6 / 21.2 / 22.8 / 31.4 / 2,950.5 ms');
    expect(renderMarkdown(sglangResult())).not.toContain('Stalls inside streams');
    // METHOD's columns by default
    expect(md).not.toContain('ITL p50 / p95 / p99');
  });

  test('the HTML report draws the gaps on log axes and lists the figures in the cell view', () => {
    const html = renderHtml(withStall());
    expect(html).toContain('data-chart="gaps"');
    expect(html).toContain('id="chart-gaps-cell-8K-16"');
    // one bar per non-empty bin, the lone stall's among them
    const chart = html.slice(html.indexOf('id="chart-gaps-cell-8K-16"'));
    expect(chart.slice(0, chart.indexOf('</figure>')).match(/class="mark"/g)).toHaveLength(4);
    expect(chart).toContain('<title>2,000–5,000 ms: 1</title>');
    expect(html).toContain('2,950.5 ms (151 median gaps) in request run-c8192x16-w3-r7');
    expect(html).toContain('TPOT median / p90 / p99');
  });

  test('LLM_BENCH_COLUMNS adds its columns after METHOD\'s, in its order, on both pages; the result still validates', () => {
    const r = withStall(parseColumns('tpot,itl,requestsPerSecond'));
    expect(validateResult(JSON.parse(JSON.stringify(r))).ok).toBe(true);
    const md = renderMarkdown(r);
    const header = md.split('\n').find((l) => l.startsWith('| Phase |'))!;
    expect(header.endsWith('| Client active | TPOT p50 / p90 / p99 | ITL p50 / p95 / p99 | Completed req/s |')).toBe(true);
    const row = md.split('\n').find((l) => l.startsWith('| Sustained decode | 8K | 16 |'))!;
    expect(row.endsWith('| 20.1 / 21.9 / 24.0 ms | 19.6 / 22.8 / 31.4 ms | 0.18 |')).toBe(true);
    // a cell without the figures (an older result) shows a dash, a prefill row too
    expect(md.split('\n').find((l) => l.startsWith('| Sustained decode | 8K | 1 |'))!.endsWith('| — | — | — |')).toBe(true);
    expect(md.split('\n').find((l) => l.startsWith('| Prefill | 8K |'))!.endsWith('| — | — | — |')).toBe(true);
    const html = renderHtml(r);
    expect(html).toContain('<th>TPOT p50 / p90 / p99</th>');
  });

  test('LLM_BENCH_COLUMNS: method, all, names in any case; a wrong name is an error naming the near one', () => {
    expect(parseColumns('method')).toEqual([]);
    expect(parseColumns('all')).toEqual(['ttft', 'tbt', 'itl', 'maxGap', 'tpot', 'e2e', 'requestsPerSecond']);
    expect(parseColumns('E2E, maxgap,e2e')).toEqual(['e2e', 'maxGap']);
    expect(() => parseColumns('itl,tpott')).toThrow(/LLM_BENCH_COLUMNS: "tpott" is not a column \(did you mean tpot\?\); give method, all, or some of ttft, tbt, itl, maxGap, tpot, e2e, requestsPerSecond/);
    expect(() => parseColumns(',')).toThrow(/names no column/);
  });
});

describe('LLM_BENCH_PERCENTILES', () => {
  test('numbers above 0 and at most 100, up to 3 decimals, ascending and each once; a bad one names the setting and an example', () => {
    expect(parsePercentiles('99, 50,p95,99.9,50')).toEqual([50, 95, 99, 99.9]);
    expect(parsePercentiles('100,0.5')).toEqual([0.5, 100]);
    for (const bad of ['0', '101', 'ninety', '99.9999', '-5', '1e2']) {
      expect(() => parsePercentiles(bad)).toThrow(new RegExp(`LLM_BENCH_PERCENTILES: "${bad.replace('.', '\\.')}" is not a percentile; give numbers above 0 and at most 100 \\(up to 3 decimals\\), comma-separated, e\\.g\\. LLM_BENCH_PERCENTILES=50,90,95,99`));
    }
    expect(() => parsePercentiles(',')).toThrow(/names no percentile/);
    expect(() => parsePercentiles('1,2,3,4,5,6,7,8,9,10,11')).toThrow(/gives 11 percentiles; at most 10/);
  });

  test('alone it adds the latencies vLLM prints (TTFT, TPOT, ITL, E2E); with LLM_BENCH_COLUMNS the columns are those', () => {
    const alone = resolveSuite({ name: 'p' }, { LLM_BENCH_PERCENTILES: '50,99' });
    expect(alone.percentiles).toEqual([50, 99]);
    expect(alone.columns).toEqual(['ttft', 'tpot', 'itl', 'e2e']);
    expect(resolveSuite({ name: 'p' }, { LLM_BENCH_PERCENTILES: '50,99', LLM_BENCH_COLUMNS: 'tbt' }).columns).toEqual(['tbt']);
    expect(resolveSuite({ name: 'p' }, {}).percentiles).toBeUndefined();
  });

  test('the latency columns show the chosen percentiles, on both pages and in the HTML cell view; a cell measured without them shows a dash', () => {
    const r = withStall(['ttft', 'itl', 'tbt', 'maxGap']);
    r.info.run.percentiles = [50, 99.9];
    const cell = r.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 16)!;
    cell.figures!.ttftMs = { ...cell.figures!.ttftMs!, percentiles: { p50: 1200, 'p99.9': 2400.4 } };
    cell.figures!.interTokenLatencyMs = { ...cell.figures!.interTokenLatencyMs!, percentiles: { p50: 19.6, 'p99.9': 880.25 } };
    cell.figures!.timeBetweenTokensMs = { ...cell.figures!.timeBetweenTokensMs!, percentiles: { p50: 20.04, 'p99.9': 33.3 } };
    expect(validateResult(JSON.parse(JSON.stringify(r))).ok).toBe(true);
    const md = renderMarkdown(r);
    const header = md.split('\n').find((l) => l.startsWith('| Phase |'))!;
    expect(header.endsWith('| Client active | TTFT p50 / p99.9 | ITL p50 / p99.9 | TBT p50 / p99.9 | Longest gap |')).toBe(true);
    const row = md.split('\n').find((l) => l.startsWith('| Sustained decode | 8K | 16 |'))!;
    expect(row.endsWith('| 1,200 / 2,400 ms | 19.6 / 880.3 ms | 20.0 / 33.3 ms | 2,950.5 ms |')).toBe(true);
    expect(md.split('\n').find((l) => l.startsWith('| Sustained decode | 8K | 1 |'))!.endsWith('| — | — | — | — |')).toBe(true);
    const html = renderHtml(r);
    expect(html).toContain('<th>TTFT p50 / p99.9</th>');
    // the cell view lists the latencies measured at them (TTFT, TBT, ITL here), and none for a cell measured without them
    expect(html).toContain('<td class="text">ITL p50 / p99.9</td><td>19.6 / 880.3 ms</td>');
    expect(html).not.toContain('<td class="text">TPOT p50 / p99.9</td>');
    expect(html.match(/<td class="text">TTFT p50 \/ p99\.9<\/td>/g)).toHaveLength(1);
    // a percentile name the schema does not know is refused
    cell.figures!.ttftMs.percentiles = { median: 3 };
    expect(validateResult(JSON.parse(JSON.stringify(r))).ok).toBe(false);
  });

  test('a repeated cell\'s chosen percentiles are the medians over its repeats, as its fixed quantiles', () => {
    const f = (p50: number, p999: number) => ({ ...withStall().cells[0]!.figures!, ttftMs: { median: p50, p90: p50, p99: p999, samples: 10, percentiles: { p50, 'p99.9': p999 } } });
    const m = medianFigures([f(10, 100), f(30, 50), f(20, 300)]);
    expect(m.ttftMs).toEqual({ median: 20, p90: 20, p99: 100, samples: 10, percentiles: { p50: 20, 'p99.9': 100 } });
  });
});
