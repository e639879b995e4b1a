import { describe, expect, test } from 'vitest';
import { compareFigure, compareResults, formatChange, matrixDifferences, mergeDifferences, relativeChange } from '../../src/judge/compare.js';
import { renderDiffMarkdown } from '../../src/pages/diff-markdown.js';
import { DEFAULT_TOLERANCES, resolveTolerances } from '../../src/thresholds/tolerances.js';
import type { CellResult, SpeedMatrixResult } from '../../src/shapes/result.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';
import { rateResult } from '../results/fixtures/rate-cells.js';
import { asBaseline } from '../../src/compare/baseline.js';
import { judgeCell, type CellRules } from '../../src/judge/judge-cell.js';
import { rateScheduleDifference } from '../../src/judge/compare-rate.js';

const tol = (relative: number, absolute = 0) => ({ relative, absolute });

/** The fixture with step time +20 %: tok/s ÷ 1.2, latencies × 1.2, in the cells named. */
function slower(result: SpeedMatrixResult, keys: string[]): SpeedMatrixResult {
  const copy = structuredClone(result);
  for (const c of copy.cells) {
    if (!keys.includes(`${c.contextLabel}/${c.concurrency}`) || !c.figures) continue;
    c.figures.totalTokensPerSecond /= 1.2;
    c.figures.perRequestTokensPerSecond! /= 1.2;
    c.figures.timeBetweenTokensMs!.median *= 1.2;
    c.figures.ttftMs!.median *= 1.2;
  }
  return copy;
}

describe('compareFigure: the rule', () => {
  const base = { label: '8K/16', spread: 0, nextPresent: true };
  test('tok/s down beyond tolerance regresses, with a readable message', () => {
    const d = compareFigure({ ...base, figure: 'totalTokensPerSecond', base: 857.3, next: 690.1, tolerance: tol(0.05) });
    expect(d.verdict).toBe('regressed');
    expect(d.fails).toBe(true);
    expect(d.change).toBeCloseTo(-0.19503, 4);
    expect(d.message).toBe('8K/16 totalTokensPerSecond 690.1 vs baseline 857.3: −19.5% (tolerance 5%)');
  });
  test('tok/s up beyond tolerance improves; inside it is within noise', () => {
    expect(compareFigure({ ...base, figure: 'totalTokensPerSecond', base: 100, next: 106, tolerance: tol(0.05) }).verdict).toBe('improved');
    expect(compareFigure({ ...base, figure: 'totalTokensPerSecond', base: 100, next: 95.5, tolerance: tol(0.05) }).verdict).toBe('within-noise');
    expect(compareFigure({ ...base, figure: 'totalTokensPerSecond', base: 100, next: 104.9, tolerance: tol(0.05) }).verdict).toBe('within-noise');
  });
  test('latencies: up is worse, down is better', () => {
    expect(compareFigure({ ...base, figure: 'ttftMs', base: 400, next: 480, tolerance: tol(0.1) }).verdict).toBe('regressed');
    expect(compareFigure({ ...base, figure: 'ttftMs', base: 400, next: 320, tolerance: tol(0.1) }).verdict).toBe('improved');
    expect(compareFigure({ ...base, figure: 'timeBetweenTokensMs', base: 10, next: 10.4, tolerance: tol(0.05) }).verdict).toBe('within-noise');
  });
  test('the absolute floor keeps a small latency change within noise', () => {
    // +30 % but only 3 ms: not a regression with a 5 ms floor
    expect(compareFigure({ ...base, figure: 'ttftMs', base: 10, next: 13, tolerance: tol(0.1, 5) }).verdict).toBe('within-noise');
    const d = compareFigure({ ...base, figure: 'ttftMs', base: 10, next: 16, tolerance: tol(0.1, 5) });
    expect(d.verdict).toBe('regressed');
    expect(d.message).toBe('8K/16 ttftMs 16.0 vs baseline 10.0: +60.0% (tolerance 10%, at least 5 ms)');
  });
  test('the spread of repeats widens the tolerance', () => {
    const input = { ...base, figure: 'totalTokensPerSecond', base: 100, next: 92, tolerance: tol(0.05) };
    expect(compareFigure({ ...input, spread: 0 }).verdict).toBe('regressed');
    expect(compareFigure({ ...input, spread: 0.04 }).verdict).toBe('within-noise');
    const d = compareFigure({ ...input, spread: 0.02 });
    expect(d.verdict).toBe('regressed');
    expect(d.message).toContain('(tolerance 5% + spread 2%)');
  });
  test('missing: gated only when the baseline had the figure and the new cell lacks it', () => {
    const gone = compareFigure({ ...base, figure: 'ttftMs', base: 100, next: undefined, tolerance: tol(0.1) });
    expect(gone).toMatchObject({ verdict: 'missing', fails: true, message: '8K/16 ttftMs missing vs baseline 100.0' });
    expect(compareFigure({ ...base, nextPresent: false, figure: 'ttftMs', base: 100, next: undefined, tolerance: tol(0.1) }).fails).toBe(false);
    expect(compareFigure({ ...base, figure: 'ttftMs', base: undefined, next: 100, tolerance: tol(0.1) }).fails).toBe(false);
  });
  test('relative change and its format', () => {
    expect(relativeChange(0, 0)).toBe(0);
    expect(relativeChange(0, 1)).toBe(Number.POSITIVE_INFINITY);
    expect(formatChange(-0.195)).toBe('−19.5%');
    expect(formatChange(0.042)).toBe('+4.2%');
    expect(formatChange(0)).toBe('±0.0%');
  });
});

