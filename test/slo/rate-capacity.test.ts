/**
 * The highest open-loop rate at the SLO: the rate cell's verdict (judge/slo-verdict.ts
 * rateSloVerdict), the search over rates with a fake probe (slo/rate-capacity.ts), the row
 * (judge/rate-capacity-row.ts), its words (text/capacity-line.ts), its budget and baseline gates.
 */
import { describe, expect, test } from 'vitest';
import type { RateCapacityRow, RateCellResult, RateFigures, SloVerdict } from '../../src/shapes/result.js';
import { MAX_RATE_PROBES, nextRateProbe, rateResolutionAt, searchRateCapacity, threeDigits, type RateJudged } from '../../src/slo/rate-capacity.js';
import { judgeRateCapacityRow, rateCapacityRow, rateJudgedOf } from '../../src/judge/rate-capacity-row.js';
import { rateSloVerdict, sloVerdict } from '../../src/judge/slo-verdict.js';
import { capacityRpsText, describeRateCapacity } from '../../src/text/capacity-line.js';
import { rateCapacityBudgetFailures } from '../../src/judge/thresholds.js';
import { compareRateCapacityRow } from '../../src/judge/compare-capacity.js';
import { parseSloText } from '../../src/slo/slo.js';

const slo = parseSloText('ttftP90<=500,perRequest>=20');
const dist = (median: number, p90 = median, p99 = p90) => ({ median, p90, p99, samples: 50 });
function figures(over: Partial<RateFigures> = {}): RateFigures {
  return {
    offeredRate: 10, sentRate: 10, completedRate: 10, totalTokensPerSecond: 320, outputTokens: 3200, scheduled: 100, sent: 100, completed: 100,
    failedRequests: 0, unsent: 0, ceilingWaited: 0, inSystem: { mean: 4, max: 7 }, dispatchDelayMs: dist(0.2, 0.5, 0.8),
    perRequestTokensPerSecond: dist(50), tbtMs: dist(20, 25, 30), ttftFromScheduleMs: dist(100, 300, 400), ttftFromSendMs: dist(90, 100, 110), ...over,
  };
}
const cell = (over: Partial<RateCellResult> = {}): RateCellResult => ({
  context: 8192, contextLabel: '8K', rate: 4, arrival: 'poisson', seed: 1, status: 'valid', statuses: ['valid'], evidence: {}, figures: figures(), finishedAt: '2026-12-01T00:00:00Z', ...over,
});

describe('rateSloVerdict', () => {
  test('TTFT is judged from the scheduled time, not from the send', () => {
    expect(rateSloVerdict(cell(), slo).meets).toBe(true);
    const late = rateSloVerdict(cell({ figures: figures({ ttftFromScheduleMs: dist(200, 900, 1200), ttftFromSendMs: dist(90, 100, 110) }) }), slo);
    expect(late.meets).toBe(false);
    expect(late.binding?.constraint).toBe('ttftMs');
    expect(late.binding?.detail).toBe('TTFT p90 900 ms > 500 ms');
  });
  test('per-request tok/s median, and p10 from the time between tokens p90, as for a decode cell', () => {
    expect(rateSloVerdict(cell({ figures: figures({ perRequestTokensPerSecond: dist(15) }) }), slo).binding?.constraint).toBe('perRequestTokensPerSecond');
    const p10 = parseSloText('perRequestP10>=45');
    // TBT p90 25 ms → 40 tok/s < 45
    expect(rateSloVerdict(cell(), p10).binding?.detail).toBe('per-request tok/s p10 40.0 < 45.0');
  });
  test('TBT, failed requests and goodput are constraints too', () => {
    expect(rateSloVerdict(cell(), parseSloText('tbtP99<=25')).binding?.constraint).toBe('timeBetweenTokensMs');
    expect(rateSloVerdict(cell({ figures: figures({ failedRequests: 2 }) }), parseSloText('errors<=0')).binding?.constraint).toBe('failedRequests');
    const g = parseSloText('ttftP90<=500,goodput>=0.9');
    const share = (s: number) => ({ requests: { met: s * 100, judged: 100, share: s }, tokens: { met: 0, total: 0, share: s } });
    expect(rateSloVerdict(cell({ goodput: share(0.95) }), g).meets).toBe(true);
    expect(rateSloVerdict(cell({ goodput: share(0.5) }), g).binding?.constraint).toBe('goodput');
  });
  test('a Saturated cell never meets the SLO, even when its window looked fine; a measured miss binds first', () => {
    const sat = rateSloVerdict(cell({ status: 'saturated', statuses: ['saturated'] }), slo);
    expect(sat.meets).toBe(false);
    expect(sat.binding?.constraint).toBe('saturated');
    const both = rateSloVerdict(cell({ status: 'saturated', statuses: ['saturated'], figures: figures({ ttftFromScheduleMs: dist(800, 2000, 3000) }) }), slo);
    expect(both.binding?.constraint).toBe('ttftMs');
    expect(both.misses.map((m) => m.constraint)).toEqual(['ttftMs', 'saturated']);
  });
  test('Client-limited and not-run cells are unmeasured; Over capacity binds as kvCapacity', () => {
    expect(rateSloVerdict(cell({ status: 'client-limited', statuses: ['client-limited'] }), slo).binding?.constraint).toBe('unmeasured');
    expect(rateSloVerdict(cell({ status: 'not-run', statuses: ['not-run'], figures: undefined }), slo).binding?.constraint).toBe('unmeasured');
    const over = rateSloVerdict(cell({ status: 'over-capacity', statuses: ['over-capacity'], figures: undefined, evidence: { overCapacity: { expectedInFlight: 12.5, requiredTokens: 110000, kvCapacityTokens: 65536, serviceS: 3.1, serviceFrom: '8K/1' } } }), slo);
    expect(over.binding?.constraint).toBe('kvCapacity');
    expect(over.binding?.detail).toMatch(/12\.5 in flight .* > KV capacity 65,536/);
  });
  test('a decode cell is judged as before (the shared core changes nothing for it)', () => {
    const dec = { context: 0, contextLabel: '0', concurrency: 1, status: 'valid', statuses: ['valid'], evidence: {}, figures: { perRequestTokensPerSecond: 10, ttftMs: dist(100, 600), timeBetweenTokensMs: dist(100), failedRequests: 0 } } as never;
    const v = sloVerdict(dec, slo);
    expect(v.misses.map((m) => m.detail)).toEqual(['per-request tok/s 10.0 < 20.0', 'TTFT p90 600 ms > 500 ms']);
    expect(v.binding?.constraint).toBe('perRequestTokensPerSecond');
  });
});

