/**
 * Capacity at the SLO in the baseline comparison: the pure rule (src/judge/compare-capacity.ts), its place
 * in compareResults and the diff page, the `capacity` regression tolerance, and the in-run gate
 * (src/compare/baseline.ts).
 */
import { describe, expect, test } from 'vitest';
import { asBaseline } from '../../src/compare/baseline.js';
import { baselineCapacityFailures, baselineCellFailures } from '../../src/judge/baseline-gate.js';
import { compareCapacity, compareCapacityRow } from '../../src/judge/compare-capacity.js';
import { compareResults } from '../../src/judge/compare.js';
import { renderDiffMarkdown } from '../../src/pages/diff-markdown.js';
import { DEFAULT_TOLERANCES, resolveTolerances } from '../../src/thresholds/tolerances.js';
import { contextLabel } from '../../src/shapes/labels.js';
import type { CapacityRow, CellResult, SloMiss, SpeedMatrixResult } from '../../src/shapes/result.js';
import { resolutionAt } from '../../src/slo/capacity.js';
import { parseSloText } from '../../src/slo/slo.js';
import { K, sglangResult } from '../results/fixtures/sglang-h200.js';

const SLO_TEXT = 'ttftP90<=1000';
const CAP = DEFAULT_TOLERANCES.capacity;

/** a TTFT p90 miss at `at` requests (grows with the load) */
function ttftMiss(at: number): SloMiss {
  const value = 1000 + at * 50;
  return { constraint: 'ttftMs', label: 'TTFT p90', value, bound: 1000, detail: `TTFT p90 ${value.toLocaleString('en-US')} ms > 1,000 ms` };
}

/** A row's capacity record: bound by TTFT at capacity + 1, unless every column met it (atLeast). */
function capRow(context: number, capacity: number, extra: Partial<CapacityRow> = {}): CapacityRow {
  const atLeast = extra.atLeast ?? false;
  const row: CapacityRow = {
    context,
    contextLabel: contextLabel(context),
    capacity,
    atLeast,
    searched: atLeast
      ? [{ concurrency: capacity, meets: true, adaptive: false }]
      : [
          { concurrency: capacity, meets: true, adaptive: true },
          { concurrency: capacity + 1, meets: false, adaptive: true },
        ],
    adaptiveCells: atLeast ? 0 : 2,
    resolution: resolutionAt(capacity),
  };
  if (!atLeast) {
    row.binding = ttftMiss(capacity + 1);
    row.bindingConcurrency = capacity + 1;
  }
  return { ...row, ...extra };
}

/** The reference result judged at an SLO (null: none), with these capacity rows. */
function withCapacity(rows: CapacityRow[], sloText: string | null = SLO_TEXT, result: SpeedMatrixResult = sglangResult()): SpeedMatrixResult {
  if (sloText === null) delete result.info.run.slo;
  else result.info.run.slo = parseSloText(sloText);
  if (rows.length > 0) result.capacity = { rows };
  else delete result.capacity;
  return result;
}

/** An adaptive cell of the search: a copy of a matrix cell at another concurrency, its figures scaled. */
function adaptiveCell(result: SpeedMatrixResult, label: string, from: number, concurrency: number, scale = 1): CellResult {
  const source = result.cells.find((c) => c.contextLabel === label && c.concurrency === from)!;
  const cell = structuredClone(source);
  cell.concurrency = concurrency;
  cell.adaptive = true;
  if (cell.figures) {
    cell.figures.totalTokensPerSecond *= scale;
    cell.figures.perRequestTokensPerSecond! *= scale;
    cell.figures.ttftMs = { ...cell.figures.ttftMs!, median: cell.figures.ttftMs!.median / scale };
  }
  return cell;
}