describe('compareResults on the reference matrix', () => {
  const base = sglangResult();
  test('an unchanged rerun has no regression', () => {
    const c = compareResults(base, sglangResult(), DEFAULT_TOLERANCES);
    expect(c.failures).toEqual([]);
    expect(c.counts.regressed).toBe(0);
    expect(c.counts.improved).toBe(0);
    expect(c.counts['within-noise']).toBeGreaterThan(100);
    // over-capacity on both sides: no figures compared, status kept
    const over = c.cells.find((r) => r.key === '123K/128')!;
    expect(over).toMatchObject({ baseStatus: 'over-capacity', nextStatus: 'over-capacity', figures: [] });
  });
  test('step time +20 % in two cells regresses exactly those cells', () => {
    const c = compareResults(base, slower(base, ['8K/16', '32K/4']), DEFAULT_TOLERANCES);
    const failing = new Set(c.cells.filter((r) => r.figures.some((f) => f.fails)).map((r) => r.key));
    expect([...failing]).toEqual(['8K/16', '32K/4']);
    expect(c.failures).toContain('8K/16 totalTokensPerSecond 714.4 vs baseline 857.3: −16.7% (tolerance 5%)');
    expect(c.failures).toContain('8K/16 timeBetweenTokensMs 22.3 vs baseline 18.6: +20.0% (tolerance 5%, at least 0.5 ms)');
    expect(c.counts.regressed).toBe(8);
  });
  test('prefill rows are compared too', () => {
    const next = structuredClone(base);
    next.prefill[0]!.figures!.promptTokensPerSecond *= 0.8;
    const c = compareResults(base, next, DEFAULT_TOLERANCES);
    expect(c.failures).toHaveLength(1);
    expect(c.failures[0]).toMatch(/^prefill 8K promptTokensPerSecond [\d.]+ vs baseline [\d.]+: −20\.0% \(tolerance 10%\)$/);
  });
  test("the spread of a prefill row's repeats widens its tolerance", () => {
    const next = structuredClone(base);
    next.prefill[0]!.figures!.promptTokensPerSecond *= 0.85;
    expect(compareResults(base, next, DEFAULT_TOLERANCES).failures).toHaveLength(1);
    // repeats 10 % apart either side of the median: allowed = 10 % + 10 %
    const v = next.prefill[0]!.figures!.promptTokensPerSecond;
    next.prefill[0]!.repeats = { count: 3, failed: 0, spread: { promptTokensPerSecond: { values: [v * 0.9, v, v * 1.1], min: v * 0.9, max: v * 1.1, relativeHalfRange: 0.1 } } };
    const c = compareResults(base, next, DEFAULT_TOLERANCES);
    expect(c.failures).toHaveLength(0);
    expect(c.prefill[0]!.figures.find((x) => x.figure === 'promptTokensPerSecond')).toMatchObject({ verdict: 'within-noise', spread: 0.1 });
  });
  test('a cell that turned Over capacity fails as missing, with one line naming its status', () => {
    const next = structuredClone(base);
    const cell = next.cells.find((c) => c.contextLabel === '8K' && c.concurrency === 16)!;
    const over: CellResult = { ...cell, status: 'over-capacity', statuses: ['over-capacity'], evidence: {} };
    delete over.figures;
    next.cells[next.cells.indexOf(cell)] = over;
    const c = compareResults(base, next, DEFAULT_TOLERANCES);
    expect(c.failures).toEqual(['8K/16 is over-capacity now where the baseline measured it: its figures are missing']);
    expect(c.counts.missing).toBe(4);
    // the in-run gate gives the same line for the Over capacity cell (judge-cell.ts)
    const judged = judgeCell('8K/16', over, { baseline: asBaseline('b.json', base), maxOutputTokens: 256 } as unknown as CellRules);
    expect(judged.baselineFailures).toEqual(['8K/16 is over-capacity now where the baseline measured it: its figures are missing']);
    expect(judgeCell('8K/16', over, { maxOutputTokens: 256 } as unknown as CellRules).baselineFailures).toBeUndefined();
  });
  test('threshold-file tolerances override the defaults per figure', () => {
    const loose = resolveTolerances({ cells: { totalTokensPerSecond: 0.25, perRequestTokensPerSecond: 0.25, timeBetweenTokensMs: { relative: 0.25 }, ttftMs: 0.25 } });
    expect(loose.cells.timeBetweenTokensMs).toEqual({ relative: 0.25, absolute: 0.5 });
    expect(loose.prefill).toEqual(DEFAULT_TOLERANCES.prefill);
    expect(compareResults(base, slower(base, ['8K/16']), loose).failures).toEqual([]);
  });
});

