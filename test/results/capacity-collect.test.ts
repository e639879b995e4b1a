/**
 * Capacity at the SLO in the results: collecting the rows' capacity metas (with their adaptive
 * cells), the page's "Capacity at your SLO" section, the job summary, the progress lines, and the
 * result schema.
 *
 * The fixture is the reference SGLang matrix judged at TTFT p90 ≤ 1,000 ms:
 *   8K:  columns 1–32 meet, 64 misses (1,458 ms), 128 is Over capacity; the search measured 48 ✗,
 *        40 ✓, 44 ✗, 42 ✓ and confirmed 42 → 42 users, binds at 44.
 *   16K: only its columns 1–16 judged (all meet) → at least 16.
 *   64K: 4 meets, 8 misses; the search measured 6 ✓, 7 ✗, and the confirming cell at 6 missed → 6, unconfirmed.
 */
import { describe, expect, test } from 'vitest';
import { collectResult, plannedCellKeys } from '../../src/results/collect.js';
import { capacityLine, cellLine } from '../../src/pages/progress-lines.js';
import { decodeGrid, renderMarkdown } from '../../src/pages/markdown.js';
import { renderHtml } from '../../src/pages/html.js';
import { gridAxes } from '../../src/pages/view.js';
import { renderStepSummary } from '../../src/pages/step-summary.js';
import type { CapacityRow, CellResult, Goodput, RunInfo, SpeedMatrixMeta, SpeedMatrixResult } from '../../src/shapes/result.js';
import { validateResult } from '../../src/results/validate.js';
import { capacityRow, judgedOf } from '../../src/judge/capacity-row.js';
import { parseSloText } from '../../src/slo/slo.js';
import { sloVerdict } from '../../src/judge/slo-verdict.js';
import { K, LEVELS, sglangCells, sglangInfo, sglangPrefill } from './fixtures/sglang-h200.js';

const SLO = parseSloText('ttftP90<=1000');

function gp(met: number, judged: number, tokenShare: number): Goodput {
  return { requests: { met, judged, share: met / judged }, tokens: { met: Math.round(tokenShare * 1000), total: 1000, share: tokenShare } };
}

/** judged at the SLO; measured cells get a goodput: 95 % (97 % of tokens) when they meet, 50 % (60 %) when not */
function judge(cell: CellResult): CellResult {
  cell.slo = sloVerdict(cell, SLO);
  if (cell.figures) cell.goodput = cell.slo.meets ? gp(19, 20, 0.97) : gp(10, 20, 0.6);
  return cell;
}

/** the run info of an SLO run, with its planned matrix cells (as the run meta carries them) */
function sloInfo(): RunInfo {
  const info = sglangInfo();
  info.run.slo = SLO;
  info.plannedCells = plannedCellKeys(sglangInfo());
  return info;
}

/** every matrix cell, judged */
function matrix(): CellResult[] {
  return sglangCells().map(judge);
}

function cellAt(cells: readonly CellResult[], label: string, concurrency: number): CellResult {
  return cells.find((c) => c.contextLabel === label && c.concurrency === concurrency)!;
}

/** A search cell: the row's `from` column measured at another concurrency with this TTFT (median and p90). */
function probe(label: string, concurrency: number, ttftMs: number, from: number): CellResult {
  const cell = structuredClone(cellAt(sglangCells(), label, from));
  cell.concurrency = concurrency;
  cell.adaptive = true;
  cell.figures!.ttftMs = { median: ttftMs, p90: ttftMs, p99: ttftMs, samples: concurrency };
  cell.finishedAt = `search ${label}/${concurrency}`;
  return judge(cell);
}