describe('compareCapacityRow: the rule', () => {
  test('a drop beyond the allowed users regresses, with the readable message', () => {
    const d = compareCapacityRow(capRow(8 * K, 12), capRow(8 * K, 6), CAP);
    expect(d).toMatchObject({ contextLabel: '8K', context: 8 * K, verdict: 'regressed', fails: true, allowed: 1 });
    expect(d.message).toBe('capacity 8K: 6 users vs baseline 12 (−6, allowed −1); binds: TTFT p90 1,350 ms > 1,000 ms at 7');
  });

  test('default tolerance at 12 users: one user either way is noise, two up is an improvement, two down a regression', () => {
    const base = capRow(8 * K, 12);
    const verdict = (next: number) => compareCapacityRow(base, capRow(8 * K, next), CAP).verdict;
    expect(verdict(12)).toBe('within-noise');
    expect(verdict(11)).toBe('within-noise');
    expect(verdict(13)).toBe('within-noise');
    expect(verdict(10)).toBe('regressed');
    expect(verdict(14)).toBe('improved');
    expect(compareCapacityRow(base, capRow(8 * K, 11), CAP).fails).toBe(false);
    expect(compareCapacityRow(base, capRow(8 * K, 14), CAP).fails).toBe(false);
  });

  test("the baseline search's resolution widens the allowed drop", () => {
    // 64 users: 5 % is 3.2, the resolution 4
    const base = capRow(8 * K, 64);
    expect(base.resolution).toBe(4);
    const within = compareCapacityRow(base, capRow(8 * K, 60), CAP);
    expect(within).toMatchObject({ verdict: 'within-noise', allowed: 4, fails: false });
    const regressed = compareCapacityRow(base, capRow(8 * K, 59), CAP);
    expect(regressed.verdict).toBe('regressed');
    expect(regressed.message).toBe('capacity 8K: 59 users vs baseline 64 (−5, allowed −4); binds: TTFT p90 4,000 ms > 1,000 ms at 60');
  });

  test('the relative term wins on a large capacity; a fractional allowance is shown with one decimal', () => {
    // 45 users × 10 % = 4.5 > resolution 3 > absolute 1
    const tol = { relative: 0.1, absolute: 1 };
    const base = capRow(8 * K, 45);
    expect(compareCapacityRow(base, capRow(8 * K, 41), tol)).toMatchObject({ verdict: 'within-noise', allowed: 4.5 });
    const d = compareCapacityRow(base, capRow(8 * K, 40), tol);
    expect(d.verdict).toBe('regressed');
    expect(d.message).toContain('(−5, allowed −4.5)');
  });

  test('the absolute floor wins when it is the largest', () => {
    const tol = { relative: 0, absolute: 3 };
    const base = capRow(16 * K, 12);
    expect(compareCapacityRow(base, capRow(16 * K, 9), tol)).toMatchObject({ verdict: 'within-noise', allowed: 3 });
    expect(compareCapacityRow(base, capRow(16 * K, 8), tol)).toMatchObject({ verdict: 'regressed', fails: true });
    expect(compareCapacityRow(base, capRow(16 * K, 15), tol).verdict).toBe('within-noise');
    expect(compareCapacityRow(base, capRow(16 * K, 16), tol).verdict).toBe('improved');
  });

  test('a new lower bound below the baseline is not comparable, not a regression, and says what to do', () => {
    const d = compareCapacityRow(capRow(8 * K, 12), capRow(8 * K, 8, { atLeast: true }), CAP);
    expect(d).toMatchObject({ verdict: 'not-comparable', fails: false });
    expect(d.message).toBe("the new matrix's largest column (8) is below the baseline's capacity 12; add a larger column to compare");
    // against a baseline that was a lower bound too
    const both = compareCapacityRow(capRow(8 * K, 16, { atLeast: true }), capRow(8 * K, 8, { atLeast: true }), CAP);
    expect(both.verdict).toBe('not-comparable');
    expect(both.message).toContain("below the baseline's capacity ≥ 16");
  });

  test('a new lower bound at or above the baseline is not a regression', () => {
    expect(compareCapacityRow(capRow(8 * K, 12), capRow(8 * K, 12, { atLeast: true }), CAP)).toMatchObject({ verdict: 'within-noise', fails: false });
    expect(compareCapacityRow(capRow(8 * K, 12), capRow(8 * K, 32, { atLeast: true }), CAP).fails).toBe(false);
  });

  test("a baseline lower bound still catches a drop, and is never beaten by an 'improvement'", () => {
    const base = capRow(8 * K, 16, { atLeast: true });
    const d = compareCapacityRow(base, capRow(8 * K, 10), CAP);
    expect(d).toMatchObject({ verdict: 'regressed', fails: true, allowed: 1 });
    expect(d.message).toBe('capacity 8K: 10 users vs baseline ≥ 16 (−6, allowed −1); binds: TTFT p90 1,550 ms > 1,000 ms at 11');
    // the baseline never measured its limit: a higher capacity now is not known to be better
    expect(compareCapacityRow(base, capRow(8 * K, 40), CAP).verdict).toBe('within-noise');
  });

  test('the message names a KV-capacity binding, and none when the new row has no binding', () => {
    const kv: SloMiss = { constraint: 'kvCapacity', label: 'KV capacity', detail: '7 would not fit: 7 × (8,192 + max output) = 86,016 tokens > KV capacity 80,000' };
    const d = compareCapacityRow(capRow(8 * K, 12), capRow(8 * K, 6, { binding: kv, bindingConcurrency: 7 }), CAP);
    expect(d.message).toBe('capacity 8K: 6 users vs baseline 12 (−6, allowed −1); binds: KV capacity: 7 would not fit: 7 × (8,192 + max output) = 86,016 tokens > KV capacity 80,000');
    const plain = capRow(8 * K, 6);
    delete plain.binding;
    delete plain.bindingConcurrency;
    expect(compareCapacityRow(capRow(8 * K, 12), plain, CAP).message).toBe('capacity 8K: 6 users vs baseline 12 (−6, allowed −1)');
  });

  test('a capacity of 0 (not even one request) against 3 is a regression', () => {
    expect(compareCapacityRow(capRow(8 * K, 3), capRow(8 * K, 0), CAP)).toMatchObject({ verdict: 'regressed', fails: true });
  });

  test('a row on one side only is reported, never gated', () => {
    const gone = compareCapacityRow(capRow(8 * K, 12), undefined, CAP);
    expect(gone).toMatchObject({ verdict: 'not-comparable', fails: false, message: 'not searched in the new run', contextLabel: '8K' });
    expect(gone.next).toBeUndefined();
    expect(gone.allowed).toBeUndefined();
    const fresh = compareCapacityRow(undefined, capRow(16 * K, 12), CAP);
    expect(fresh).toMatchObject({ verdict: 'not-comparable', fails: false, message: 'not in the baseline', contextLabel: '16K' });
    expect(fresh.base).toBeUndefined();
  });
});

