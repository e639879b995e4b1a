/**
 * The Open-loop load section on every page, from fixture rate cells (one of each status): it
 * appears only with rate cells; every rate status has the same words on the Markdown page and in
 * the HTML; the knee is ringed at each context's first Saturated rate; numbers use the decode
 * table's formats; a Not run reason is escaped; the progress line and the job summary say the same.
 */
import { describe, expect, test } from 'vitest';
import { escapeCell, escapeHtml, escapeText } from '../../src/text/escape.js';
import { renderHtml } from '../../src/pages/html.js';
import { renderMarkdown } from '../../src/pages/markdown.js';
import { renderStepSummary } from '../../src/pages/step-summary.js';
import { renderCompareHtml } from '../../src/pages/compare-html.js';
import { rateLine } from '../../src/pages/progress-lines.js';
import { lineChart } from '../../src/pages/svg.js';
import { kneeRates, RATE_STATUS_LABELS, rateStatusWords } from '../../src/pages/view.js';
import { rateCellKey } from '../../src/shapes/labels.js';
import type { RateCellResult, RateCellStatus, SpeedMatrixResult } from '../../src/shapes/result.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';
import { NOT_RUN_REASON, rateCellsFixture, rateResult } from '../results/fixtures/rate-cells.js';

const STATUSES = Object.keys(RATE_STATUS_LABELS) as RateCellStatus[];
const lines = (text: string) => text.split('\n');
const cellOf = (result: SpeedMatrixResult, key: string) => result.rateCells!.find((c) => rateCellKey(c.context, c.rate) === key)!;

/** the Status column of a rate cell's measurements row on the Markdown page */
function markdownStatus(md: string, cell: RateCellResult): string {
  const row = lines(md).find((l) => l.startsWith(`| ${cell.contextLabel} | ${cell.rate} | `))!;
  return row.split(' | ')[2]!;
}

/** the status badges of a rate cell in the HTML: its grid cell's and its measurements row's */
function htmlBadges(html: string, cell: RateCellResult, rates: readonly number[]): string[] {
  const grid = /<div data-grid="rate">(.*?)<\/div>/.exec(html)![1]!;
  const gridRow = new RegExp(`<tr><td>${cell.contextLabel}</td>(.*?)</tr>`).exec(grid)![1]!;
  const gridCell = [...gridRow.matchAll(/<td class="text">(.*?)<\/td>/g)][rates.indexOf(cell.rate)]![1]!;
  const inGrid = /^<span class="status"[^>]*>([^<]*)<\/span>/.exec(gridCell);
  const table = /<div data-table="rate">(.*?)<\/div>/.exec(html)![1]!;
  const row = new RegExp(`<tr><td class="text">${cell.contextLabel}</td><td>${cell.rate}</td><td class="text"><span class="status"[^>]*>([^<]*)</span>`).exec(table);
  return [inGrid?.[1], row?.[1]].filter((x): x is string => x !== undefined);
}

describe('the section appears only with rate cells', () => {
  test('without rate cells: no section on any page, and an empty list is the same as none', () => {
    const plain = sglangResult();
    for (const page of [renderMarkdown(plain), renderHtml(plain), renderStepSummary(plain), renderCompareHtml([{ label: 'a', result: plain }, { label: 'b', result: sglangResult() }])]) {
      expect(page).not.toContain('Open-loop');
      expect(page).not.toContain('class="knee"');
    }
    const empty = { ...sglangResult(), rateCells: [] };
    expect(renderMarkdown(empty)).toBe(renderMarkdown(plain));
    expect(renderHtml(empty)).toBe(renderHtml(plain));
    expect(renderStepSummary(empty)).toBe(renderStepSummary(plain));
  });

  test('with rate cells: the Markdown section right after the decode matrix, the HTML one after its charts', () => {
    const result = rateResult();
    const md = renderMarkdown(result);
    expect(lines(md).filter((l) => l.startsWith('#')).slice(-3)).toEqual(['### Sustained decode', '### Open-loop load', '### All measurements']);
    expect(md.indexOf('### Open-loop load')).toBeGreaterThan(md.indexOf('TTFT is measured after the benchmark warms'));
    const html = renderHtml(result);
    const at = html.indexOf('<h2>Open-loop load</h2>');
    expect(at).toBeGreaterThan(html.indexOf('data-chart="ttft"'));
    expect(at).toBeLessThan(html.indexOf('<h2>Prefill</h2>'));
    expect(md).toContain('- **Open-loop rates**: 0.5, 1, 2, 4 requests/s per context: poisson arrivals, seed 1, no ramp, at most 512 requests in flight');
    // the two queue columns are told apart under the table, not only in docs/open-loop.md
    expect(md).toContain('In system: requests scheduled and not yet ended');
    expect(md).toContain("Server waiting: the waiting requests the server's own metrics count, where it has them; far below In system, requests wait where the engine does not count them");
    expect(html).toContain('In system: requests scheduled and not yet ended');
    expect(html).toContain(escapeHtml("Server waiting: the waiting requests the server's own metrics count"));
  });
});

