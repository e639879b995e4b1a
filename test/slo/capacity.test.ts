import { describe, expect, test } from 'vitest';
import type { CellResult, Goodput, SloMiss, SloVerdict } from '../../src/shapes/result.js';
import { searchCapacity, bracket, maxSearchCells, nextProbe, resolutionAt, type Judged } from '../../src/slo/capacity.js';
import { capacityRow, judgedOf, type CapacityInput } from '../../src/judge/capacity-row.js';
import { bindingText, capacityNotFound, capacityUsersText, describeCapacity } from '../../src/text/capacity-line.js';
import { capacityBudgetFailures } from '../../src/judge/thresholds.js';
import { compareCapacityRow } from '../../src/judge/compare-capacity.js';
import { unmeasuredVerdict } from '../../src/judge/slo-verdict.js';

const MEETS: SloVerdict = { meets: true, misses: [] };

function ttftMiss(at: number): SloMiss {
  // TTFT p90 grows with the load: 2,000 ms at the bound
  const value = 2000 + (at - 47) * 340;
  return { constraint: 'ttftMs', label: 'TTFT p90', value, bound: 2000, detail: `TTFT p90 ${value.toLocaleString('en-US')} ms > 2,000 ms` };
}

function misses(miss: SloMiss): SloVerdict {
  return { meets: false, misses: [miss], binding: miss };
}

function j(concurrency: number, meets: boolean, adaptive = false, goodput?: Goodput): Judged {
  return { concurrency, verdict: meets ? MEETS : misses(ttftMiss(concurrency)), adaptive, ...(goodput ? { goodput } : {}) };
}

function gp(met: number, judged: number): Goodput {
  return { requests: { met, judged, share: met / judged }, tokens: { met: met * 10, total: judged * 10, share: met / judged } };
}

describe('resolutionAt', () => {
  test('one request up to 20, then 5 % of the passing concurrency, rounded up', () => {
    for (let lo = 0; lo <= 20; lo++) expect(resolutionAt(lo)).toBe(1);
    expect(resolutionAt(21)).toBe(2);
    expect(resolutionAt(40)).toBe(2);
    expect(resolutionAt(41)).toBe(3);
    expect(resolutionAt(64)).toBe(4);
    expect(resolutionAt(100)).toBe(5);
    expect(resolutionAt(128)).toBe(7);
    expect(resolutionAt(1000)).toBe(50);
  });

  test('never below 1, never below 5 %, never a whole request above it', () => {
    for (let lo = 0; lo <= 2000; lo++) {
      const r = resolutionAt(lo);
      expect(Number.isInteger(r)).toBe(true);
      expect(r).toBeGreaterThanOrEqual(1);
      expect(r).toBeGreaterThanOrEqual(0.05 * lo);
      expect(r).toBeLessThan(Math.max(1, 0.05 * lo) + 1);
    }
  });
});

describe('bracket', () => {
  test('lo: the last meeting below the first miss; hi: that first miss', () => {
    const judged = [j(1, true), j(2, true), j(4, true), j(8, false), j(16, false)];
    expect(bracket(judged)).toEqual({ lo: 4, hi: 8, loJudged: judged[2], hiJudged: judged[3] });
  });

  test('order does not matter', () => {
    const judged = [j(16, false), j(4, true), j(1, true), j(8, false), j(2, true)];
    expect(bracket(judged)).toMatchObject({ lo: 4, hi: 8 });
  });

  test('the first failure ends it: a pass above a failure does not raise the capacity', () => {
    const judged = [j(1, true), j(2, true), j(4, false), j(8, true), j(16, true)];
    const b = bracket(judged);
    expect(b.lo).toBe(2);
    expect(b.hi).toBe(4);
    expect(b.hiJudged).toBe(judged[2]);
    // and a search from it stays below the failure
    expect(nextProbe(judged)).toBe(3);
  });

  test('all meet: open bracket at the largest', () => {
    const judged = [j(1, true), j(2, true), j(4, true)];
    expect(bracket(judged)).toEqual({ lo: 4, loJudged: judged[2] });
  });

  test('the smallest fails: lo 0 and no loJudged', () => {
    const judged = [j(1, false), j(2, true)];
    expect(bracket(judged)).toEqual({ lo: 0, hi: 1, hiJudged: judged[0] });
  });

  test('nothing judged: lo 0, no hi', () => {
    expect(bracket([])).toEqual({ lo: 0 });
  });

  test('adaptive cells between columns narrow it', () => {
    const judged = [j(32, true), j(64, false), j(48, false, true), j(40, true, true), j(44, true, true)];
    expect(bracket(judged)).toMatchObject({ lo: 44, hi: 48 });
  });
});