/** the row's capacity meta, built as the capacity test builds it */
function searchMeta(
  label: string,
  columns: readonly number[],
  probes: CellResult[],
  confirmation?: CellResult,
  cells: readonly CellResult[] = matrix(),
): Extract<SpeedMatrixMeta, { kind: 'capacity' }> {
  const context = cellAt(cells, label, columns[0]!).context;
  const judged = [...columns.map((c) => judgedOf(cellAt(cells, label, c), false)!), ...probes.map((p) => judgedOf(p, true)!)];
  const row = capacityRow({
    context,
    contextLabel: label,
    judged,
    ...(confirmation ? { confirmation: { concurrency: confirmation.concurrency, verdict: confirmation.slo!, ...(confirmation.goodput ? { goodput: confirmation.goodput } : {}) } } : {}),
  });
  return { kind: 'capacity', row, cells: probes };
}

const meta8K = () =>
  searchMeta('8K', LEVELS, [probe('8K', 48, 1200, 32), probe('8K', 40, 900, 32), probe('8K', 44, 1100, 32), probe('8K', 42, 950, 32)], (() => {
    const c = probe('8K', 42, 960, 32);
    c.goodput = gp(18, 20, 0.93);
    return c;
  })());
const meta16K = () => searchMeta('16K', [1, 2, 4, 8, 16], []);
const meta64K = () => searchMeta('64K', LEVELS, [probe('64K', 6, 980, 4), probe('64K', 7, 1050, 4)], probe('64K', 6, 1020, 4));

/** the whole run's metas: run info, every matrix cell, prefill rows, then the three searches (out of order) */
function metas(extra: SpeedMatrixMeta[] = []): SpeedMatrixMeta[] {
  return [
    { kind: 'run', info: sloInfo() },
    ...matrix().map((cell) => ({ kind: 'cell' as const, cell })),
    ...sglangPrefill().map((row) => ({ kind: 'prefill' as const, row })),
    meta64K(),
    meta16K(),
    meta8K(),
    ...extra,
  ];
}

function fullResult(extra: SpeedMatrixMeta[] = []): SpeedMatrixResult {
  return collectResult(metas(extra), { partial: false, endedAt: '2026-01-01T01:00:00.000Z' })!;
}

const keys = (cells: readonly CellResult[]) => cells.map((c) => `${c.contextLabel}/${c.concurrency}${c.adaptive ? '*' : ''}`);

describe('the fixture is what the header says', () => {
  test('rows', () => {
    expect(meta8K().row).toMatchObject({ capacity: 42, atLeast: false, bindingConcurrency: 44, adaptiveCells: 5, confirmation: { concurrency: 42, meets: true } });
    expect(meta16K().row).toMatchObject({ capacity: 16, atLeast: true, adaptiveCells: 0 });
    expect(meta64K().row).toMatchObject({ capacity: 6, atLeast: false, bindingConcurrency: 7, confirmation: { concurrency: 6, meets: false } });
  });
});

