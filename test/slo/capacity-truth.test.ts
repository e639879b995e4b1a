/**
 * The ground truth of "capacity at an SLO" (test/accuracy/capacity-truth.ts) on cases with a closed
 * form, and the capacity search (src/slo/capacity.ts) run on that truth's noise-free verdicts.
 *
 * The profile: the tiny one with steps of 10 ms + 0.5 ms per request in the batch, nothing per KV
 * token, and outputs far longer than a cell (no request ends, so nothing is prefilled inside the
 * window). Every stream then gets one token per step of 10 + 0.5·C ms, exactly (multiples of 0.5
 * are exact in binary), so
 *   per-request tok/s ≥ X  ⇔  1000 / (10 + 0.5·C) ≥ X  ⇔  C ≤ 2000 / X − 20
 *   TBT p99 ≤ Z            ⇔  10 + 0.5·C ≤ Z            ⇔  C ≤ 2·Z − 20
 * and a row of context n with max output m is Over capacity from C > KV / (n + m).
 */
import { describe, expect, test } from 'vitest';
import { parseSloText } from '../../src/slo/slo.js';
import { bracket, maxSearchCells, nextProbe, resolutionAt, type Judged } from '../../src/slo/capacity.js';
import { resolveSimProfile } from '../../src/sim/profiles.js';
import { runVirtualCell, virtualCellFigures, virtualTimelines } from '../helpers/virtual-cell.js';
import { trueCapacity, VirtualRow } from '../accuracy/capacity-truth.js';

const STEP_BASE_MS = 10;
const STEP_PER_REQUEST_MS = 0.5;
const profile = resolveSimProfile('tiny', {
  stepBaseMs: STEP_BASE_MS,
  stepPerRequestMs: STEP_PER_REQUEST_MS,
  stepPerKvTokenMs: 0,
  maxRunningRequests: 256,
  kvCapacityTokens: 4_194_304,
  maxBatchedTokens: 65_536,
  eosProbability: 0,
});
const CONTEXT = 512;
const MAX_OUTPUT = 1000;
const WINDOW_MS = 1000;
const row = new VirtualRow({ profile, context: CONTEXT, maxOutputTokens: MAX_OUTPUT, windowMs: WINDOW_MS });

describe('the virtual cell (test/helpers/virtual-cell.ts)', () => {
  test('C streams get one token per step of stepBase + stepPerRequest·C; the figures are the product’s', () => {
    const c = 4;
    const cell = runVirtualCell(profile, { context: CONTEXT, concurrency: c, maxOutputTokens: MAX_OUTPUT, windowMs: WINDOW_MS, settleMs: 300 });
    expect(cell.gateTimedOut).toBe(false);
    expect(cell.windowEndMs - cell.windowStartMs).toBe(WINDOW_MS);
    // one request per worker: none ends inside the cell
    expect(cell.requests).toHaveLength(c);
    for (const r of cell.requests) expect(r.endMs).toBeUndefined();
    const f = virtualCellFigures(cell);
    const step = STEP_BASE_MS + STEP_PER_REQUEST_MS * c;
    expect(f.timeBetweenTokensMs).toMatchObject({ median: step, p90: step, p99: step, samples: c });
    expect(f.perRequestTokensPerSecond).toBeCloseTo(1000 / step, 9);
    expect(f.ttftMs?.samples).toBe(c);
    expect(f.failedRequests).toBe(0);
    // the requests in flight at the window's end are aborted there, as the cell runner does
    for (const t of virtualTimelines(cell)) expect(t.end).toEqual({ kind: 'aborted', atMs: cell.windowEndMs });
    // the window holds ⌊1000 / step⌋ or one more step's tokens for each stream
    expect(f.outputTokens / c).toBeGreaterThanOrEqual(Math.floor(WINDOW_MS / step));
    expect(f.outputTokens / c).toBeLessThanOrEqual(Math.floor(WINDOW_MS / step) + 1);
    // and the server's running count (the metrics samples) is C all window long
    expect(f.serverActiveRequests).toBe(c);
  });

  test('deterministic: the same cell twice gives the same figures', () => {
    const o = { context: 2048, concurrency: 8, maxOutputTokens: 64, windowMs: 2000 };
    const p = resolveSimProfile('sglang-h200', { eosProbability: 0 });
    // max output 64: requests end and restart inside the window (prefill, frontend holds)
    const a = runVirtualCell(p, o);
    expect(a.requests.length).toBeGreaterThan(8);
    expect(virtualCellFigures(a)).toEqual(virtualCellFigures(runVirtualCell(p, o)));
  });
});