describe('rate status words are the same on the Markdown page and in the HTML', () => {
  for (const status of STATUSES) {
    test(status, () => {
      const result = rateResult();
      const cell = result.rateCells!.find((c) => c.status === status)!;
      expect(cell, `the fixture has a ${status} cell`).toBeDefined();
      const words = rateStatusWords(cell);
      expect(words.startsWith(RATE_STATUS_LABELS[status])).toBe(true);
      expect(markdownStatus(renderMarkdown(result), cell)).toBe(escapeCell(escapeText(words)));
      expect(htmlBadges(renderHtml(result), cell, [0.5, 1, 2, 4])).toEqual([escapeHtml(words), escapeHtml(words)]);
    });
  }

  test('the words: Errors with their count, Not run with its reason, several statuses main first', () => {
    const result = rateResult();
    expect(STATUSES.map((s) => RATE_STATUS_LABELS[s])).toEqual(['Valid', 'Saturated', 'Over capacity', 'Client-limited', 'Errors', 'Not run']);
    expect(rateStatusWords(cellOf(result, '32K@1'))).toBe('Errors (3)');
    expect(rateStatusWords(cellOf(result, '64K@0.5'))).toBe(`Not run: ${NOT_RUN_REASON}`);
    expect(rateStatusWords({ ...cellOf(result, '8K@2'), statuses: ['saturated', 'valid', 'client-limited'] })).toBe('Saturated, Client-limited');
    expect(rateStatusWords({ ...cellOf(result, '32K@1'), evidence: {} })).toBe('Errors (3)');
  });

  test('the legend names the statuses seen, and only those', () => {
    const md = renderMarkdown(rateResult());
    for (const s of ['Saturated', 'Over capacity', 'Client-limited', 'Errors', 'Not run']) expect(md).toContain(`${s}: `);
    const onlyValid = renderMarkdown(rateResult((cells) => cells.filter((c) => c.status === 'valid')));
    const section = onlyValid.slice(onlyValid.indexOf('### Open-loop load'), onlyValid.indexOf('### All measurements'));
    expect(section).not.toContain('Saturated: ');
    expect(section).not.toContain('Knee');
  });
});