describe('collectResult with capacity metas', () => {
  test('capacity rows are sorted by context', () => {
    const result = fullResult();
    expect(result.capacity!.rows.map((r) => r.contextLabel)).toEqual(['8K', '16K', '64K']);
  });

  test('no capacity meta: no capacity block', () => {
    const result = collectResult([{ kind: 'run', info: sloInfo() }, ...matrix().map((cell) => ({ kind: 'cell' as const, cell }))], { partial: false })!;
    expect(result.capacity).toBeUndefined();
    expect('capacity' in result).toBe(false);
  });

  test('adaptive cells join the cells, in context then concurrency order', () => {
    const result = fullResult();
    expect(result.cells).toHaveLength(40 + 6);
    const k = keys(result.cells);
    expect(k.slice(0, 12)).toEqual(['8K/1', '8K/2', '8K/4', '8K/8', '8K/16', '8K/32', '8K/40*', '8K/42*', '8K/44*', '8K/48*', '8K/64', '8K/128']);
    expect(k.filter((x) => x.startsWith('64K/'))).toEqual(['64K/1', '64K/2', '64K/4', '64K/6*', '64K/7*', '64K/8', '64K/16', '64K/32', '64K/64', '64K/128']);
    expect(result.cells.filter((c) => c.adaptive)).toHaveLength(6);
  });

  test("a rerun's capacity meta replaces that row's adaptive cells, and only that row's", () => {
    const rerun = searchMeta('8K', LEVELS, [probe('8K', 48, 900, 32), probe('8K', 56, 1300, 32)]);
    rerun.row.thresholdFailures = ['rerun'];
    const result = fullResult([rerun]);
    expect(keys(result.cells.filter((c) => c.adaptive))).toEqual(['8K/48*', '8K/56*', '64K/6*', '64K/7*']);
    expect(cellAt(result.cells, '8K', 48).slo!.meets).toBe(true);
    expect(result.capacity!.rows.find((r) => r.contextLabel === '8K')!.thresholdFailures).toEqual(['rerun']);
    expect(result.capacity!.rows).toHaveLength(3);
  });

  test('a matrix cell wins over an adaptive cell of the same key, whichever comes last', () => {
    const clash = () => searchMeta('8K', LEVELS, [probe('8K', 32, 900, 32), probe('8K', 40, 900, 32)]);
    const matrixFirst = collectResult([{ kind: 'run', info: sloInfo() }, ...matrix().map((cell) => ({ kind: 'cell' as const, cell })), clash()], { partial: false })!;
    const searchFirst = collectResult([{ kind: 'run', info: sloInfo() }, clash(), ...matrix().map((cell) => ({ kind: 'cell' as const, cell }))], { partial: false })!;
    for (const result of [matrixFirst, searchFirst]) {
      const at32 = result.cells.filter((c) => c.contextLabel === '8K' && c.concurrency === 32);
      expect(at32).toHaveLength(1);
      expect(at32[0]!.adaptive).toBeUndefined();
      expect(at32[0]!.finishedAt).toBe('2026-01-01T00:00:00.000Z');
      expect(result.cells).toHaveLength(41);
      expect(result.incomplete).toBeUndefined();
    }
  });

  test('adaptive cells do not make a finished run incomplete, nor count as not run', () => {
    const notRunProbe = probe('8K', 46, 1000, 32);
    notRunProbe.status = 'not-run';
    notRunProbe.statuses = ['not-run'];
    notRunProbe.notRunReason = 'the server went away';
    delete notRunProbe.figures;
    const meta = searchMeta('32K', LEVELS, [notRunProbe]);
    meta.cells = [notRunProbe];
    const result = fullResult([meta]);
    expect(result.cells.filter((c) => c.adaptive)).toHaveLength(7);
    expect(result.incomplete).toBeUndefined();
    expect(renderMarkdown(result)).not.toMatch(/Incomplete|could not start/);
  });

  test('a finished run missing a matrix cell is incomplete by that cell only', () => {
    const result = collectResult(
      [
        { kind: 'run', info: sloInfo() },
        ...matrix()
          .filter((c) => !(c.contextLabel === '8K' && c.concurrency === 2))
          .map((cell) => ({ kind: 'cell' as const, cell })),
        ...sglangPrefill().map((row) => ({ kind: 'prefill' as const, row })),
        meta8K(),
        meta64K(),
      ],
      { partial: false },
    )!;
    expect(result.incomplete).toEqual({ notRun: [], missing: ['8K/2'] });
    // 39 of 40: the 6 adaptive cells count neither as finished nor toward the total
    expect(renderMarkdown(result)).toContain('**Incomplete: 39 of 40 cells finished, 6 of 6 prefill rows** — 1 was not run.');
  });

  test('a capacity meta carrying the run info is enough for a result', () => {
    const meta = { ...meta8K(), info: sloInfo() };
    const result = collectResult([meta], { partial: true })!;
    expect(result.info.run.slo?.text).toBe('ttftP90<=1000');
    expect(result.capacity!.rows).toHaveLength(1);
    expect(keys(result.cells)).toEqual(['8K/40*', '8K/42*', '8K/44*', '8K/48*']);
  });
});