const MEETS: SloVerdict = { meets: true, misses: [] };
const miss = (rate: number): SloVerdict => {
  const m = { constraint: 'ttftMs' as const, label: 'TTFT p90', value: 500 + rate * 10, bound: 500, detail: `TTFT p90 ${500 + rate * 10} ms > 500 ms` };
  return { meets: false, misses: [m], binding: m };
};
/** a server that meets the SLO up to `truth` requests/s */
const judgeAt = (truth: number) => (rate: number, adaptive = false): RateJudged => ({ rate, verdict: rate <= truth ? MEETS : miss(rate), adaptive });

describe('the rate search', () => {
  test('resolution is 5 % of the passing rate; midpoints have 3 significant digits', () => {
    expect(rateResolutionAt(10)).toBeCloseTo(0.5);
    expect(threeDigits(11.2187)).toBe(11.2);
    expect(nextRateProbe([judgeAt(11.3)(8), judgeAt(11.3)(16)])).toBe(12);
    expect(nextRateProbe([judgeAt(11.3)(0.333), judgeAt(11.3)(16)])).toBe(8.17);
    // within 5 %: stop
    expect(nextRateProbe([judgeAt(10)(10), judgeAt(10)(10.4)])).toBeUndefined();
    // every rate met, or the lowest failed: nothing to bisect
    expect(nextRateProbe([judgeAt(100)(8), judgeAt(100)(16)])).toBeUndefined();
    expect(nextRateProbe([judgeAt(1)(8), judgeAt(1)(16)])).toBeUndefined();
  });

  test('bisects to within 5 % of the truth, then confirms at the answer, in at most 6 + 1 cells', async () => {
    for (const truth of [1.37, 5.05, 11.3, 14.9, 23.6, 31.9]) {
      const at = judgeAt(truth);
      const probes: Array<[number, string]> = [];
      const out = await searchRateCapacity({ columns: [1, 2, 4, 8, 16, 32].map((r) => at(r)), probe: async (r, why) => (probes.push([r, why]), at(r, true)) });
      const row = rateCapacityRow({ context: 8192, contextLabel: '8K', judged: out.judged, ...(out.confirmation ? { confirmation: out.confirmation } : {}) });
      expect(row.capacity).toBeLessThanOrEqual(truth);
      expect(truth - row.capacity).toBeLessThanOrEqual(0.05 * row.capacity + 1e-9);
      expect(probes.filter(([, why]) => why === 'bisection').length).toBeLessThanOrEqual(MAX_RATE_PROBES);
      expect(probes.at(-1)).toEqual([row.capacity, 'confirmation']);
      expect(row.adaptiveCells).toBe(probes.length);
      expect(row.confirmation).toEqual({ rate: row.capacity, meets: true });
      expect(row.bindingRate).toBeGreaterThan(row.capacity);
      expect(row.binding?.constraint).toBe('ttftMs');
    }
  });

  test('every rate met: at least the highest, nothing searched; the lowest failed: 0, nothing searched', async () => {
    const never = async (): Promise<RateJudged> => {
      throw new Error('no probe expected');
    };
    const all = await searchRateCapacity({ columns: [1, 2, 4].map((r) => judgeAt(99)(r)), probe: never });
    const allRow = rateCapacityRow({ context: 0, contextLabel: '0', judged: all.judged });
    expect(allRow).toMatchObject({ capacity: 4, atLeast: true, adaptiveCells: 0 });
    expect(describeRateCapacity(allRow)).toBe('0: ≥ 4 req/s (every rate met the SLO; the highest is 4 req/s)');
    const none = await searchRateCapacity({ columns: [1, 2, 4].map((r) => judgeAt(0.5)(r)), probe: never });
    const noneRow = rateCapacityRow({ context: 0, contextLabel: '0', judged: none.judged });
    expect(noneRow).toMatchObject({ capacity: 0, atLeast: false, bindingRate: 1 });
    expect(describeRateCapacity(noneRow)).toBe('0: 0 req/s (binds: TTFT p90 510 ms > 500 ms at 1 req/s)');
    expect(capacityRpsText(noneRow)).toBe('0 req/s');
  });

  test('the lowest rate could not be judged (Client-limited): "not found", not "0 req/s"; the budget and the baseline fail saying why', () => {
    const unjudged = { constraint: 'unmeasured' as const, label: 'Client-limited', detail: "0@1/s is Client-limited: its latencies from the schedule are partly the client's" };
    const row = rateCapacityRow({ context: 0, contextLabel: '0', judged: [{ rate: 1, verdict: { meets: false, misses: [unjudged], binding: unjudged }, adaptive: false }, judgeAt(99)(2)] });
    expect(row.capacity).toBe(0);
    expect(describeRateCapacity(row)).toBe("0: not found: the lowest rate searched could not be judged (0@1/s is Client-limited: its latencies from the schedule are partly the client's)");
    expect(capacityRpsText(row)).toBe('not found');
    expect(rateCapacityBudgetFailures(row, 0.5, 0)).toEqual(["rate capacity 0: not found, budget 0.5 req/s: the lowest rate searched could not be judged (0@1/s is Client-limited: its latencies from the schedule are partly the client's)"]);
    const base = rateCapacityRow({ context: 0, contextLabel: '0', judged: [1, 2, 4].map((r) => judgeAt(2)(r)) });
    const delta = compareRateCapacityRow(base, row, { absolute: 0, relative: 0.1 });
    expect(delta).toMatchObject({ verdict: 'not-comparable', fails: true });
    expect(delta.message).toMatch(/^rate capacity 0: not found vs baseline 2 req\/s: the lowest rate searched could not be judged/);
    // a baseline not found: not Improved (its 0 is no measurement), no failure
    const back = compareRateCapacityRow(row, base, { absolute: 0, relative: 0.1 });
    expect(back).toMatchObject({ verdict: 'not-comparable', fails: false });
    expect(back.message).toMatch(/^rate capacity 0: not found in the baseline: /);
  });

  test('a rate that meets above the first failing one does not raise the capacity', async () => {
    const judged = [judgeAt(5)(2), judgeAt(5)(8), { rate: 16, verdict: MEETS, adaptive: false }];
    const row = rateCapacityRow({ context: 0, contextLabel: '0', judged });
    expect(row.capacity).toBe(2);
    expect(row.bindingRate).toBe(8);
  });

  test('the words: found, binding, unconfirmed', () => {
    const row = rateCapacityRow({ context: 8192, contextLabel: '8K', judged: [judgeAt(11.2)(11.2, true), judgeAt(11.2)(12.4, true)], confirmation: { rate: 11.2, verdict: miss(11.2) } });
    expect(describeRateCapacity(row)).toBe('8K: 11.2 req/s (binds: TTFT p90 624 ms > 500 ms at 12.4 req/s); unconfirmed: the final cell at 11.2 req/s missed TTFT p90 612 ms > 500 ms');
    // a final cell without figures to judge (Client-limited) was not missed: it could not be judged
    const unmeasured = { constraint: 'unmeasured' as const, label: 'status', detail: "8K@11.2/s is Client-limited: its latencies from the schedule are partly the client's" };
    const blind = rateCapacityRow({ context: 8192, contextLabel: '8K', judged: [judgeAt(11.2)(11.2, true), judgeAt(11.2)(12.4, true)], confirmation: { rate: 11.2, verdict: { meets: false, misses: [unmeasured], binding: unmeasured } } });
    expect(describeRateCapacity(blind)).toBe(`8K: 11.2 req/s (binds: TTFT p90 624 ms > 500 ms at 12.4 req/s); unconfirmed: the final cell at 11.2 req/s could not be judged (${unmeasured.detail})`);
    // a final cell Over capacity names the KV capacity, as a binding does
    const kv = { constraint: 'kvCapacity' as const, label: 'KV capacity', detail: '12.0 in flight × 4,160 tokens a request = 49,920 tokens > KV capacity 40,000' };
    const full = rateCapacityRow({ context: 8192, contextLabel: '8K', judged: [judgeAt(11.2)(11.2, true), judgeAt(11.2)(12.4, true)], confirmation: { rate: 11.2, verdict: { meets: false, misses: [kv], binding: kv } } });
    expect(describeRateCapacity(full)).toMatch(/; unconfirmed: the final cell at 11\.2 req\/s missed KV capacity: 12\.0 in flight × /);
  });

  test('a cell result becomes a judged entry only with a verdict; not-run cells are not measured', () => {
    expect(rateJudgedOf(cell(), false)).toBeUndefined();
    const v = rateSloVerdict(cell(), slo);
    expect(rateJudgedOf(cell({ slo: v }), true)).toEqual({ rate: 4, verdict: v, adaptive: true });
    expect(rateJudgedOf(cell({ status: 'not-run', slo: v }), true)?.measured).toBe(false);
  });
});