describe('compareCapacity', () => {
  test('no rows on either side: nothing to compare, no note', () => {
    expect(compareCapacity(sglangResult(), sglangResult(), CAP)).toEqual({ rows: [] });
    expect(compareCapacity(withCapacity([]), withCapacity([]), CAP)).toEqual({ rows: [] });
  });

  test('the union of both sides, by context', () => {
    const base = withCapacity([capRow(32 * K, 8), capRow(8 * K, 12)]);
    const next = withCapacity([capRow(16 * K, 20), capRow(8 * K, 12)]);
    const { rows, note } = compareCapacity(base, next, CAP);
    expect(note).toBeUndefined();
    expect(rows.map((r) => [r.contextLabel, r.verdict])).toEqual([
      ['8K', 'within-noise'],
      ['16K', 'not-comparable'],
      ['32K', 'not-comparable'],
    ]);
  });

  test('capacities judged at different SLOs are not compared, with a note naming both', () => {
    const base = withCapacity([capRow(8 * K, 12)], 'ttftP90<=2000');
    const next = withCapacity([capRow(8 * K, 2)], SLO_TEXT);
    expect(compareCapacity(base, next, CAP)).toEqual({ rows: [], note: "capacity not compared: the baseline's SLO is ttftP90<=2000, the new run's ttftP90<=1000" });
    const none = compareCapacity(withCapacity([], null), next, CAP);
    expect(none).toEqual({ rows: [], note: "capacity not compared: the baseline's SLO is none, the new run's ttftP90<=1000" });
  });
});