describe('renderMarkdown with an SLO', () => {
  const md = renderMarkdown(fullResult());
  const lines = md.split('\n');

  test('the section sits between Sustained decode and All measurements', () => {
    const headings = lines.filter((l) => l.startsWith('### '));
    const at = headings.indexOf('### Capacity at your SLO');
    expect(at).toBeGreaterThan(headings.indexOf('### Sustained decode'));
    expect(headings[at + 1]).toBe('### All measurements');
    expect(md).toContain('SLO: `ttftP90<=1000` (TTFT p90 ≤ 1,000 ms).');
  });

  test('one line per row: users, what binds, goodput at capacity, what was searched', () => {
    expect(md).toContain('| Context | Users at once | Binds | Goodput at capacity | Searched |');
    expect(md).toContain('| 8K | 42 | TTFT p90 1,100 ms > 1,000 ms at 44 | 90 % (93 % of tokens), confirming cell | 1✓ 2✓ 4✓ 8✓ 16✓ 32✓ 40✓* 42✓* 44✗* 48✗* 64✗ 128✗ |');
    expect(md).toContain('| 16K | ≥ 16 (every column met it) | — | 95 % (97 % of tokens) | 1✓ 2✓ 4✓ 8✓ 16✓ |');
    expect(md).toContain('| 64K | 6 (unconfirmed) | TTFT p90 1,050 ms > 1,000 ms at 7 | 50 % (60 % of tokens), confirming cell | 1✓ 2✓ 4✓ 6✓* 7✗* 8✗ 16✗ 32✗ 64✗ 128✗ |');
    expect(md).toContain("Searched: each concurrency judged, ✓ met the SLO, ✗ did not; * marks the search's own cells (listed below).");
  });

  test('an unconfirmed capacity gets a warning; a confirmed one does not', () => {
    const warnings = lines.filter((l) => l.startsWith('⚠ ') && l.includes('confirming cell'));
    expect(warnings).toEqual([
      // the miss's detail is escaped as text (> as &gt;)
      '⚠ 64K: the confirming cell at 6 missed the SLO (TTFT p90 1,020 ms &gt; 1,000 ms); the capacity sits at the edge of the SLO, so treat it as an upper bound.',
    ]);
    // a confirming cell without figures to judge (Client-limited) was not a miss, and proves no upper bound
    const blind = fullResult();
    const row = blind.capacity!.rows.find((r) => r.contextLabel === '64K')!;
    row.confirmation!.binding = { constraint: 'unmeasured', label: 'status', detail: "64K/6 is Client-limited: its timings are partly the client's" };
    expect(renderMarkdown(blind).split('\n').filter((l) => l.startsWith('⚠ ') && l.includes('confirming cell'))).toEqual([
      "⚠ 64K: the confirming cell at 6 could not be judged (64K/6 is Client-limited: its timings are partly the client's), so the capacity is not confirmed either way.",
    ]);
  });

  test('a row whose lowest concurrency could not be judged reads "not found" in the Markdown and HTML tables, not 0', () => {
    const blind = fullResult();
    const row = blind.capacity!.rows.find((r) => r.contextLabel === '64K')!;
    const unjudged = { constraint: 'unmeasured' as const, label: 'Client-limited', detail: '64K/1 is Client-limited: its figures may be wrong' };
    Object.assign(row, { capacity: 0, binding: unjudged, bindingConcurrency: 1 });
    delete row.confirmation;
    delete row.goodput;
    expect(renderMarkdown(blind)).toContain('| 64K | not found | 64K/1 is Client-limited: its figures may be wrong at 1 |');
    expect(renderHtml(blind)).toMatch(/<td>64K<\/td><td>not found<\/td>/);
  });

  test("the search's own cells are listed in their own table, not in All measurements", () => {
    expect(md).toContain("The search's own cells, measured like the matrix's:");
    expect(md).toContain('| Context | Requests at once | Status | Meets SLO | Per request tok/s | TTFT | Time between tokens | Goodput |');
    expect(md).toContain('| 8K | 40 | Valid | yes | 49.6 | 900 ms | 20.2 ms | 95 % (97 % of tokens) |');
    expect(md).toContain('| 8K | 44 | Valid | no: TTFT p90 1,100 ms > 1,000 ms | 49.6 | 1,100 ms | 20.2 ms | 50 % (60 % of tokens) |');
    const table = lines.filter((l) => /^\| (8K|64K) \| \d+ \| (Valid|Requests queued)/.test(l)).map((l) => l.split(' | ').slice(0, 2).join(' | '));
    expect(table).toEqual(['| 8K | 40', '| 8K | 42', '| 8K | 44', '| 8K | 48', '| 64K | 6', '| 64K | 7']);
    expect(md).not.toMatch(/\| Sustained decode \| 8K \| (40|42|44|48) \|/);
  });

  test('All measurements has a Goodput column, with a value per measured cell and — for prefill and unmeasured cells', () => {
    const header = lines.find((l) => l.startsWith('| Phase |'))!;
    expect(header.endsWith('| Failed requests | Client active | Goodput |')).toBe(true);
    expect(lines.find((l) => l.startsWith('| Sustained decode | 8K | 16 |'))!.endsWith('| 95 % (97 % of tokens) |')).toBe(true);
    expect(lines.find((l) => l.startsWith('| Sustained decode | 8K | 64 |'))!.endsWith('| 50 % (60 % of tokens) |')).toBe(true);
    expect(lines.find((l) => l.startsWith('| Sustained decode | 8K | 128 |'))!.endsWith('| — |')).toBe(true);
    expect(lines.find((l) => l.startsWith('| Prefill | 8K |'))!.endsWith('| — |')).toBe(true);
    expect(md).toContain("Goodput: the share of the cell's requests that met the SLO's per-request constraints (`ttftP90<=1000`)");
  });

  test('the decode grid and its axes ignore adaptive cells', () => {
    const result = fullResult();
    expect(gridAxes(result)).toEqual({ contexts: [8 * K, 16 * K, 32 * K, 64 * K, 123 * K], levels: LEVELS });
    const grid = decodeGrid(result);
    expect(grid[2]).toBe('| Context | 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128 |');
    expect(grid.slice(4).map((l) => l.split(' | ').length)).toEqual(Array(5).fill(9));
    expect(md).toContain('| Context | 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128 |');
  });

  test('a finished run with every matrix cell has no progress line', () => {
    expect(md).not.toMatch(/\*\*(Incomplete|Partial)/);
  });

  test('a partial page counts matrix cells only', () => {
    const partial = collectResult(
      [{ kind: 'run', info: sloInfo() }, ...matrix().slice(0, 8).map((cell) => ({ kind: 'cell' as const, cell })), meta8K()],
      { partial: true },
    )!;
    const page = renderMarkdown(partial);
    expect(page).toContain('**Partial: 8 of 40 cells finished, 0 of 6 prefill rows**');
    expect(page).toContain('| 8K | 42 |');
  });

  test('capacity threshold and baseline failures are listed with the others', () => {
    const meta = meta8K();
    meta.row.thresholdFailures = ['capacity 8K: 42 users < budget 50; binds: TTFT p90 1,100 ms > 1,000 ms at 44'];
    meta.row.baselineFailures = ['capacity 8K: 42 users vs baseline 60 (−18, allowed −3); binds: TTFT p90 1,100 ms > 1,000 ms at 44'];
    const result = fullResult([meta]);
    result.info.baselinePath = 'base.json';
    const page = renderMarkdown(result).split('\n');
    const thresholds = page.indexOf('### Threshold failures');
    expect(thresholds).toBeGreaterThan(0);
    expect(page[thresholds + 2]).toBe('- capacity 8K: 42 users < budget 50; binds: TTFT p90 1,100 ms > 1,000 ms at 44');
    const regressions = page.indexOf('### Regressions against the baseline (base.json)');
    expect(regressions).toBeGreaterThan(thresholds);
    expect(page[regressions + 2]).toBe('- capacity 8K: 42 users vs baseline 60 (−18, allowed −3); binds: TTFT p90 1,100 ms > 1,000 ms at 44');
  });

  test('with an SLO but no row searched yet: the section says so', () => {
    const base = [{ kind: 'run' as const, info: sloInfo() }, ...matrix().slice(0, 3).map((cell) => ({ kind: 'cell' as const, cell }))];
    expect(renderMarkdown(collectResult(base, { partial: true })!)).toContain('… (searched after the matrix\'s cells)');
    expect(renderMarkdown(collectResult(base, { partial: false })!)).toContain('No context was searched in this run (its capacity tests were filtered out, or none of a row\'s cells ran).');
  });
});