describe('nextProbe', () => {
  test('the midpoint, rounded down', () => {
    expect(nextProbe([j(32, true), j(64, false)])).toBe(48);
    expect(nextProbe([j(4, true), j(8, false)])).toBe(6);
    expect(nextProbe([j(4, true), j(7, false)])).toBe(5);
    expect(nextProbe([j(2, false)])).toBe(1);
  });

  test('undefined within the resolution', () => {
    expect(nextProbe([j(4, true), j(5, false)])).toBeUndefined();
    expect(nextProbe([j(1, false)])).toBeUndefined(); // lo 0, hi 1: capacity 0
    // lo 40: resolution 2 → 40..42 is done, 40..43 is not
    expect(nextProbe([j(40, true), j(42, false)])).toBeUndefined();
    expect(nextProbe([j(40, true), j(43, false)])).toBe(41);
    // lo 100: resolution 5
    expect(nextProbe([j(100, true), j(105, false)])).toBeUndefined();
    expect(nextProbe([j(100, true), j(106, false)])).toBe(103);
  });

  test('undefined when every one meets, or nothing is judged', () => {
    expect(nextProbe([j(1, true), j(2, true), j(4, true)])).toBeUndefined();
    expect(nextProbe([])).toBeUndefined();
  });

  test('the probe is strictly inside the bracket; none only within the resolution', () => {
    const wrong: string[] = [];
    let probed = 0;
    for (let lo = 0; lo < 200; lo++)
      for (let hi = lo + 1; hi < 260; hi++) {
        const judged = lo > 0 ? [j(lo, true), j(hi, false)] : [j(hi, false)];
        const p = nextProbe(judged);
        if (p === undefined ? hi - lo > resolutionAt(lo) : !(p > lo && p < hi)) wrong.push(`${lo}..${hi}: ${p}`);
        if (p !== undefined) probed++;
      }
    expect(wrong).toEqual([]);
    expect(probed).toBeGreaterThan(20_000);
  });
});

describe('maxSearchCells', () => {
  test('⌈log2(gap)⌉ bisection steps + 1 confirmation', () => {
    expect(maxSearchCells(4, 5)).toBe(1);
    expect(maxSearchCells(4, 6)).toBe(2);
    expect(maxSearchCells(4, 8)).toBe(3);
    expect(maxSearchCells(32, 64)).toBe(6);
    expect(maxSearchCells(0, 128)).toBe(8);
    expect(maxSearchCells(64, 128)).toBe(7);
    expect(maxSearchCells(5, 5)).toBe(1);
  });
});

/**
 * The search as src/matrix/capacity-test.ts runs it, against an oracle: probe nextProbe, judge
 * it, until nextProbe is undefined; then one confirmation at lo (when there is a failure above a
 * pass).
 */
function search(columns: readonly number[], meets: (c: number) => boolean): { judged: Judged[]; probes: number[]; confirmation?: number } {
  const judged = columns.map((c) => j(c, meets(c)));
  const probes: number[] = [];
  for (let p = nextProbe(judged); p !== undefined; p = nextProbe(judged)) {
    expect(judged.some((x) => x.concurrency === p)).toBe(false); // never measures a concurrency twice
    probes.push(p);
    judged.push(j(p, meets(p), true));
    expect(probes.length).toBeLessThan(100);
  }
  const { lo, hi } = bracket(judged);
  return { judged, probes, ...(hi !== undefined && lo >= 1 ? { confirmation: lo } : {}) };
}

