import { describe, expect, test } from 'vitest';
import { figureSpread, medianFigures, prefillRepeats, repeatsOf } from '../../src/metrics/repeat-figures.js';
import type { CellFigures } from '../../src/shapes/result.js';

function figures(total: number, ttft: number, extra: Partial<CellFigures> = {}): CellFigures {
  return {
    outputTokens: Math.round(total * 10),
    tokenSource: 'usage',
    measuredForS: 10,
    totalTokensPerSecond: total,
    perRequestTokensPerSecond: total / 2,
    timeBetweenTokensMs: { median: 2000 / total, p90: 2200 / total, p99: 2400 / total, samples: 2 },
    ttftMs: { median: ttft, p90: ttft, p99: ttft, samples: 3 },
    clientActiveRequests: 2,
    averageActiveRequests: 2,
    averageActiveRequestsSource: 'client',
    activeRequestsDisagree: false,
    completedRequests: 4,
    failedRequests: 0,
    startedRequests: 6,
    ...extra,
  };
}

describe('repeats of a cell', () => {
  test('figures are per-field medians; counts stay whole numbers', () => {
    const m = medianFigures([figures(100, 30), figures(90, 50, { completedRequests: 5 }), figures(110, 40, { activeRequestsDisagree: true })]);
    expect(m.totalTokensPerSecond).toBe(100);
    expect(m.perRequestTokensPerSecond).toBe(50);
    expect(m.ttftMs).toEqual({ median: 40, p90: 40, p99: 40, samples: 3 });
    expect(m.outputTokens).toBe(1000);
    expect(m.completedRequests).toBe(4);
    expect(m.activeRequestsDisagree).toBe(true);
    // even count: mean of the middle two, rounded for integers
    expect(medianFigures([figures(100, 30, { failedRequests: 1 }), figures(90, 50, { failedRequests: 2 })]).failedRequests).toBe(2);
    // absent in every repeat stays absent
    const a = figures(100, 30);
    delete a.perRequestTokensPerSecond;
    const b = figures(90, 30);
    delete b.perRequestTokensPerSecond;
    expect('perRequestTokensPerSecond' in medianFigures([a, b])).toBe(false);
  });

  test('one repeat is returned as is; none is an error', () => {
    const f = figures(100, 30);
    expect(medianFigures([f])).toBe(f);
    expect(() => medianFigures([])).toThrow(RangeError);
  });

  test('spread: values, min, max and half range over median', () => {
    expect(figureSpread([100, 90, 110])).toEqual({ values: [100, 90, 110], min: 90, max: 110, relativeHalfRange: 0.1 });
    expect(figureSpread([undefined, undefined])).toBeUndefined();
    expect(figureSpread([0, 0])).toEqual({ values: [0, 0], min: 0, max: 0 });
    const r = repeatsOf([figures(100, 30), figures(90, 50), figures(110, 40)]);
    expect(r.count).toBe(3);
    expect(r.spread.totalTokensPerSecond?.relativeHalfRange).toBeCloseTo(0.1, 10);
    expect(r.spread.ttftMs?.relativeHalfRange).toBeCloseTo(0.25, 10);
  });
});

describe('repeats of a prefill row', () => {
  const f = (promptTokens: number, ttftMs: number) => ({ ok: true, figures: { promptTokens, ttftMs, promptTokensPerSecond: promptTokens / (ttftMs / 1000) } });
  const failed = { ok: false };

  test('figures are per-figure medians over the repeats that gave figures; spread of prompt tok/s and TTFT', () => {
    const { figures, repeats } = prefillRepeats([f(8192, 800), f(8190, 1000), f(8194, 900)]);
    // each figure is its own median (not prompt tokens / TTFT of the medians)
    expect(figures).toEqual({ promptTokens: 8192, ttftMs: 900, promptTokensPerSecond: 8194 / 0.9 });
    expect(repeats.count).toBe(3);
    expect(repeats.failed).toBe(0);
    expect(repeats.spread.ttftMs).toEqual({ values: [800, 1000, 900], min: 800, max: 1000, relativeHalfRange: 100 / 900 });
    expect(repeats.spread.promptTokensPerSecond?.values).toEqual([8192 / 0.8, 8190 / 1.0, 8194 / 0.9]);
  });

  test('failed repeats are counted and left out of the medians; all failed gives no figures', () => {
    const some = prefillRepeats([failed, f(4096, 400), f(4096, 600)]);
    expect(some.figures?.ttftMs).toBe(500);
    expect(some.repeats).toMatchObject({ count: 3, failed: 1 });
    expect(some.repeats.spread.ttftMs?.values).toEqual([400, 600]);
    const none = prefillRepeats([failed, failed]);
    expect(none.figures).toBeUndefined();
    expect(none.repeats).toEqual({ count: 2, failed: 2, spread: {} });
    expect(() => prefillRepeats([])).toThrow(RangeError);
    // an aborted request that got its figures counts as failed but keeps them in the medians
    const aborted = prefillRepeats([{ ...f(4096, 500), ok: false }]);
    expect(aborted.figures?.ttftMs).toBe(500);
    expect(aborted.repeats).toMatchObject({ count: 1, failed: 1 });
  });
});