describe('the grid and the measurements', () => {
  const md = renderMarkdown(rateResult());

  test('the grid: status · completed req/s, a missing planned cell Not run (… on a partial page), the reason escaped', () => {
    expect(lines(md)).toContain('| Context | 0.5/s | 1/s | 2/s | 4/s |');
    expect(lines(md)).toContain('| 8K | Valid · 0.50 req/s | Valid · 1.0 req/s | Saturated · 1.6 req/s | Saturated · 1.7 req/s |');
    expect(lines(md)).toContain('| 32K | Valid · 0.50 req/s | Errors (3) · 0.90 req/s | Client-limited · 1.9 req/s | Over capacity |');
    expect(lines(md)).toContain('| 64K | Not run: the server refused connections &lt;ECONNREFUSED&gt; \\\\| for 15 s | Not run | Not run | Not run |');
    const partial = renderMarkdown({ ...rateResult(), partial: true });
    expect(lines(partial)).toContain('| 16K | … | … | … | … |');
  });

  test('a sweep: each context has its own rates, so another context\'s rate is —, not Not run, and has no measurements row', () => {
    // 8K swept 1 and 4/s, 32K swept 0.5 and 2/s (rates of their own; the settings' list is then [])
    const swept = rateResult((cells) => cells.filter((c) => (c.context === 8192 && (c.rate === 1 || c.rate === 4)) || (c.context === 32768 && (c.rate === 0.5 || c.rate === 2))));
    swept.info.run.rates = { ...swept.info.run.rates!, rates: [], sweep: { points: 2 } };
    swept.info.run.contexts = [8192, 32768, 65536];
    const page = lines(renderMarkdown(swept));
    // a context without a cell of its own was never swept (or not yet): Not run, or … on a partial page
    expect(page).toContain('| 64K | Not run | Not run | Not run | Not run |');
    expect(lines(renderMarkdown({ ...swept, partial: true }))).toContain('| 64K | … | … | … | … |');
    expect(page).toContain('| 8K | — | Valid · 1.0 req/s | — | Saturated · 1.7 req/s |');
    expect(page).toContain('| 32K | Valid · 0.50 req/s | — | Client-limited · 1.9 req/s | — |');
    expect(page.find((l) => l.startsWith('Status · completed req/s'))).toContain('each context sweeps rates of its own, so — marks another context\'s rate');
    const rows = page.filter((l) => /^\| (8K|32K) \| [0-9.]+ \| /.test(l));
    expect(rows.map((l) => l.split(' | ').slice(0, 2).join(' | '))).toEqual(['| 8K | 1', '| 8K | 4', '| 32K | 0.5', '| 32K | 2']);
    expect(page.filter((l) => /^\| (8K|32K) \| /.test(l)).join('\n')).not.toContain('Not run');
    const html = renderHtml(swept);
    const table = /<div data-table="rate">(.*?)<\/div>/.exec(html)![1]!;
    expect(table.match(/<tr><td class="text">(8K|32K)<\/td>/g)).toHaveLength(4);
    const grid = /<div data-grid="rate">(.*?)<\/div>/.exec(html)![1]!;
    expect(grid.match(/<td class="text">—<\/td>/g)).toHaveLength(4);
    expect(grid.match(/<td class="text">Not run<\/td>/g)).toHaveLength(4);
    // configured rates: a missing planned cell is still Not run
    expect(lines(md)).toContain('| 64K | Not run: the server refused connections &lt;ECONNREFUSED&gt; \\\\| for 15 s | Not run | Not run | Not run |');
  });

  test('numbers in the decode table\'s formats, — where a figure is absent', () => {
    expect(lines(md)).toContain('| 8K | 0.5 | Valid | 0.50 / 0.50 / 0.50 | 138.3 | 55.4 | 310 / 340 / 420 ms | 4,100 / 4,250 / 4,400 ms | 18.0 ms | 0.3 / 1.2 ms | 2.4 / 5 | 0.0 / 0 | 0 | 0 / 0 |');
    expect(lines(md)).toContain('| 8K | 4 | Saturated | 4.0 / 4.0 / 1.7 | 445.5 | 55.4 | 2,400 / 9,800 / 15,000 ms | 7,100 / 15,200 / 21,000 ms | 18.0 ms | 0.3 / 1.2 ms | 18.8 / 36 | 30.2 / 61 | 0 | 0 / 0 |');
    // no server metrics: — for server waiting; the ceiling's counts
    expect(lines(md)).toContain('| 32K | 2 | Client-limited | 2.0 / 2.0 / 1.9 | 496.7 | 55.4 | 700 / 900 / 1,300 ms | 5,000 / 5,400 / 6,100 ms | 18.0 ms | 3.2 / 85.0 ms | 9.4 / 18 | — | 0 | 2 / 12 |');
    expect(lines(md)).toContain('| 32K | 4 | Over capacity | — | — | — | — | — | — | — | — | — | — | — |');
    const header = lines(md).find((l) => l.startsWith('| Context | Rate (req/s) |'))!;
    expect(header).toBe('| Context | Rate (req/s) | Status | Offered / sent / completed req/s | Total tok/s | Per request tok/s | TTFT p50 / p90 / p99 | End-to-end p50 / p90 / p99 | Time between tokens | Dispatch delay p50 / p99 | In system mean / max | Server waiting mean / max | Failed requests | Unsent / ceiling waited |');
  });

  test('the Not run reason is escaped on both pages', () => {
    const html = renderHtml(rateResult());
    expect(html).toContain('Not run: the server refused connections &lt;ECONNREFUSED&gt; | for 15 s');
    expect(html).not.toContain('<ECONNREFUSED>');
    expect(md).not.toContain('<ECONNREFUSED>');
  });

  test('with an SLO: goodput in the grid and a Goodput column', () => {
    const result = rateResult((cells) => cells.map((c) => (c.figures ? { ...c, goodput: { requests: { met: 9, judged: 10, share: 0.9 }, tokens: { met: 90, total: 100, share: 0.9 } } } : c)));
    result.info.run.slo = { text: 'ttftP90<=2000', ttftMs: { stat: 'p90', max: 2000 } } as SpeedMatrixResult['info']['run']['slo'];
    const page = renderMarkdown(result);
    expect(lines(page)).toContain('| 8K | Valid · 0.50 req/s · goodput 90 % | Valid · 1.0 req/s · goodput 90 % | Saturated · 1.6 req/s · goodput 90 % | Saturated · 1.7 req/s · goodput 90 % |');
    expect(lines(page).find((l) => l.startsWith('| 8K | 0.5 | Valid |'))!.endsWith('| 90 % (90 % of tokens) |')).toBe(true);
    expect(renderHtml(result)).toContain('<span class="status" style="background:#009E73;color:#fff">Valid</span> · 0.50 req/s · goodput 90 %');
  });

  test('a rate cell\'s threshold and baseline failures are listed with the others', () => {
    const result = rateResult((cells) => cells.map((c, i) => (i === 1 ? { ...c, thresholdFailures: ['8K@1: TTFT p90 from schedule 360 ms > 300 ms'], baselineFailures: ['8K@1: slower than the baseline'] } : c)));
    const page = renderMarkdown(result);
    expect(page).toContain('### Threshold failures\n\n- 8K@1: TTFT p90 from schedule 360 ms > 300 ms');
    expect(page).toContain('- 8K@1: slower than the baseline');
    expect(renderHtml(result)).toContain('<li>8K@1: TTFT p90 from schedule 360 ms &gt; 300 ms</li>');
    expect(renderStepSummary(result)).toContain('- 8K@1: TTFT p90 from schedule 360 ms > 300 ms');
  });
});