describe('compareResults with capacity', () => {
  test('an unchanged rerun: capacity within noise, no failure', () => {
    const base = withCapacity([capRow(8 * K, 12), capRow(16 * K, 20)]);
    const c = compareResults(base, withCapacity([capRow(8 * K, 12), capRow(16 * K, 20)]), DEFAULT_TOLERANCES);
    expect(c.failures).toEqual([]);
    expect(c.capacity.map((d) => d.verdict)).toEqual(['within-noise', 'within-noise']);
    expect(c.capacityNote).toBeUndefined();
    expect('capacityNote' in c).toBe(false);
  });

  test('a capacity drop fails the comparison; its message comes after the figures', () => {
    const base = withCapacity([capRow(8 * K, 12), capRow(16 * K, 20)]);
    const next = withCapacity([capRow(8 * K, 6), capRow(16 * K, 20)]);
    next.prefill[0]!.figures!.promptTokensPerSecond *= 0.8;
    const c = compareResults(base, next, DEFAULT_TOLERANCES);
    expect(c.failures).toHaveLength(2);
    expect(c.failures[0]).toMatch(/^prefill 8K promptTokensPerSecond/);
    expect(c.failures[1]).toBe('capacity 8K: 6 users vs baseline 12 (−6, allowed −1); binds: TTFT p90 1,350 ms > 1,000 ms at 7');
    expect(c.capacity.find((d) => d.contextLabel === '8K')).toMatchObject({ verdict: 'regressed', fails: true });
    // capacity verdicts are not figure verdicts
    expect(c.counts.regressed).toBe(1);
  });

  test('the capacity tolerance of the resolved tolerances is used', () => {
    const base = withCapacity([capRow(8 * K, 12)]);
    const next = withCapacity([capRow(8 * K, 6)]);
    const loose = resolveTolerances({ capacity: 0.5 });
    expect(compareResults(base, next, loose).failures).toEqual([]);
    expect(compareResults(base, next, loose).capacity[0]).toMatchObject({ verdict: 'within-noise', allowed: 6 });
  });

  test('different SLOs: a note, no capacity rows, no capacity failure', () => {
    const base = withCapacity([capRow(8 * K, 12)], 'ttftP90<=2000');
    const next = withCapacity([capRow(8 * K, 1)]);
    const c = compareResults(base, next, DEFAULT_TOLERANCES);
    expect(c.capacity).toEqual([]);
    expect(c.capacityNote).toBe("capacity not compared: the baseline's SLO is ttftP90<=2000, the new run's ttftP90<=1000");
    expect(c.failures).toEqual([]);
  });

  test("adaptive cells are left out of the cell comparison (capacity compares them), even when they differ wildly", () => {
    const base = withCapacity([capRow(8 * K, 40)]);
    const next = withCapacity([capRow(8 * K, 40)]);
    base.cells.push(adaptiveCell(base, '8K', 32, 40), adaptiveCell(base, '8K', 32, 48));
    // the new run's search measured other concurrencies, and 8K/40 much slower
    next.cells.push(adaptiveCell(next, '8K', 32, 40, 0.3), adaptiveCell(next, '8K', 32, 44, 0.3));
    const plain = compareResults(sglangResult(), sglangResult(), DEFAULT_TOLERANCES);
    const c = compareResults(base, next, DEFAULT_TOLERANCES);
    expect(c.failures).toEqual([]);
    expect(c.cells.map((r) => r.key)).toEqual(plain.cells.map((r) => r.key));
    expect(c.cells.some((r) => ['8K/40', '8K/44', '8K/48'].includes(r.key))).toBe(false);
    expect(c.counts).toEqual(plain.counts);
  });

  test('an adaptive cell never shadows the matrix cell of the same key in the comparison', () => {
    const base = withCapacity([capRow(8 * K, 40)]);
    const next = withCapacity([capRow(8 * K, 40)]);
    // a (malformed) adaptive duplicate of 8K/16, listed after the matrix cell, at a third of its speed
    next.cells.push(adaptiveCell(next, '8K', 16, 16, 0.3));
    expect(compareResults(base, next, DEFAULT_TOLERANCES).failures).toEqual([]);
  });
});