describe('trueCapacity: a dense sweep judged with sloVerdict', () => {
  // [SLO, closed-form capacity]; each bound is off the grid of C, so no figure sits on it
  const cases: [string, number][] = [
    ['perRequest>=21', Math.floor(2000 / 21 - 20)], // 75.2 → 75
    ['perRequest>=33', Math.floor(2000 / 33 - 20)], // 40.6 → 40
    ['perRequest>=45', Math.floor(2000 / 45 - 20)], // 24.4 → 24
    ['perRequest>=70', Math.floor(2000 / 70 - 20)], // 8.6 → 8
    ['tbtP99<=25.2', Math.floor(2 * 25.2 - 20)], // 30.4 → 30
    ['tbt<=14.9', Math.floor(2 * 14.9 - 20)], // 9.8 → 9
  ];
  test.each(cases)('%s: the closed form %i', (text, capacity) => {
    const truth = trueCapacity(row, parseSloText(text), 100);
    expect(truth).toMatchObject({ capacity, atLeast: false, firstFailure: capacity + 1 });
    expect(truth.binding?.constraint).toBe(text.startsWith('perRequest') ? 'perRequestTokensPerSecond' : 'timeBetweenTokensMs');
  });

  test('0 when one stream already misses (1000 / 10.5 = 95.2 tok/s < 97)', () => {
    expect(trueCapacity(row, parseSloText('perRequest>=97'), 100)).toMatchObject({ capacity: 0, atLeast: false, firstFailure: 1 });
  });

  test('"at least" the sweep’s end when every concurrency up to it meets', () => {
    expect(trueCapacity(row, parseSloText('perRequest>=21'), 64)).toEqual({ capacity: 64, atLeast: true });
  });

  test('the KV cache binds where C × (context + max output) > KV capacity, as the plan marks Over capacity', () => {
    // 16,000 tokens hold ⌊16,000 / 1,512⌋ = 10 streams of 512 + 1,000; the speed alone would allow 75
    const small = new VirtualRow({ profile: { ...profile, kvCapacityTokens: 16_000 }, context: CONTEXT, maxOutputTokens: MAX_OUTPUT, windowMs: WINDOW_MS });
    const truth = trueCapacity(small, parseSloText('perRequest>=21'), 100);
    expect(truth).toMatchObject({ capacity: 10, atLeast: false, firstFailure: 11 });
    expect(truth.binding?.constraint).toBe('kvCapacity');
    expect(small.at(11).overCapacity).toEqual({ requiredTokens: 11 * 1512, kvCapacityTokens: 16_000, requestTokens: 1512 });
    // the 10 that fit do run in the sim's engine (the shared prompt blocks count once)
    expect(small.at(10).figures?.timeBetweenTokensMs?.samples).toBe(10);
  });
});

describe('the capacity search on the truth’s noise-free verdicts', () => {
  const COLUMNS = [1, 4, 16, 64];
  const kvRow = new VirtualRow({ profile: { ...profile, kvCapacityTokens: 16_000 }, context: CONTEXT, maxOutputTokens: MAX_OUTPUT, windowMs: WINDOW_MS });
  const cases: [string, VirtualRow, string][] = [
    ['perRequest>=33', row, 'speed'],
    ['perRequest>=45', row, 'speed'],
    ['perRequest>=70', row, 'speed'],
    ['tbtP99<=25.2', row, 'speed'],
    ['tbtP99<=41.6', row, 'speed'], // 63.2 → 63, one below the largest column
    ['perRequest>=21', kvRow, 'KV capacity'],
  ];
  test.each(cases)('%s (%s binds): within the resolution below the truth, with at most ⌈log2(gap)⌉ + 1 cells', (text, r) => {
    const slo = parseSloText(text);
    const truth = trueCapacity(r, slo, 64);
    const judged: Judged[] = COLUMNS.map((c) => ({ concurrency: c, verdict: r.result(c, slo).slo!, adaptive: false }));
    const initial = bracket(judged);
    expect(initial.hi).toBeDefined();
    let probes = 0;
    for (let p = nextProbe(judged); p !== undefined; p = nextProbe(judged)) {
      probes++;
      judged.push({ concurrency: p, verdict: r.result(p, slo).slo!, adaptive: true });
    }
    const { lo, hi } = bracket(judged);
    // monotone verdicts: every C up to the truth meets, every C above misses, so the search ends
    // with lo ≤ truth < hi and hi − lo within the resolution
    expect(lo).toBeLessThanOrEqual(truth.capacity);
    expect(hi).toBeGreaterThan(truth.capacity);
    expect(truth.capacity - lo).toBeLessThanOrEqual(resolutionAt(lo) - 1);
    expect(Math.abs(lo - truth.capacity)).toBeLessThanOrEqual(Math.max(1, 0.05 * truth.capacity));
    // the bisection steps plus the confirmation cell
    expect(probes + 1).toBeLessThanOrEqual(maxSearchCells(initial.lo, initial.hi!));
  });
});