describe('a simulated capacity search against a monotone SLO', () => {
  const COLUMN_SETS: number[][] = [
    [1, 2, 4, 8, 16, 32, 64, 128],
    [1, 4, 16, 64, 128],
    [1, 8, 128],
    [1, 128],
    [2, 8, 32, 128],
    [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 128],
    [1, 10, 20, 50, 100, 128],
  ];

  test.each(COLUMN_SETS.map((c) => [c.join(','), c] as const))('columns %s, every T in 1..127', (_name, columns) => {
    for (let T = 1; T <= 127; T++) {
      const meets = (c: number) => c <= T;
      const initial = bracket(columns.map((c) => j(c, meets(c))));
      const { judged, probes, confirmation } = search(columns, meets);
      const { lo, hi } = bracket(judged);
      // the bracket holds T: lo meets, hi does not
      expect(lo).toBeLessThanOrEqual(T);
      expect(hi).toBeGreaterThan(T);
      expect(hi! - lo).toBeLessThanOrEqual(resolutionAt(lo));
      if (resolutionAt(lo) === 1) expect(lo).toBe(T);
      else expect(T - lo).toBeLessThan(resolutionAt(lo));
      // cells: the probes, plus one confirmation, within the bound for the columns' bracket
      const cells = probes.length + (confirmation !== undefined ? 1 : 0);
      expect(cells).toBeLessThanOrEqual(maxSearchCells(initial.lo, initial.hi!));
      // and within the bound the plan sizes its test timeout with (from 0 to the largest column)
      expect(cells).toBeLessThanOrEqual(maxSearchCells(0, columns[columns.length - 1]!));
      // the row it reports
      const row = capacityRow({
        context: 8192,
        contextLabel: '8K',
        judged,
        ...(confirmation !== undefined ? { confirmation: { concurrency: confirmation, verdict: MEETS } } : {}),
      });
      expect(row.capacity).toBe(lo);
      expect(row.atLeast).toBe(false);
      expect(row.bindingConcurrency).toBe(hi);
      expect(row.adaptiveCells).toBe(cells);
      expect(row.searched.map((s) => s.concurrency)).toEqual([...judged.map((x) => x.concurrency)].sort((a, b) => a - b));
    }
  });

  test('T below 1 (nothing meets): capacity 0, no probe, no confirmation', () => {
    for (const columns of COLUMN_SETS) {
      const { probes, confirmation, judged } = search(columns, () => false);
      // below a first column of 2 the search tries 1 (and finds it fails too)
      expect(probes).toEqual(columns[0] === 1 ? [] : [1]);
      expect(confirmation).toBeUndefined();
      expect(capacityRow({ context: 0, contextLabel: '0', judged }).capacity).toBe(0);
    }
  });

  test('T at or above the largest column: no probe, no confirmation, at least the largest', () => {
    for (const columns of COLUMN_SETS) {
      for (const T of [128, 500]) {
        const { probes, confirmation, judged } = search(columns, (c) => c <= T);
        expect(probes).toEqual([]);
        expect(confirmation).toBeUndefined();
        const row = capacityRow({ context: 0, contextLabel: '0', judged });
        expect(row).toMatchObject({ capacity: 128, atLeast: true, adaptiveCells: 0 });
      }
    }
  });

  test('a wide gap with a large T stops at the 5 % resolution', () => {
    // columns 1 and 1000, T = 777: ends with hi − lo ≤ 5 % of lo, lo ≤ T
    const { judged, probes } = search([1, 1000], (c) => c <= 777);
    const { lo, hi } = bracket(judged);
    expect(lo).toBeLessThanOrEqual(777);
    expect(hi).toBeGreaterThan(777);
    expect(lo).toBeGreaterThan(777 - resolutionAt(lo));
    expect(resolutionAt(lo)).toBeGreaterThan(1);
    expect(probes.length + 1).toBeLessThanOrEqual(maxSearchCells(1, 1000));
    // fewer probes than a search to one request would take
    expect(probes.length).toBeLessThan(Math.ceil(Math.log2(999)));
  });
});