describe('renderMarkdown without an SLO', () => {
  test('no capacity section and no Goodput column', () => {
    const result = collectResult(
      [{ kind: 'run', info: sglangInfo() }, ...sglangCells().map((cell) => ({ kind: 'cell' as const, cell })), ...sglangPrefill().map((row) => ({ kind: 'prefill' as const, row }))],
      { partial: false },
    )!;
    const md = renderMarkdown(result);
    expect(md).not.toContain('Capacity at your SLO');
    expect(md).not.toContain('Goodput');
    expect(md.split('\n').find((l) => l.startsWith('| Phase |'))!.endsWith('| Failed requests | Client active |')).toBe(true);
  });
});

describe('renderStepSummary', () => {
  test('capacity lines per row, under the SLO', () => {
    const summary = renderStepSummary(fullResult());
    const lines = summary.split('\n');
    const at = lines.indexOf('### Capacity at `ttftP90<=1000`');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 2, at + 5)).toEqual([
      '- 8K: 42 users (binds: TTFT p90 1,100 ms > 1,000 ms at 44)',
      '- 16K: ≥ 16 users (every column met the SLO; the largest is 16)',
      '- 64K: 6 users (binds: TTFT p90 1,050 ms > 1,000 ms at 7); unconfirmed: the final cell at 6 missed TTFT p90 1,020 ms > 1,000 ms',
    ]);
    // matrix cells only in the count
    expect(summary).toContain('40 of 40 cells · 30 s windows');
    expect(summary).toContain('| Context | 1 | 2 | 4 | 8 | 16 | 32 | 64 | 128 |');
  });

  test('capacity failures appear with the others', () => {
    const meta = meta8K();
    meta.row.thresholdFailures = ['capacity 8K: 42 users < budget 50'];
    meta.row.baselineFailures = ['capacity 8K: 42 users vs baseline 60 (−18, allowed −3)'];
    const result = fullResult([meta]);
    result.info.baselinePath = 'base.json';
    const lines = renderStepSummary(result).split('\n');
    const regressions = lines.indexOf('### Regressions against the baseline `base.json`');
    expect(lines[regressions + 2]).toBe('- capacity 8K: 42 users vs baseline 60 (−18, allowed −3)');
    const thresholds = lines.indexOf('### Threshold failures');
    expect(lines[thresholds + 2]).toBe('- capacity 8K: 42 users < budget 50');
  });

  test('no SLO, or no row searched: no capacity heading', () => {
    const noRows = collectResult([{ kind: 'run', info: sloInfo() }, ...matrix().map((cell) => ({ kind: 'cell' as const, cell }))], { partial: false })!;
    expect(renderStepSummary(noRows)).not.toContain('### Capacity');
    const noSlo = fullResult();
    delete noSlo.info.run.slo;
    expect(renderStepSummary(noSlo)).not.toContain('### Capacity');
  });
});