describe('matrixDifferences', () => {
  test('names each setting that differs', () => {
    const a = sglangResult().info;
    const b = structuredClone(a);
    b.run.contexts = [0, ...b.run.contexts];
    b.run.maxOutputTokens = 256;
    b.run.windowS = 10;
    expect(matrixDifferences(a, b)).toEqual([
      'contexts: baseline 8K, 16K, 32K, 64K, 123K, new 0, 8K, 16K, 32K, 64K, 123K',
      'maxOutputTokens: baseline 4096, new 256',
      'window (windowS): baseline 30 s, new 10 s',
    ]);
    // within a run, only what changes a cell's own measurement
    expect(matrixDifferences(a, b, 'cell')).toEqual(['maxOutputTokens: baseline 4096, new 256', 'window (windowS): baseline 30 s, new 10 s']);
    expect(matrixDifferences(a, structuredClone(a))).toEqual([]);
  });

  test('cells of different workloads are not compared, and a file counts by its content; no workload is the synthetic one', () => {
    const a = sglangResult().info;
    const b = structuredClone(a);
    b.run.workload = { kind: 'sharedPrefix', text: 'sharedPrefix:groups=4,prefix=3072,suffix=1024,seed=1' };
    expect(matrixDifferences(a, b, 'cell')).toEqual(['workload: baseline synthetic, new sharedPrefix:groups=4,prefix=3072,suffix=1024,seed=1']);
    const file = (sha: string) => ({ kind: 'file' as const, text: 'file:/data/p.jsonl,seed=1', file: { name: 'p.jsonl', sha256: sha, lines: 3, used: 3, skipped: 0 } });
    a.run.workload = file('a'.repeat(64));
    b.run.workload = file('b'.repeat(64));
    expect(matrixDifferences(a, b, 'cell')).toEqual([`workload file (sha256): baseline ${'a'.repeat(64)}, new ${'b'.repeat(64)}`]);
    b.run.workload = { kind: 'synthetic', text: 'synthetic' };
    delete a.run.workload;
    expect(matrixDifferences(a, b)).toEqual([]);
  });
});