describe('capacityRow', () => {
  test('a bisected row: capacity, binding at the first failure, searched in order, adaptive cells and confirmation counted', () => {
    const judged = [j(1, true), j(16, true), j(32, true), j(64, false), j(48, false, true), j(40, true, true, gp(19, 20)), j(44, true, true), j(46, true, true), j(47, true, true)];
    const input: CapacityInput = { context: 8192, contextLabel: '8K', judged, confirmation: { concurrency: 47, verdict: MEETS, goodput: gp(39, 40) } };
    const row = capacityRow(input);
    expect(row).toEqual({
      context: 8192,
      contextLabel: '8K',
      capacity: 47,
      atLeast: false,
      searched: [
        { concurrency: 1, meets: true, adaptive: false },
        { concurrency: 16, meets: true, adaptive: false },
        { concurrency: 32, meets: true, adaptive: false },
        { concurrency: 40, meets: true, adaptive: true },
        { concurrency: 44, meets: true, adaptive: true },
        { concurrency: 46, meets: true, adaptive: true },
        { concurrency: 47, meets: true, adaptive: true },
        { concurrency: 48, meets: false, adaptive: true },
        { concurrency: 64, meets: false, adaptive: false },
      ],
      adaptiveCells: 6,
      resolution: 3,
      binding: ttftMiss(48),
      bindingConcurrency: 48,
      goodput: gp(39, 40),
      confirmation: { concurrency: 47, meets: true },
    });
  });

  test('atLeast when every column meets; no binding', () => {
    const row = capacityRow({ context: 0, contextLabel: '0', judged: [j(1, true), j(8, true), j(4, true, false, gp(3, 4))].concat(j(8, true, false, gp(7, 8))) });
    expect(row.capacity).toBe(8);
    expect(row.atLeast).toBe(true);
    expect(row).not.toHaveProperty('binding');
    expect(row).not.toHaveProperty('bindingConcurrency');
    expect(row.adaptiveCells).toBe(0);
  });

  test('goodput: from the confirmation, else from the cell at the capacity', () => {
    const judged = [j(1, true), j(2, true, false, gp(2, 2)), j(4, false)];
    expect(capacityRow({ context: 0, contextLabel: '0', judged }).goodput).toEqual(gp(2, 2));
    expect(capacityRow({ context: 0, contextLabel: '0', judged, confirmation: { concurrency: 2, verdict: MEETS, goodput: gp(9, 10) } }).goodput).toEqual(gp(9, 10));
    // no goodput anywhere: none
    expect(capacityRow({ context: 0, contextLabel: '0', judged: [j(1, true), j(2, false)] })).not.toHaveProperty('goodput');
  });

  test('capacity 0: nothing meets, binding at C = 1, no goodput', () => {
    const judged = [j(1, false, false, gp(0, 1)), j(2, false), j(4, false)];
    const row = capacityRow({ context: 131072, contextLabel: '128K', judged });
    expect(row.capacity).toBe(0);
    expect(row.atLeast).toBe(false);
    expect(row.binding).toEqual(ttftMiss(1));
    expect(row.bindingConcurrency).toBe(1);
    expect(row).not.toHaveProperty('goodput');
    expect(row.resolution).toBe(1);
  });

  test('an unconfirmed capacity: the confirmation missed, with its binding', () => {
    const judged = [j(8, true), j(16, false), j(12, false, true), j(10, true, true), j(11, false, true)];
    const miss = ttftMiss(50);
    const row = capacityRow({ context: 8192, contextLabel: '8K', judged, confirmation: { concurrency: 10, verdict: misses(miss) } });
    expect(row.capacity).toBe(10);
    expect(row.confirmation).toEqual({ concurrency: 10, meets: false, binding: miss });
    expect(row.bindingConcurrency).toBe(11);
    expect(row.adaptiveCells).toBe(4);
  });

  test('nothing judged: capacity 0 and not atLeast', () => {
    const row = capacityRow({ context: 0, contextLabel: '0', judged: [] });
    expect(row).toMatchObject({ capacity: 0, atLeast: false, searched: [], adaptiveCells: 0 });
  });
});