describe('progress lines', () => {
  test('capacityLine: the row and the cells searched', () => {
    expect(capacityLine(meta8K().row)).toBe('[speed-matrix] capacity 8K: 42 users (binds: TTFT p90 1,100 ms > 1,000 ms at 44) · 5 cells searched');
    expect(capacityLine(meta16K().row)).toBe('[speed-matrix] capacity 16K: ≥ 16 users (every column met the SLO; the largest is 16) · 0 cells searched');
    const one: CapacityRow = { ...meta16K().row, adaptiveCells: 1 };
    expect(capacityLine(one)).toMatch(/ · 1 cell searched$/);
  });

  test("cellLine: the cell's goodput and its SLO verdict, before the progress", () => {
    const cells = matrix();
    expect(cellLine(cellAt(cells, '8K', 16), 12, 40)).toMatch(/ · goodput 95 % · meets the SLO · 12\/40 done$/);
    expect(cellLine(cellAt(cells, '8K', 64), 13, 40)).toMatch(/ · goodput 50 % · misses the SLO \(TTFT p90 1,458 ms > 1,000 ms\) · 13\/40 done$/);
    const none = cellAt(sglangCells(), '8K', 16);
    expect(cellLine(none, 12, 40)).not.toMatch(/goodput|SLO/);
    const unjudged = { ...cellAt(cells, '8K', 16), goodput: gp(0, 1, 0) };
    unjudged.goodput.requests.judged = 0;
    expect(cellLine(unjudged, 12, 40)).not.toContain('goodput');
    expect(cellLine(unjudged, 12, 40)).toContain('meets the SLO');
  });
  test('the job summary says when no threshold file gated the run, and only then', () => {
    const result = fullResult();
    expect(renderStepSummary(result)).not.toContain('No threshold gate');
    expect(renderStepSummary(result, { missingThresholds: 'thresholds/sim-tiny.json' })).toContain(
      '### No threshold gate\n\nNo threshold file at `thresholds/sim-tiny.json`: no budgets gated this run.',
    );
  });
  test('cellLine: a cell that fails its checks says so on its line, beside its status word', () => {
    const cell = { ...cellAt(sglangCells(), '8K', 16), thresholdFailures: ['8K/16 totalTokensPerSecond 771 < min 900 (14.3% below)'], baselineFailures: ['8K/16 regressed'] };
    expect(cellLine(cell, 12, 40)).toMatch(/^\[speed-matrix\] 8K\/16: Valid · .* · fails 2 checks · 12\/40 done$/);
    expect(cellLine(cellAt(sglangCells(), '8K', 16), 12, 40)).not.toContain('fails');
  });
});