describe('mergeDifferences (the shards of one page)', () => {
  test('shards of one run share a page whatever their rows, start, plan and URL; a workload, a setting or a server that differs is named once', () => {
    const a = sglangResult().info;
    const b = structuredClone(a);
    // a shard's own: its rows, its plan, its start, its server's URL
    b.run.contexts = [8192];
    b.plannedCells = ['8K/1'];
    b.startedAt = '2026-12-01T10:00:00.000Z';
    b.targetUrl = 'http://127.0.0.1:9999';
    expect(mergeDifferences([a, b])).toEqual([]);
    expect(mergeDifferences([a])).toEqual([]);
    expect(mergeDifferences([])).toEqual([]);
    const c = structuredClone(b);
    c.run.workload = { kind: 'sharedPrefix', text: 'sharedPrefix:groups=4,prefix=3072,suffix=1024,seed=1' };
    c.run.maxOutputTokens = 256;
    c.engine.version = '0.0.1';
    const d = structuredClone(c);
    const out = mergeDifferences([a, b, c, d]);
    expect(out).toHaveLength(3);
    expect(out[0]).toBe(`maxOutputTokens: the run started ${a.startedAt} 4096, the run started 2026-12-01T10:00:00.000Z 256`);
    expect(out[1]).toMatch(/^workload: the run started .* synthetic, the run started .* sharedPrefix:groups=4/);
    expect(out[2]).toMatch(/^engine version: the run started .* 0\.0\.1$/);
    // a version one shard found and another did not is unknown there, not different
    const e = structuredClone(b);
    delete e.engine.version;
    expect(mergeDifferences([a, e])).toEqual([]);
    // the open-loop settings a rate cell was measured with
    const f = structuredClone(b);
    f.run.rates = { rates: [2], arrival: 'poisson', seed: 1, rampS: 0, maxInFlight: 64 };
    expect(mergeDifferences([a, f])).toEqual([expect.stringMatching(/^rates, SLO or repeats: .*"maxInFlight":64/)]);
  });
});