const row = (capacity: number, over: Partial<RateCapacityRow> = {}): RateCapacityRow => ({
  context: 8192, contextLabel: '8K', capacity, atLeast: false, searched: [], adaptiveCells: 4, resolution: 0.05 * capacity,
  binding: miss(capacity * 1.05).binding!, bindingRate: Number((capacity * 1.05).toPrecision(3)), ...over,
});

describe('the rate capacity gates', () => {
  test('the budget, with slack, names the context and both rates', () => {
    expect(rateCapacityBudgetFailures(row(11.2), 10.5, 0)).toEqual([]);
    expect(rateCapacityBudgetFailures(row(11.2), undefined, 0)).toEqual([]);
    expect(rateCapacityBudgetFailures(row(9.1), 10.5, 0)).toEqual(['rate capacity 8K: the highest rate at the SLO is 9.1 req/s, below its budget 10.5 req/s; binds: TTFT p90 595.55 ms > 500 ms at 9.55 req/s']);
    expect(rateCapacityBudgetFailures(row(10), 10.5, 0.1)).toEqual([]);
    expect(rateCapacityBudgetFailures(row(9), 10.5, 0.1)[0]).toMatch(/^rate capacity 8K: the highest rate at the SLO is 9 req\/s, below its budget 10.5 req\/s \(slack 10 %: 9.45 req\/s\)/);
    expect(rateCapacityBudgetFailures(row(8, { atLeast: true }), 10.5, 0)[0]).toMatch(/every rate met the SLO, but the highest is 8 req\/s, below its budget 10.5 req\/s; add a rate of at least 10.5 req\/s/);
  });

  test('against the baseline: the capacity noise band (5 %, never under the search resolution)', () => {
    const tol = { relative: 0.05, absolute: 1 };
    expect(compareRateCapacityRow(row(11.2), row(10.8), tol)).toMatchObject({ verdict: 'within-noise', fails: false });
    const down = compareRateCapacityRow(row(11.2), row(9.1), tol);
    expect(down).toMatchObject({ verdict: 'regressed', fails: true });
    expect(down.message).toBe('rate capacity 8K: the highest rate at the SLO is 9.1 req/s vs baseline 11.2 req/s (−2.1 req/s, allowed −0.56 req/s); binds: TTFT p90 595.55 ms > 500 ms at 9.55 req/s');
    expect(compareRateCapacityRow(row(9.1), row(11.2), tol).verdict).toBe('improved');
    expect(compareRateCapacityRow(row(11.2), row(8, { atLeast: true }), tol)).toMatchObject({ verdict: 'not-comparable', fails: false });
    expect(compareRateCapacityRow(row(11.2), undefined, tol)).toMatchObject({ verdict: 'not-comparable', message: 'not searched in the new run' });
  });

  test('judgeRateCapacityRow stores the budget and baseline lines, and names cells it could not measure', () => {
    const judged = [judgeAt(5)(4), judgeAt(5)(8)];
    const notRun = cell({ rate: 6, status: 'not-run', statuses: ['not-run'], figures: undefined, notRunReason: 'server unreachable' });
    const { row: r, unmeasured } = judgeRateCapacityRow({ context: 8192, contextLabel: '8K', judged }, [notRun], { slo, budgetMin: 5, slack: 0 });
    expect(r.thresholdFailures).toEqual(['rate capacity 8K: the highest rate at the SLO is 4 req/s, below its budget 5 req/s; binds: TTFT p90 580 ms > 500 ms at 8 req/s']);
    expect(unmeasured).toEqual(["rate capacity 8K: the search's cell at 6 req/s could not be measured (server unreachable), so 4 req/s is only a lower bound"]);
  });
});