describe('describeCapacity', () => {
  test('a measured capacity names the binding constraint at the first failing concurrency', () => {
    const miss: SloMiss = { constraint: 'ttftMs', label: 'TTFT p90', value: 2340, bound: 2000, detail: 'TTFT p90 2,340 ms > 2,000 ms' };
    const judged = [j(32, true), j(47, true, true), { concurrency: 48, verdict: misses(miss), adaptive: true }, j(64, false)];
    const row = capacityRow({ context: 8192, contextLabel: '8K', judged, confirmation: { concurrency: 47, verdict: MEETS } });
    expect(describeCapacity(row)).toBe('8K: 47 users (binds: TTFT p90 2,340 ms > 2,000 ms at 48)');
  });

  test('every column met', () => {
    const row = capacityRow({ context: 8192, contextLabel: '8K', judged: [j(1, true), j(64, true), j(128, true)] });
    expect(describeCapacity(row)).toBe('8K: ≥ 128 users (every column met the SLO; the largest is 128)');
    expect(describeCapacity(capacityRow({ context: 0, contextLabel: '0', judged: [j(1, true)] }))).toBe('0: ≥ 1 user (every column met the SLO; the largest is 1)');
  });

  test('capacity 0', () => {
    const row = capacityRow({ context: 131072, contextLabel: '128K', judged: [j(1, false), j(2, false)] });
    expect(describeCapacity(row)).toBe(`128K: 0 users (binds: ${ttftMiss(1).detail} at 1)`);
  });

  test('the lowest concurrency could not be judged: "not found", not "0 users" (the JSON keeps 0); gates still fail, saying why; a capacity above such a cell is one', () => {
    const clientLimited: SloMiss = { constraint: 'unmeasured', label: 'Client-limited', detail: '8K/1 is Client-limited: its figures may be wrong' };
    const row = capacityRow({ context: 8192, contextLabel: '8K', judged: [{ concurrency: 1, verdict: misses(clientLimited), adaptive: false }, j(2, true)] });
    expect(row.capacity).toBe(0);
    expect(capacityNotFound(row)).toBe(true);
    expect(describeCapacity(row)).toBe('8K: not found: the lowest concurrency searched could not be judged (8K/1 is Client-limited: its figures may be wrong)');
    expect(capacityUsersText(row)).toBe('not found');
    expect(capacityBudgetFailures(row, 4, 0)).toEqual(['capacity 8K: not found, budget 4: the lowest concurrency searched could not be judged (8K/1 is Client-limited: its figures may be wrong)']);
    const base = capacityRow({ context: 8192, contextLabel: '8K', judged: [j(1, true), j(2, true), j(4, false)] });
    const delta = compareCapacityRow(base, row, { absolute: 0, relative: 0.1 });
    expect(delta).toMatchObject({ verdict: 'not-comparable', fails: true });
    expect(delta.message).toBe('capacity 8K: not found vs baseline 2: the lowest concurrency searched could not be judged (8K/1 is Client-limited: its figures may be wrong)');
    // a baseline of 1 user with 1 allowed: a real 0 would be within noise, a not found still fails
    const one = capacityRow({ context: 8192, contextLabel: '8K', judged: [j(1, true), j(2, false)] });
    expect(compareCapacityRow(one, row, { absolute: 1, relative: 0.1 })).toMatchObject({ verdict: 'not-comparable', fails: true });
    // a baseline not found is compared with nothing: not Improved, not Within noise, no failure
    expect(compareCapacityRow(row, base, { absolute: 1, relative: 0.1 })).toEqual(expect.objectContaining({
      verdict: 'not-comparable',
      fails: false,
      message: 'capacity 8K: not found in the baseline: the lowest concurrency searched could not be judged (8K/1 is Client-limited: its figures may be wrong)',
    }));
    expect(compareCapacityRow(row, row, { absolute: 1, relative: 0.1 })).toMatchObject({ verdict: 'not-comparable', fails: false });
    // a real miss at 1 is a capacity of 0, and a regression
    const zero = capacityRow({ context: 8192, contextLabel: '8K', judged: [j(1, false)] });
    expect(capacityNotFound(zero)).toBe(false);
    expect(capacityUsersText(zero)).toBe('0');
    expect(compareCapacityRow(base, zero, { absolute: 0, relative: 0.1 })).toMatchObject({ verdict: 'regressed', fails: true });
    // every concurrency below the unjudged one met the SLO: that is a capacity
    const above = capacityRow({ context: 8192, contextLabel: '8K', judged: [j(1, true), { concurrency: 2, verdict: misses(clientLimited), adaptive: false }] });
    expect(capacityNotFound(above)).toBe(false);
    expect(describeCapacity(above)).toBe('8K: 1 user (binds: 8K/1 is Client-limited: its figures may be wrong at 2)');
  });

  test('one user', () => {
    const row = capacityRow({ context: 0, contextLabel: '0', judged: [j(1, true), j(2, false)], confirmation: { concurrency: 1, verdict: MEETS } });
    expect(describeCapacity(row)).toBe(`0: 1 user (binds: ${ttftMiss(2).detail} at 2)`);
  });

  test('KV capacity binds', () => {
    const kv: SloMiss = { constraint: 'kvCapacity', label: 'KV capacity', detail: '64 would not fit: 64 × (32,768 + max output) = 2,359,296 tokens > KV capacity 2,000,000' };
    const judged = [j(32, true), { concurrency: 64, verdict: misses(kv), adaptive: false }];
    const row = capacityRow({ context: 32768, contextLabel: '32K', judged });
    expect(describeCapacity(row)).toBe(`32K: 32 users (binds: KV capacity: ${kv.detail})`);
  });

  test('unconfirmed: the final cell missed', () => {
    const miss: SloMiss = { constraint: 'ttftMs', label: 'TTFT p90', value: 2100, bound: 2000, detail: 'TTFT p90 2,100 ms > 2,000 ms' };
    const judged = [j(32, true), j(47, true, true), j(48, false, true)];
    const row = capacityRow({ context: 8192, contextLabel: '8K', judged, confirmation: { concurrency: 47, verdict: misses(miss) } });
    expect(describeCapacity(row)).toBe(`8K: 47 users (binds: ${ttftMiss(48).detail} at 48); unconfirmed: the final cell at 47 missed TTFT p90 2,100 ms > 2,000 ms`);
    // a confirming cell without figures to judge (Client-limited) was not missed: it could not be judged
    const unmeasured: SloMiss = { constraint: 'unmeasured', label: 'status', detail: '8K/47 is Client-limited: its timings are partly the client\'s' };
    const blind = capacityRow({ context: 8192, contextLabel: '8K', judged, confirmation: { concurrency: 47, verdict: misses(unmeasured) } });
    expect(describeCapacity(blind)).toBe(`8K: 47 users (binds: ${ttftMiss(48).detail} at 48); unconfirmed: the final cell at 47 could not be judged (8K/47 is Client-limited: its timings are partly the client's)`);
    // a confirmation that met adds nothing
    const ok = capacityRow({ context: 8192, contextLabel: '8K', judged, confirmation: { concurrency: 47, verdict: MEETS } });
    expect(describeCapacity(ok)).not.toContain('unconfirmed');
  });
});