describe('diff page', () => {
  test('shows the verdict, the regressions, the grid and every figure', () => {
    const base = sglangResult();
    const next = slower(base, ['8K/16']);
    const comparison = compareResults(base, next, DEFAULT_TOLERANCES);
    const md = renderDiffMarkdown({ base: base.info, next: next.info, comparison, baseLabel: 'base.json', nextLabel: 'new.json' });
    const headings = md.split('\n').filter((l) => l.startsWith('#'));
    expect(headings).toEqual(['# Speed matrix comparison', '## Regressions', '## Total tok/s', '## All compared figures']);
    expect(md).toContain('**Fail: 4 regressions** · 4 regressed · 0 improved');
    expect(md).toContain('- 8K/16 totalTokensPerSecond 714.4 vs baseline 857.3: −16.7% (tolerance 5%)');
    expect(md).toContain('| 8K | 59.3 → 59.3 (±0.0%) |');
    expect(md).toContain('**857.3 → 714.4 (−16.7%) Regressed**');
    expect(md).toContain('| Sustained decode | 8K | 16 | totalTokensPerSecond | 857.3 | 714.4 | −16.7% | tolerance 5% | **Regressed** |');
    const pass = renderDiffMarkdown({ base: base.info, next: base.info, comparison: compareResults(base, sglangResult(), DEFAULT_TOLERANCES) });
    expect(pass).toContain('**Pass** · 0 regressed');
    expect(pass).not.toContain('## Regressions');
  });

  test("a cell whose status changed says so beside its change: a baseline cell with failed requests is not like for like", () => {
    // a real llama.cpp server killed mid-cell made the baseline's 8K/2 Errors at a fifth of its rate, and its 8K/4 Not run
    const base = sglangResult();
    const broken = base.cells.find((c) => c.context === 8 * 1024 && c.concurrency === 2)!;
    broken.status = 'errors';
    broken.statuses = ['errors'];
    broken.evidence = { ...broken.evidence, errors: { count: 32, byCode: { socket: 32 } } };
    broken.figures!.totalTokensPerSecond /= 5;
    const gone = base.cells.find((c) => c.context === 8 * 1024 && c.concurrency === 4)!;
    gone.status = 'not-run';
    gone.statuses = ['not-run'];
    delete gone.figures;
    const next = sglangResult();
    const md = renderDiffMarkdown({ base: base.info, next: next.info, comparison: compareResults(base, next, DEFAULT_TOLERANCES) });
    expect(md).toContain('| 22.8 → 114.2 (+400.0%) Improved · Errors (32) → Valid | — → 221.9 · Missing · Not run → Valid |');
    expect(md).toContain('- 8K/2 totalTokensPerSecond 114.2 vs baseline 22.8: +400.0% (Errors (32) → Valid)');
    // unchanged statuses add nothing
    expect(md).toContain('| 8K | 59.3 → 59.3 (±0.0%) | 22.8');
    // the other way round, a regression: said under Regressions too
    const back = renderDiffMarkdown({ base: next.info, next: base.info, comparison: compareResults(next, base, DEFAULT_TOLERANCES) });
    expect(back).toContain('- 8K/2: its status changed too, Valid → Errors (32)');
  });

  test('a status beside the first one counts: Requests queued with and without failed requests differ', () => {
    const base = sglangResult();
    const next = sglangResult();
    const queued = (r: SpeedMatrixResult) => r.cells.find((c) => c.status === 'requests-queued')!;
    const cell = queued(next);
    cell.statuses = ['requests-queued', 'errors'];
    cell.evidence = { ...cell.evidence, errors: { count: 3, byCode: { stall: 3 } } };
    const md = renderDiffMarkdown({ base: base.info, next: next.info, comparison: compareResults(base, next, DEFAULT_TOLERANCES) });
    expect(md).toContain('(±0.0%) · Requests queued → Requests queued, Errors (3) |');
  });
});