describe('result schema', () => {
  test('a result with capacity rows, adaptive cells, goodput and SLO verdicts is valid', () => {
    const json = JSON.parse(JSON.stringify(fullResult()));
    const outcome = validateResult(json);
    expect(outcome.ok ? [] : outcome.errors).toEqual([]);
    expect(json.capacity.rows).toHaveLength(3);
    expect(json.cells.filter((c: CellResult) => c.adaptive)).toHaveLength(6);
  });

  test('a capacity row with an unknown property is invalid', () => {
    const json = JSON.parse(JSON.stringify(fullResult()));
    json.capacity.rows[1].users = 16;
    const outcome = validateResult(json);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.errors.join('\n')).toMatch(/capacity\.rows\.1/);
  });

  test('a searched entry with an unknown property, or a row without its capacity, is invalid', () => {
    const extra = JSON.parse(JSON.stringify(fullResult()));
    extra.capacity.rows[0].searched[0].cell = '8K/1';
    expect(validateResult(extra).ok).toBe(false);
    const missing = JSON.parse(JSON.stringify(fullResult()));
    delete missing.capacity.rows[0].capacity;
    expect(validateResult(missing).ok).toBe(false);
    const fractional = JSON.parse(JSON.stringify(fullResult()));
    fractional.capacity.rows[0].capacity = 41.5;
    expect(validateResult(fractional).ok).toBe(false);
  });
});