describe('diff page: Capacity at the SLO', () => {
  test('a table per context with the verdict, between the regressions and the grid', () => {
    const base = withCapacity([capRow(8 * K, 12), capRow(16 * K, 20), capRow(32 * K, 8, { atLeast: true })]);
    const next = withCapacity([capRow(8 * K, 6), capRow(16 * K, 23), capRow(32 * K, 8, { atLeast: true }), capRow(64 * K, 4)]);
    const comparison = compareResults(base, next, DEFAULT_TOLERANCES);
    const md = renderDiffMarkdown({ base: base.info, next: next.info, comparison });
    const headings = md.split('\n').filter((l) => l.startsWith('#'));
    expect(headings).toEqual(['# Speed matrix comparison', '## Regressions', '## Capacity at the SLO', '## Total tok/s', '## All compared figures']);
    expect(md).toContain('**Fail: 1 regression** · 0 regressed');
    expect(md).toContain('- capacity 8K: 6 users vs baseline 12 (−6, allowed −1); binds: TTFT p90 1,350 ms > 1,000 ms at 7');
    expect(md).toContain('Users at once per context at `ttftP90<=1000`, baseline → new.');
    expect(md).toContain('| Context | Baseline | New | Allowed drop | Binds (new) | Verdict |');
    expect(md).toContain('| 8K | 12 | 6 | 1 | TTFT p90 1,350 ms > 1,000 ms at 7 | **Regressed** |');
    expect(md).toContain('| 16K | 20 | 23 | 1 | TTFT p90 2,200 ms > 1,000 ms at 24 | Improved |');
    // a lower bound shows "≥" and no binding
    expect(md).toContain('| 32K | ≥ 8 | ≥ 8 | 1 | — | Within noise |');
    expect(md).toContain('| 64K | — | 4 | — | TTFT p90 1,250 ms > 1,000 ms at 5 | Not compared: not in the baseline |');
  });

  test('a fractional allowance shows one decimal', () => {
    const base = withCapacity([capRow(8 * K, 45)]);
    const next = withCapacity([capRow(8 * K, 45)]);
    const comparison = compareResults(base, next, resolveTolerances({ capacity: 0.1 }));
    const md = renderDiffMarkdown({ base: base.info, next: next.info, comparison });
    expect(md).toContain('| 8K | 45 | 45 | 4.5 |');
  });

  test('different SLOs: the section holds only the note', () => {
    const base = withCapacity([capRow(8 * K, 12)], 'ttftP90<=2000');
    const next = withCapacity([capRow(8 * K, 6)]);
    const md = renderDiffMarkdown({ base: base.info, next: next.info, comparison: compareResults(base, next, DEFAULT_TOLERANCES) });
    const lines = md.split('\n');
    const at = lines.indexOf('## Capacity at the SLO');
    expect(at).toBeGreaterThan(0);
    // the note is text from the results, escaped (< as &lt;)
    expect(lines[at + 2]).toBe("capacity not compared: the baseline's SLO is ttftP90&lt;=2000, the new run's ttftP90&lt;=1000");
    expect(lines[at + 4]).toBe('## Total tok/s');
    expect(md).not.toContain('| Context | Baseline | New | Allowed drop');
    expect(md).toContain('**Pass**');
  });

  test('no capacity on either side: no section', () => {
    const md = renderDiffMarkdown({ base: sglangResult().info, next: sglangResult().info, comparison: compareResults(sglangResult(), sglangResult(), DEFAULT_TOLERANCES) });
    expect(md).not.toContain('Capacity');
  });
});