describe('open-loop rate cells in a comparison', () => {
  /** the fixture's 8K@1 cell with TTFT from the schedule (median, p99) and the achieved rate changed */
  function changed(ttftFactor: number, completedRate?: number, arrival?: string): SpeedMatrixResult {
    return rateResult((cells) =>
      cells.map((c) => {
        if (c.rate !== 1 || c.contextLabel !== '8K') return c;
        const copy = structuredClone(c);
        const f = copy.figures!;
        f.ttftFromScheduleMs = { ...f.ttftFromScheduleMs!, median: f.ttftFromScheduleMs!.median * ttftFactor, p99: f.ttftFromScheduleMs!.p99 * ttftFactor };
        if (completedRate !== undefined) f.completedRate = completedRate;
        if (arrival !== undefined) copy.arrival = arrival;
        return copy;
      }),
    );
  }

  test('the same run against itself: every planned rate cell is a row, nothing fails', () => {
    const c = compareResults(rateResult(), rateResult(), DEFAULT_TOLERANCES);
    expect(c.rates.map((r) => r.key)).toEqual(['8K@0.5', '8K@1', '8K@2', '8K@4', '32K@0.5', '32K@1', '32K@2', '32K@4', '64K@0.5']);
    expect(c.failures).toEqual([]);
    const measured = c.rates.find((r) => r.key === '8K@1')!;
    expect(measured.figures.map((f) => f.figure)).toEqual(['completedRate', 'totalTokensPerSecond', 'ttftFromScheduleMs', 'ttftFromScheduleP99Ms', 'tbtMs']);
    expect(measured.figures.every((f) => f.verdict === 'within-noise')).toBe(true);
    // Over capacity and Not run on both sides: no figure, the statuses shown
    expect(c.rates.find((r) => r.key === '32K@4')!.figures).toEqual([]);
  });

  test('TTFT from the schedule up beyond its tolerance regresses, each with its own figure and tolerance', () => {
    const c = compareResults(rateResult(), changed(1.5), DEFAULT_TOLERANCES);
    expect(c.failures).toEqual([
      '8K@1/s ttftFromScheduleMs 480.0 vs baseline 320.0: +50.0% (tolerance 10% + spread 7.9%, at least 5 ms)',
      '8K@1/s ttftFromScheduleP99Ms 720.0 vs baseline 480.0: +50.0% (tolerance 20%, at least 10 ms)',
    ]);
    expect(c.counts.regressed).toBe(2);
    // 20 % on the p99 is within its 20 %; on the median it is not (its 10 % and the sampling spread of a median of 30 requests)
    const slight = compareResults(rateResult(), changed(1.2), DEFAULT_TOLERANCES);
    expect(slight.failures).toEqual(['8K@1/s ttftFromScheduleMs 384.0 vs baseline 320.0: +20.0% (tolerance 10% + spread 7.9%, at least 5 ms)']);
    // the threshold file's tolerances.regression.rates overrides a figure's tolerance
    const wide = resolveTolerances({ rates: { ttftFromScheduleMs: 0.6, ttftFromScheduleP99Ms: { relative: 0.6 } } });
    expect(wide.rates.ttftFromScheduleP99Ms).toEqual({ relative: 0.6, absolute: 10 });
    expect(compareResults(rateResult(), changed(1.5), wide).failures).toEqual([]);
    // faster is an improvement
    expect(compareResults(rateResult(), changed(0.5), DEFAULT_TOLERANCES).counts.improved).toBe(2);
  });

  test('the achieved rate: one request fewer in the window is never a regression, a real drop is', () => {
    // 30 s window, 1 request/s: one request fewer is −3.3 %, inside 5 % anyway; at 0.5 req/s it is −6.7 %
    const oneFewer = rateResult((cells) => cells.map((c) => (c.rate === 0.5 && c.contextLabel === '8K' ? { ...c, figures: { ...c.figures!, completedRate: 14 / 30 } } : c)));
    const d = compareResults(rateResult(), oneFewer, DEFAULT_TOLERANCES);
    expect(d.failures).toEqual([]);
    const figure = d.rates.find((r) => r.key === '8K@0.5')!.figures.find((f) => f.figure === 'completedRate')!;
    expect(figure.tolerance).toEqual({ relative: 0.05, absolute: 1 / 30 });
    const drop = compareResults(rateResult(), changed(1, 0.8), DEFAULT_TOLERANCES);
    expect(drop.failures).toEqual(['8K@1/s completedRate 0.800 vs baseline 1.0: −20.0% (tolerance 5%, at least 0.0333 req/s)']);
  });

  test('a cell that was measured and now is not fails as missing; one only in one run is listed, not gated', () => {
    const gone = rateResult((cells) => cells.map((c) => (c.rate === 1 && c.contextLabel === '8K' ? { ...c, status: 'not-run' as const, statuses: ['not-run' as const], figures: undefined, notRunReason: 'refused' } : c)));
    delete gone.rateCells!.find((c) => c.rate === 1 && c.contextLabel === '8K')!.figures;
    const c = compareResults(rateResult(), gone, DEFAULT_TOLERANCES);
    // one line for the cell, naming its status and reason, not one per figure; every figure still counts as missing
    expect(c.failures).toEqual(['8K@1/s is not-run now (refused) where the baseline measured it: its figures are missing']);
    expect(c.counts.missing).toBe(5);
    expect(c.rates.find((r) => r.key === '8K@1')!.figures.every((f) => f.fails)).toBe(true);
    const fewer = rateResult((cells) => cells.filter((x) => x.contextLabel !== '32K'));
    const d = compareResults(rateResult(), fewer, DEFAULT_TOLERANCES);
    expect(d.failures).toEqual([]);
    expect(d.rates.find((r) => r.key === '32K@0.5')!.nextStatus).toBeUndefined();
    // no rate cells in either run: no rows
    expect(compareResults(sglangResult(), sglangResult(), DEFAULT_TOLERANCES).rates).toEqual([]);
  });

  test('another schedule (arrival process, seed, ramp) puts other requests in the window: not compared, and the row says why', () => {
    const c = compareResults(rateResult(), changed(3, undefined, 'constant'), DEFAULT_TOLERANCES);
    expect(c.failures).toEqual([]);
    const r = c.rates.find((x) => x.key === '8K@1')!;
    expect(r.figures).toEqual([]);
    expect(r.note).toBe('not compared: another schedule (arrival poisson → constant), so other requests fall in the window');
    // a different seed draws another schedule: its window holds other requests (a 3 s window at 6/s held 7.7 against 5.7 req/s)
    const reseeded = rateResult((cells) => cells.map((x) => ({ ...x, seed: x.seed + 1, rampS: 2 })));
    reseeded.info.run.rates = { ...reseeded.info.run.rates!, seed: 2, rampS: 2 };
    const d = compareResults(rateResult(), reseeded, DEFAULT_TOLERANCES);
    expect(d.rates.find((x) => x.key === '8K@1')!.note).toBe(
      'not compared: another schedule (another schedule seed (LLM_BENCH_RATE_SEED), ramp 0 s → 2 s), so other requests fall in the window',
    );
    expect(d.rates.every((x) => x.figures.length === 0)).toBe(true);
    // said once for the run (the in-run gate at its start, compare on stderr)
    expect(rateScheduleDifference(rateResult().info, reseeded.info)).toBe(
      "the baseline's open-loop rates were scheduled otherwise (seed 1 → 2, ramp 0 s → 2 s): other requests fall in each window, so its rate cells are not compared with this run's (the decode cells are)",
    );
    expect(rateScheduleDifference(rateResult().info, rateResult().info)).toBeUndefined();
    expect(rateScheduleDifference(sglangResult().info, reseeded.info)).toBeUndefined();
  });

  test("a Client-limited cell's latencies from the schedule are partly the client's: not compared, on either side", () => {
    const limited = changed(3);
    const cell = limited.rateCells!.find((x) => x.contextLabel === '8K' && x.rate === 1)!;
    cell.status = 'client-limited';
    cell.statuses = ['client-limited'];
    const c = compareResults(rateResult(), limited, DEFAULT_TOLERANCES);
    expect(c.failures).toEqual([]);
    expect(c.rates.find((x) => x.key === '8K@1')!.note).toBe("not compared: the new run's cell is Client-limited, so their latencies from the schedule are partly the client's");
    expect(compareResults(limited, rateResult(), DEFAULT_TOLERANCES).rates.find((x) => x.key === '8K@1')!.note).toContain("the baseline's cell is Client-limited");
    // the fixture's 32K@2 is Client-limited because the in-flight ceiling held requests back, which
    // a slower server causes too (its requests stay longer): compared
    expect(c.rates.find((x) => x.key === '32K@2')!.note).toBeUndefined();
    const held = rateResult((cells) =>
      cells.map((x) => (x.contextLabel === '32K' && x.rate === 2 ? { ...x, figures: { ...x.figures!, completedRate: 1.2 } } : x)),
    );
    expect(compareResults(rateResult(), held, DEFAULT_TOLERANCES).failures).toEqual(['32K@2/s completedRate 1.2 vs baseline 1.9: −36.8% (tolerance 5%, at least 0.0333 req/s)']);
  });

  test('a cell the baseline measured that is Over capacity now fails, even where the baseline was Client-limited; one Not run above a Saturated rate is noted', () => {
    const limitedBase = changed(1);
    const baseCell = limitedBase.rateCells!.find((x) => x.contextLabel === '8K' && x.rate === 1)!;
    baseCell.status = 'client-limited';
    baseCell.statuses = ['client-limited'];
    const over = rateResult((cells) =>
      cells.map((x) => {
        if (x.contextLabel !== '8K' || x.rate !== 1) return x;
        const { figures: _gone, ...rest } = x;
        return { ...rest, status: 'over-capacity' as const, statuses: ['over-capacity' as const] };
      }),
    );
    expect(compareResults(limitedBase, over, DEFAULT_TOLERANCES).failures).toEqual(['8K@1/s is over-capacity now where the baseline measured it: its figures are missing']);
    // 8K@4 Not run above 8K@2, Saturated in the new run (as in the fixture's own run): a verdict one window can flip, so noted, not failed
    const above = rateResult((cells) =>
      cells.map((x) => {
        if (x.contextLabel !== '8K' || x.rate !== 4) return x;
        const { figures: _gone, ...rest } = x;
        return { ...rest, status: 'not-run' as const, statuses: ['not-run' as const], notRunReason: '2/s was already Saturated at this context' };
      }),
    );
    const c = compareResults(rateResult(), above, DEFAULT_TOLERANCES);
    expect(c.failures).toEqual([]);
    expect(c.rates.find((x) => x.key === '8K@4')!.note).toBe("not compared: not run this time, above 2/s, which was Saturated (that cell's own figures are compared)");
  });

  test("a sweep's points are not compared one by one (their rates are each run's own), and the page says why", () => {
    const swept = () => {
      const r = changed(3);
      r.info.run.rates = { ...r.info.run.rates!, rates: [], sweep: { points: 4 } };
      return r;
    };
    const c = compareResults(rateResult(), swept(), DEFAULT_TOLERANCES);
    expect(c.rates).toEqual([]);
    expect(c.failures).toEqual([]);
    expect(c.rateSweepNote).toBe(
      'Open-loop rate cells are not compared one by one: the new run swept its rates, and a sweep\'s rates come from that run\'s own decode cells ' +
        '(a slower server moves the points themselves). The decode cells that place them are compared above (the baseline has 9 rate cells, the new run 9).',
    );
    expect(compareResults(swept(), swept(), DEFAULT_TOLERANCES).rateSweepNote).toContain('both runs swept their rates');
    const page = renderDiffMarkdown({ base: rateResult().info, next: swept().info, comparison: c });
    expect(page).toContain('Open-loop rate cells are not compared one by one: the new run swept its rates');
    expect(page).not.toContain('## Open-loop rate cells');
    // the in-run gate: a baseline that swept gates no rate cell
    expect(asBaseline('b.json', swept()).rateCells.size).toBe(0);
    expect(asBaseline('b.json', rateResult()).rateCells.size).toBe(9);
  });

  test('the diff page lists them in their own table, with regressions and improvements', () => {
    const next = changed(1.5);
    const comparison = compareResults(rateResult(), next, DEFAULT_TOLERANCES);
    const page = renderDiffMarkdown({ base: rateResult().info, next: next.info, comparison, baseLabel: 'a.json', nextLabel: 'b.json' });
    expect(page).toContain('## Open-loop rate cells');
    expect(page).toContain('| 8K | 1 req/s | Valid | ttftFromScheduleP99Ms | 480.0 | 720.0 | +50.0% | tolerance 20%, at least 10 ms | **Regressed** |');
    expect(page).toContain('| 32K | 4 req/s | Over capacity | — | — | — | — | — | — |');
    expect(page).toContain('- 8K@1/s ttftFromScheduleP99Ms 720.0 vs baseline 480.0: +50.0% (tolerance 20%, at least 10 ms)');
    const faster = compareResults(rateResult(), changed(0.5), DEFAULT_TOLERANCES);
    const fasterPage = renderDiffMarkdown({ base: rateResult().info, next: next.info, comparison: faster });
    expect(fasterPage).toContain('- 8K@1/s ttftFromScheduleMs 160.0 vs baseline 320.0: −50.0%');
    const other = compareResults(rateResult(), changed(1, undefined, 'constant'), DEFAULT_TOLERANCES);
    expect(renderDiffMarkdown({ base: rateResult().info, next: next.info, comparison: other })).toContain(
      '| 8K | 1 req/s | Valid | — | — | — | — | — | not compared: another schedule (arrival poisson → constant), so other requests fall in the window |',
    );
  });
});