describe('bindingText and judgedOf', () => {
  test('bindingText: detail and concurrency; KV capacity by its detail', () => {
    const miss = ttftMiss(48);
    expect(bindingText(miss, 48)).toBe(`${miss.detail} at 48`);
    expect(bindingText(miss)).toBe(miss.detail);
    expect(bindingText({ constraint: 'kvCapacity', label: 'KV capacity', detail: 'x would not fit' }, 9)).toBe('KV capacity: x would not fit');
  });

  test('judgedOf: a cell with a verdict, its goodput carried; a cell without one is not judged', () => {
    const base: CellResult = {
      context: 8192,
      contextLabel: '8K',
      concurrency: 16,
      status: 'valid',
      statuses: ['valid'],
      evidence: {},
      finishedAt: '2026-01-01T00:00:00.000Z',
    };
    expect(judgedOf(base, false)).toBeUndefined();
    expect(judgedOf({ ...base, slo: MEETS }, true)).toEqual({ concurrency: 16, verdict: MEETS, adaptive: true });
    expect(judgedOf({ ...base, slo: MEETS, goodput: gp(1, 2) }, false)).toEqual({ concurrency: 16, verdict: MEETS, adaptive: false, goodput: gp(1, 2) });
  });
});

describe('searchCapacity (the product search, with a fake probe)', () => {
  const kvMiss: SloMiss = { constraint: 'kvCapacity', label: 'KV capacity', detail: 'would not fit' };
  /** a server that meets the SLO up to `truth` and cannot hold more than `fits` requests */
  async function run(columns: number[], truth: number, fits: number) {
    const probed: Array<[number, string]> = [];
    const verdict = (c: number): Judged =>
      c > fits
        ? { concurrency: c, verdict: { meets: false, misses: [kvMiss], binding: kvMiss }, adaptive: true, measured: false }
        : j(c, c <= truth, true);
    const outcome = await searchCapacity({
      columns: columns.map((c) => ({ ...verdict(c), adaptive: false })),
      overCapacity: (c) => c > fits,
      probe: async (c, why) => {
        probed.push([c, why]);
        return verdict(c);
      },
    });
    return { outcome, probed, row: capacityRow({ context: 8192, contextLabel: '8K', judged: outcome.judged, ...(outcome.confirmation ? { confirmation: outcome.confirmation } : {}) }) };
  }

  test('where the KV cache ends inside the bracket, the plan bounds the search (not run)', async () => {
    // meets up to 60 by speed, but only 50 fit: the columns say 16 ✓, 64 ✗ (Over capacity)
    const { probed, row } = await run([1, 4, 16, 64], 60, 50);
    expect(probed[0]).toEqual([51, 'kv-bound']);
    // within the resolution below the 50 that fit (the gap to 51 closes at max(1, 5 %))
    expect(row.capacity).toBeLessThanOrEqual(50);
    expect(51 - row.capacity).toBeLessThanOrEqual(resolutionAt(row.capacity));
    expect(row.binding?.constraint).toBe('kvCapacity');
    expect(row.bindingConcurrency).toBe(51);
    // the KV probe is free: cells added count measured ones only, within ⌈log2(gap)⌉ + 1 of 16–64
    expect(row.adaptiveCells).toBe(probed.filter(([c, why]) => why !== 'kv-bound' && c <= 50).length);
    expect(row.adaptiveCells).toBeLessThanOrEqual(maxSearchCells(16, 64));
    expect(probed[probed.length - 1]).toEqual([row.capacity, 'confirmation']);
  });

  test('without a KV limit in the bracket it bisects and confirms, as nextProbe says', async () => {
    const { probed, row } = await run([1, 4, 16, 64], 37, 1000);
    expect(probed.some(([, why]) => why === 'kv-bound')).toBe(false);
    expect(row.capacity).toBeGreaterThanOrEqual(37 - resolutionAt(37) + 1);
    expect(row.capacity).toBeLessThanOrEqual(37);
    expect(row.confirmation).toEqual({ concurrency: row.capacity, meets: true });
  });

  test('no confirmation when every column meets, or none does', async () => {
    expect((await run([1, 4, 16], 100, 1000)).probed).toEqual([]);
    const none = await run([1, 4, 16], 0, 1000);
    expect(none.probed).toEqual([]);
    expect(none.row.capacity).toBe(0);
  });
});

describe('a column with no result', () => {
  test('counts as not measured: the capacity stays below it and the row is not "at least"', () => {
    const judged = [j(1, true), j(4, true), { concurrency: 16, adaptive: false, measured: false, verdict: unmeasuredVerdict('8K/16 has no result in this run') }];
    const row = capacityRow({ context: 8192, contextLabel: '8K', judged });
    expect(row.atLeast).toBe(false);
    expect(row.capacity).toBe(4);
    expect(row.binding).toEqual({ constraint: 'unmeasured', label: 'not measured', detail: '8K/16 has no result in this run' });
    expect(describeCapacity(row)).toBe('8K: 4 users (binds: 8K/16 has no result in this run at 16)');
  });
});