describe('the knee: each context\'s first Saturated rate', () => {
  test('found per context, in rate order, from the main status or any status', () => {
    expect([...kneeRates(rateCellsFixture())]).toEqual([[8192, 2]]);
    const cells = rateCellsFixture().map((c) => (rateCellKey(c.context, c.rate) === '32K@2' ? { ...c, statuses: ['client-limited' as const, 'saturated' as const] } : c));
    expect([...kneeRates([...cells].reverse())]).toEqual([[8192, 2], [32768, 2]]);
  });

  test('ringed and labelled on both charts at the point of the first Saturated rate, said in the text', () => {
    const html = renderHtml(rateResult());
    for (const name of ['rateTtft', 'rateE2e']) {
      const chart = new RegExp(`<figure class="chart" data-chart="${name}".*?</figure>`).exec(html)![0];
      const knees = [...chart.matchAll(/<g class="knee"><circle cx="([\d.]+)" cy="([\d.]+)"[^>]*\/><text[^>]*>([^<]*)<\/text><\/g>/g)];
      expect(knees.map((k) => k[3])).toEqual(['knee 8K 2/s']);
      const point = new RegExp(`<circle class="mark" cx="([\\d.]+)" cy="([\\d.]+)"[^>]*><title>8K@2: `).exec(chart)!;
      expect([knees[0]![1], knees[0]![2]]).toEqual([point[1], point[2]]);
      expect(chart).toContain(escapeHtml("Ringed: the knee, each context's first Saturated rate (8K at 2 req/s)."));
    }
    // the Markdown page says it in words
    expect(renderMarkdown(rateResult())).toContain('Knee (the first Saturated rate of each context): 8K at 2 req/s.');
  });

  test('a Client-limited rate cell is a hollow point on both charts, and the charts say what hollow means', () => {
    // the fixture's 32K@2 is Client-limited; every other measured cell is a filled dot
    const html = renderHtml(rateResult());
    for (const name of ['rateTtft', 'rateE2e']) {
      const chart = new RegExp(`<figure class="chart" data-chart="${name}".*?</figure>`).exec(html)![0];
      const hollow = [...chart.matchAll(/<circle class="mark"[^>]*data-hollow="true"><title>([^<]*)<\/title>/g)].map((m) => m[1]!.split(':')[0]);
      expect(hollow, name).toEqual(['32K@2']);
      expect(chart).toContain(escapeHtml("Hollow points: Client-limited cells, whose timings are partly the client's."));
    }
    const none = renderHtml(rateResult((cells) => cells.filter((c) => c.status !== 'client-limited')));
    expect(none).not.toContain('data-hollow');
    expect(none).not.toContain('Hollow points');
  });

  test('the knee moves with the first Saturated rate', () => {
    const result = rateResult((cells) => cells.map((c) => (rateCellKey(c.context, c.rate) === '8K@1' ? { ...c, status: 'saturated' as const, statuses: ['saturated' as const] } : c)));
    const html = renderHtml(result);
    expect([...html.matchAll(/class="knee-label"[^>]*>([^<]*)</g)].map((m) => m[1])).toEqual(['knee 8K 1/s', 'knee 8K 1/s']);
  });

  test('a line chart without knees is drawn as before (no ring)', () => {
    const spec = { name: 'x', title: 't', description: 'd', x: { title: 'x' }, y: { title: 'y' }, series: [{ name: 's', color: '#000', points: [{ x: 1, y: 2 }, { x: 2, y: 3 }] }] };
    expect(lineChart(spec)).not.toContain('knee');
    expect(lineChart({ ...spec, series: [{ ...spec.series[0]!, points: [{ x: 1, y: 2 }, { x: 2, y: 3, knee: 'here' }] }] })).toContain('>here</text></g>');
  });

  test('the comparison page overlays the runs: a series per run and context, each run\'s knee', () => {
    const other = rateResult((cells) => cells.map((c) => (c.figures ? { ...c, figures: { ...c.figures, ttftFromScheduleMs: { ...c.figures.ttftFromScheduleMs!, p90: c.figures.ttftFromScheduleMs!.p90 * 2 } } } : c)));
    const html = renderCompareHtml([{ label: 'before', result: rateResult() }, { label: 'after', result: other }]);
    expect(html).toContain('<h2>Open-loop load</h2>');
    const chart = /<figure class="chart" data-chart="rateTtft".*?<\/figure>/.exec(html)![0];
    expect([...chart.matchAll(/<g class="series" data-run="(\d)" data-context="([^"]+)"/g)].map((m) => `${m[1]}:${m[2]}`)).toEqual(['0:8K', '0:32K', '1:8K', '1:32K']);
    expect(chart.match(/class="knee"/g)).toHaveLength(2);
    expect(chart).toContain('before: 8K at 2 req/s; after: 8K at 2 req/s');
    // one run with rate cells and one without: still drawn, for the one that has them
    expect(renderCompareHtml([{ label: 'a', result: sglangResult() }, { label: 'b', result: rateResult() }])).toContain('data-chart="rateE2e"');
  });
});

describe('the progress line and the job summary', () => {
  test('a line per finished rate cell', () => {
    const result = rateResult();
    expect(rateLine(cellOf(result, '8K@2'))).toBe('[speed-matrix] 8K@2/s: Saturated · offered/completed 2.0/1.6 req/s · TTFT p90 4.2 s (sched) · e2e p99 12.4 s');
    expect(rateLine(cellOf(result, '8K@0.5'))).toBe('[speed-matrix] 8K@0.5/s: Valid · offered/completed 0.50/0.50 req/s · TTFT p90 340 ms (sched) · e2e p99 4.4 s');
    expect(rateLine(cellOf(result, '32K@1'))).toBe('[speed-matrix] 32K@1/s: Errors (3) · offered/completed 1.0/0.90 req/s · TTFT p90 800 ms (sched) · e2e p99 5.6 s · 3 failed');
    // goodput in the page's format: one decimal under 10 %
    const low = { ...cellOf(result, '8K@0.5'), goodput: { requests: { share: 0.099, judged: 10 }, tokens: { share: 0.1 } } as unknown as RateCellResult['goodput'] };
    expect(rateLine(low)).toMatch(/ · goodput 9\.9 %$/);
    expect(rateLine(cellOf(result, '32K@2'))).toBe('[speed-matrix] 32K@2/s: Client-limited · offered/completed 2.0/1.9 req/s · TTFT p90 900 ms (sched) · e2e p99 6.1 s · ceiling: 12 waited, 2 unsent');
    // a cell that fails its checks or the baseline says so, as a decode cell's line does
    const regressed = { ...cellOf(result, '8K@0.5'), baselineFailures: ['8K@0.5/s tbtMs 27.1 vs baseline 18.0: +50.0% (tolerance 5%, at least 0.5 ms)'] };
    expect(rateLine(regressed)).toMatch(/ · e2e p99 4\.4 s · fails 1 check$/);
    // Over capacity with its numbers (METHOD.md: record them), as a concurrency cell's line has them
    expect(rateLine(cellOf(result, '32K@4'))).toBe('[speed-matrix] 32K@4/s: Over capacity · 20.0 in flight × (32,768 + max output) = 737,280 tokens > KV capacity 500,000');
    const bare = { ...cellOf(result, '32K@4'), evidence: {} };
    expect(rateLine(bare)).toBe('[speed-matrix] 32K@4/s: Over capacity');
    expect(rateLine(cellOf(result, '64K@0.5'))).toBe(`[speed-matrix] 64K@0.5/s: Not run: ${NOT_RUN_REASON}`);
  });

  test('the job summary: per context the highest Valid rate, and the first Saturated one', () => {
    const summary = renderStepSummary(rateResult());
    expect(summary).toContain(
      ['### Open-loop load', '', '- 8K: highest Valid rate 1 req/s (first Saturated at 2 req/s)', '- 32K: highest Valid rate 0.5 req/s', '- 64K: no rate was Valid', ''].join('\n'),
    );
  });
});

describe('why a rate cell is Client-limited, on the page', () => {
  test('each rule that marked it, with its figures and its fix; none without a Client-limited cell', () => {
    const client = { eventLoopDelayP99Ms: 3.6, arrivalLagP99Ms: 3.8, timingErrorP99Ms: 5.23, boundMs: 5, cpuCores: 0.05, cpuBoundCores: 0.9, coreWaitShare: 0.05 };
    const result = rateResult((cells) =>
      cells.map((c) =>
        rateCellKey(c.context, c.rate) === '8K@1'
          ? { ...c, status: 'client-limited' as const, statuses: ['client-limited' as const], evidence: { ...c.evidence, clientLimited: { dispatchDelayP99Ms: 12.5, boundMs: 10, ceilingWaited: 0, unsent: 0, causes: ['dispatch-delay' as const, 'client-self-check' as const], client } } }
          : c,
      ),
    );
    const md = renderMarkdown(result);
    expect(md).toContain("Client-limited rate cells: the load generator could not keep their schedule or time their tokens, so their latencies from the schedule are partly the client's:");
    const note = lines(md).find((l) => l.startsWith('- 8K@1/s: '))!;
    expect(note).toContain('could not send on schedule (dispatch delay p99 12.5 ms, bound 10 ms); the load generator\'s timing error estimate p99 was 5.2 ms');
    // a client thread sends and reads: held up by the machine, its late sends had that cause too, so
    // 'lower the rate' would not mend it and is not offered
    expect(note).toMatch(/What to do: its thread was mostly idle \(0\.05 cores\).*give the client free cores/);
    expect(note).not.toContain('lower the rate');
    // the fixture's own Client-limited cell, judged before causes were recorded: read from its figures
    expect(lines(md).find((l) => l.startsWith('- 32K@2/s: '))).toBe(
      '- 32K@2/s: the load generator could not send on schedule (dispatch delay p99 85.0 ms, bound 10 ms); the in-flight ceiling held requests back (12 waited for it, 2 never sent). What to do: lower the rate; raise matrix.maxInFlight (LLM_BENCH_MAX_IN_FLIGHT).',
    );
    const none = rateResult((cells) => cells.filter((c) => !c.statuses.includes('client-limited')));
    expect(renderMarkdown(none)).not.toContain('Client-limited rate cells:');
  });
});


describe('a rate cell whose window was too short to judge Saturated', () => {
  const WHY = "a request took about 1.1 s, and telling a climb from a stable queue's wander needs 6 such spans after the system has filled; this 3.0 s window had 1.4 s after 1.6 s of fill-up. Lengthen the window to at least 7.1 s";
  const withNotJudged = (): SpeedMatrixResult => {
    const result = rateResult();
    const cell = cellOf(result, '8K@0.5');
    cell.evidence = { ...cell.evidence, saturation: { ...cell.evidence.saturation!, fromMs: 1600, notJudged: WHY } };
    return result;
  };
  test('its status says so on every page and in the progress line, and the page says why and what to change', () => {
    const result = withNotJudged();
    const cell = cellOf(result, '8K@0.5');
    expect(rateStatusWords(cell)).toBe('Valid (Saturated not judged)');
    const md = renderMarkdown(result);
    expect(markdownStatus(md, cell)).toBe('Valid (Saturated not judged)');
    expect(md).toContain('Saturated was not judged for these rate cells');
    expect(md).toContain(`- 8K@0.5/s: ${escapeText(WHY)}`);
    const html = renderHtml(result);
    expect(htmlBadges(html, cell, result.info.run.rates!.rates)).toEqual(['Valid (Saturated not judged)', 'Valid (Saturated not judged)']);
    expect(html).toContain(`<ul data-list="saturation-not-judged"><li>8K@0.5/s: ${escapeHtml(WHY)}</li></ul>`);
    expect(rateLine(cell)).toContain('8K@0.5/s: Valid (Saturated not judged)');
  });
  test('the charts\' captions count the cells not judged, and never claim no rate was Saturated for them', () => {
    const caption = (result: SpeedMatrixResult): string => /<figure class="chart" data-chart="rateTtft".*?<\/figure>/s.exec(renderHtml(result))![0];
    const measured = rateResult().rateCells!.filter((c) => c.figures).length;
    const withKnee = caption(withNotJudged());
    expect(withKnee).toContain(escapeHtml(`Ringed: the knee, each context's first Saturated rate (8K at 2 req/s). Saturated was not judged in 1 of ${measured} measured rate cells.`));
    // no cell Saturated, one not judged: the caption may not say "No rate was Saturated."
    const unsaturated = withNotJudged();
    unsaturated.rateCells = unsaturated.rateCells!.map((c) => ({ ...c, status: c.status === 'saturated' ? ('valid' as const) : c.status, statuses: c.statuses.filter((s) => s !== 'saturated') }));
    const none = caption(unsaturated);
    expect(none).not.toContain('No rate was Saturated.');
    expect(none).toContain(escapeHtml(`No rate judged was Saturated. Saturated was not judged in 1 of ${measured} measured rate cells.`));
    // every cell judged and none Saturated: the plain sentence
    const judged = rateResult();
    judged.rateCells = judged.rateCells!.map((c) => ({ ...c, status: c.status === 'saturated' ? ('valid' as const) : c.status, statuses: c.statuses.filter((s) => s !== 'saturated') }));
    expect(caption(judged)).toContain('No rate was Saturated.');
  });
  test('judged cells say nothing of it', () => {
    const md = renderMarkdown(rateResult());
    expect(md).not.toContain('not judged');
    expect(renderHtml(rateResult())).not.toContain('saturation-not-judged');
  });
});

describe('the highest rate at the SLO on the Markdown page', () => {
  const withRow = (adaptiveCells: number): SpeedMatrixResult => {
    const result = rateResult();
    result.info.run.slo = { text: 'ttftP90<=2000', constraints: [] } as unknown as NonNullable<SpeedMatrixResult['info']['run']['slo']>;
    const binding = { constraint: 'ttftMs', label: 'TTFT p90', value: 2500, bound: 2000, detail: 'TTFT p90 2,500 ms > 2,000 ms' };
    result.rateCapacity = {
      rows: [{ context: 0, contextLabel: '0', capacity: 2, atLeast: false, searched: [{ rate: 2, meets: true, adaptive: adaptiveCells > 0 }], adaptiveCells, resolution: 0.1, binding, bindingRate: 2.1 } as unknown as NonNullable<SpeedMatrixResult['rateCapacity']>['rows'][number]],
    };
    return result;
  };

  test('our own binding line keeps its ">" as written (no &gt; in the raw file)', () => {
    const md = renderMarkdown(withRow(3));
    expect(md).toMatch(/- Highest rate at the SLO: 0: 2(\.0)? req\/s \(binds: TTFT p90 .*> .*at 2\.1 req\/s\)/);
    expect(md.split('\n').find((l) => l.startsWith('- Highest rate at the SLO'))).not.toContain('&gt;');
    expect(md).toContain('then measured once more (3 rate cells searched, the confirming one included)');
  });

  test("the search's own cells are listed with their offered rates and verdicts, on both pages; a random schedule's spread is said", () => {
    const result = withRow(3);
    const from = result.rateCells!.find((c) => c.status === 'valid' && c.figures)!;
    const verdict = { meets: false, binding: { detail: 'TTFT p90 2,500 ms > 2,000 ms' } } as unknown as NonNullable<typeof from.slo>;
    result.rateCells!.push({ ...from, rate: 1.5, adaptive: true, slo: verdict });
    const md = renderMarkdown(result);
    const at = md.indexOf("The highest-rate search's own rate cells");
    expect(at).toBeGreaterThan(md.indexOf('### Open-loop load'));
    const table = md.slice(at).split('\n').filter((l) => l.startsWith('|'));
    expect(table[0]).toContain('| Offered / sent / completed req/s |');
    expect(table[0]).toMatch(/\| Meets SLO \|$/);
    expect(table[2]).toMatch(new RegExp(`^\\| ${from.contextLabel} \\| 1\\.5 \\| Valid \\|.*\\| no: TTFT p90 2,500 ms > 2,000 ms \\|$`));
    // the configured grid does not take the searched rate
    expect(md).not.toContain('| 1.5/s |');
    // Poisson at the rate found (2 req/s) over the fixture's window: more than the 5 % steps
    const windowS = result.info.run.windowS;
    const spread = Math.round(100 / Math.sqrt(2 * windowS));
    expect(spread).toBeGreaterThan(5);
    expect(md).toContain(`In a ${windowS} s window a poisson schedule at 2 req/s offers about ±${spread} % of its rate (one standard deviation), more than the search's 5 % steps: compare each searched cell's offered rate below`);
    expect(md).toContain("the search's own cells, less the confirming one, are listed below the measurements");
    const html = renderHtml(result);
    expect(html).toContain('data-table="rate-searched"');
    expect(html).toContain(`offers about ±${spread} % of its rate`);
    // constant arrivals: no spread to speak of
    const constant = withRow(3);
    constant.info.run.rates = { ...constant.info.run.rates!, arrival: 'constant' };
    expect(renderMarkdown(constant)).not.toContain('offers about ±');
  });

  test('only the confirmation searched (no cell to list): the note promises no list, and no table appears', () => {
    const md = renderMarkdown(withRow(1));
    expect(md).toContain('(1 rate cell searched, the confirming one included)');
    expect(md).not.toContain("The highest-rate search's own rate cells");
    expect(md).not.toContain('listed below the measurements');
    expect(md).not.toContain("compare each searched cell's offered rate below");
  });

  test('nothing searched: the note says the configured rates decided, not "0 rate cells searched"', () => {
    const md = renderMarkdown(withRow(0));
    expect(md).toContain('comes from the configured rates alone (no rate cell was searched between them)');
    expect(md).not.toContain('0 rate cells searched');
    // no steps to weigh a spread against: no spread note on either page
    expect(md).not.toContain('offers about ±');
    expect(renderHtml(withRow(0))).not.toContain('offers about ±');
  });
});