describe('resolveTolerances: capacity', () => {
  test('default: 5 % and at least 1 user', () => {
    expect(resolveTolerances().capacity).toEqual({ relative: 0.05, absolute: 1 });
    expect(resolveTolerances({ cells: { ttftMs: 0.5 } }).capacity).toEqual({ relative: 0.05, absolute: 1 });
  });

  test('a number replaces the relative tolerance and keeps the 1-user floor; an object may set both', () => {
    expect(resolveTolerances({ capacity: 0.1 }).capacity).toEqual({ relative: 0.1, absolute: 1 });
    expect(resolveTolerances({ capacity: { relative: 0.2 } }).capacity).toEqual({ relative: 0.2, absolute: 1 });
    expect(resolveTolerances({ capacity: { relative: 0, absolute: 4 } }).capacity).toEqual({ relative: 0, absolute: 4 });
  });

  test('the capacity override leaves the figures alone, and does not change the defaults', () => {
    const t = resolveTolerances({ capacity: 0.3 });
    expect(t.cells).toEqual(DEFAULT_TOLERANCES.cells);
    expect(t.prefill).toEqual(DEFAULT_TOLERANCES.prefill);
    expect(DEFAULT_TOLERANCES.capacity).toEqual({ relative: 0.05, absolute: 1 });
  });
});

describe('in-run gate: baselineCapacityFailures', () => {
  const baselineResult = () => {
    const r = withCapacity([capRow(8 * K, 12), capRow(16 * K, 20)]);
    r.cells.push(adaptiveCell(r, '8K', 8, 12), adaptiveCell(r, '8K', 16, 16, 2));
    return r;
  };

  test('a row that dropped beyond the allowed users fails with the message', () => {
    const baseline = asBaseline('base.json', baselineResult());
    expect(baselineCapacityFailures(baseline, capRow(8 * K, 6), SLO_TEXT)).toEqual([
      'capacity 8K: 6 users vs baseline 12 (−6, allowed −1); binds: TTFT p90 1,350 ms > 1,000 ms at 7',
    ]);
    expect(baselineCapacityFailures(baseline, capRow(8 * K, 11), SLO_TEXT)).toEqual([]);
    expect(baselineCapacityFailures(baseline, capRow(16 * K, 25), SLO_TEXT)).toEqual([]);
  });

  test('nothing when the SLO text differs, the row is not in the baseline, or the baseline has no capacity', () => {
    const baseline = asBaseline('base.json', baselineResult());
    expect(baselineCapacityFailures(baseline, capRow(8 * K, 1), 'ttftP90<=2000')).toEqual([]);
    expect(baselineCapacityFailures(baseline, capRow(8 * K, 1), undefined)).toEqual([]);
    expect(baselineCapacityFailures(baseline, capRow(32 * K, 1), SLO_TEXT)).toEqual([]);
    expect(baselineCapacityFailures(asBaseline('base.json', withCapacity([])), capRow(8 * K, 1), SLO_TEXT)).toEqual([]);
    // a baseline without an SLO and a run without one: nothing to compare
    expect(baselineCapacityFailures(asBaseline('base.json', sglangResult()), capRow(8 * K, 1), undefined)).toEqual([]);
  });

  test("the threshold file's capacity tolerance applies", () => {
    const loose = asBaseline('base.json', baselineResult(), { capacity: { relative: 0.5, absolute: 1 } });
    expect(loose.tolerances.capacity).toEqual({ relative: 0.5, absolute: 1 });
    expect(baselineCapacityFailures(loose, capRow(8 * K, 6), SLO_TEXT)).toEqual([]);
    expect(baselineCapacityFailures(loose, capRow(8 * K, 5), SLO_TEXT)).toHaveLength(1);
  });

  test("the baseline's adaptive cells are not baseline cells", () => {
    const result = baselineResult();
    const baseline = asBaseline('base.json', result);
    expect(baseline.cells.size).toBe(40);
    expect(baseline.cells.has('8K/12')).toBe(false);
    // the matrix cell 8K/16 is kept, not the adaptive copy listed after it
    expect(baseline.cells.get('8K/16')).toBe(result.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 16 && !c.adaptive));
    // a cell of the new run at an adaptive key of the baseline is not gated
    const slow = adaptiveCell(result, '8K', 8, 12, 0.2);
    delete slow.adaptive;
    expect(baselineCellFailures(baseline, slow)).toEqual([]);
    // and the matrix cell is compared with the matrix cell (the adaptive copy is twice as fast)
    const same = structuredClone(result.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 16 && !c.adaptive)!);
    expect(baselineCellFailures(baseline, same)).toEqual([]);
  });
});
