/**
 * The open-loop rate cells' configuration: matrix.rates / arrival / rampS / maxInFlight / rateSeed
 * and their LLM_BENCH_* variables, resolved into `ResolvedSuite.rates` (the result's RateSettings),
 * and every bad input stopped with an error naming the field and the fix.
 */
import { describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { KNOWN_ENV_VARIABLES, readEnvOverrides } from '../../src/config/env.js';
import type { MatrixInput } from '../../src/config/suite-input.js';

const url = 'http://127.0.0.1:8000';
const resolveMatrix = (matrix: MatrixInput, env: Record<string, string> = {}) => resolveSuite({ target: { url }, matrix }, env);
const error = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('no error');
};

describe('rate settings resolved', () => {
  test('no rates: no rate settings, whatever else is set', () => {
    expect(resolveMatrix({}).rates).toBeUndefined();
    expect(resolveMatrix({ rates: [], arrival: 'constant', maxInFlight: 8 }).rates).toBeUndefined();
    expect(resolveSuite({}, {}).rates).toBeUndefined();
  });

  test('rates alone: the defaults (poisson, seed 1, no ramp, 512 in flight), rates ascending and unique', () => {
    expect(resolveMatrix({ rates: [4, 0.5, 2, 1, 2] }).rates).toEqual({ rates: [0.5, 1, 2, 4], arrival: 'poisson', seed: 1, rampS: 0, maxInFlight: 512 });
  });

  test('every field from the suite; the arrival in its canonical text', () => {
    const r = resolveMatrix({ rates: [1], arrival: ' Gamma : 0.5 ', rampS: 3, maxInFlight: 64, rateSeed: 0, windowS: 10 }).rates;
    expect(r).toEqual({ rates: [1], arrival: 'gamma:0.5', seed: 0, rampS: 3, maxInFlight: 64 });
    expect(resolveMatrix({ rates: [1], arrival: 'constant' }).rates?.arrival).toBe('constant');
  });

  test('the environment wins over the suite, field by field', () => {
    const r = resolveMatrix(
      { rates: [1, 2], arrival: 'constant', rampS: 1, maxInFlight: 64, rateSeed: 3, windowS: 30 },
      { LLM_BENCH_RATES: '0.5, 8', LLM_BENCH_ARRIVAL: 'gamma:2', LLM_BENCH_RAMP_S: '2.5', LLM_BENCH_MAX_IN_FLIGHT: '1024', LLM_BENCH_RATE_SEED: '7' },
    ).rates;
    expect(r).toEqual({ rates: [0.5, 8], arrival: 'gamma:2', seed: 7, rampS: 2.5, maxInFlight: 1024 });
    // one variable alone leaves the suite's other fields
    expect(resolveMatrix({ rates: [1], arrival: 'constant', rateSeed: 3 }, { LLM_BENCH_RATE_SEED: '9' }).rates).toMatchObject({ arrival: 'constant', seed: 9 });
  });

  test('LLM_BENCH_RATES gives rates to a suite without them; none (or empty) turns the suite\'s off', () => {
    expect(resolveMatrix({}, { LLM_BENCH_RATES: '2' }).rates?.rates).toEqual([2]);
    expect(resolveMatrix({ rates: [1, 2] }, { LLM_BENCH_RATES: 'none' }).rates).toBeUndefined();
    expect(resolveMatrix({ rates: [1, 2] }, { LLM_BENCH_RATES: 'NONE' }).rates).toBeUndefined();
    expect(resolveMatrix({ rates: [1, 2] }, { LLM_BENCH_RATES: '' }).rates).toBeUndefined();
  });

  test('a ramp as long as the window is allowed', () => {
    expect(resolveMatrix({ rates: [1], rampS: 10, windowS: 10 }).rates?.rampS).toBe(10);
  });

  test('the variables are known (not typos)', () => {
    for (const name of ['LLM_BENCH_RATES', 'LLM_BENCH_ARRIVAL', 'LLM_BENCH_RAMP_S', 'LLM_BENCH_MAX_IN_FLIGHT', 'LLM_BENCH_RATE_SEED']) {
      expect(KNOWN_ENV_VARIABLES).toContain(name);
    }
    expect(error(() => readEnvOverrides({ LLM_BENCH_RATE: '1' }))).toContain('did you mean LLM_BENCH_RATES?');
  });
});

describe('bad rate input: an error naming the field and the fix', () => {
  test.each<[string, MatrixInput, string]>([
    ['a rate of 0', { rates: [1, 0] }, 'matrix.rates.1: a rate must be above 0 requests/s, e.g. [0.5, 1, 2, 4]'],
    ['a negative rate', { rates: [-2] }, 'matrix.rates.0: a rate must be above 0 requests/s'],
    ['a non-numeric rate', { rates: ['fast' as unknown as number] }, 'matrix.rates.0: a rate is a number of requests/s, e.g. [0.5, 1, 2, 4]'],
    ['an infinite rate', { rates: [Infinity] }, 'matrix.rates.0: a rate is a number of requests/s'],
    ['an unknown process', { arrival: 'weibull' }, 'matrix.arrival: "weibull" is not an arrival process: use poisson (the default), constant, or gamma:B'],
    ['burstiness 0', { arrival: 'gamma:0' }, 'matrix.arrival: the burstiness must be a number above 0, got "0"'],
    ['burstiness below 0', { arrival: 'gamma:-1' }, 'matrix.arrival: the burstiness must be a number above 0, got "-1"'],
    ['gamma without burstiness', { arrival: 'gamma' }, 'matrix.arrival: gamma needs a burstiness: "gamma:0.5"'],
    ['a negative ramp', { rampS: -1 }, 'matrix.rampS: the ramp is a number of seconds ≥ 0 (0: none), e.g. 5'],
    ['a non-integer ceiling', { maxInFlight: 1.5 }, 'matrix.maxInFlight: the in-flight ceiling is a whole number of requests ≥ 1, e.g. 512'],
    ['a ceiling of 0', { maxInFlight: 0 }, 'matrix.maxInFlight: the in-flight ceiling is a whole number of requests ≥ 1'],
    ['a non-integer seed', { rateSeed: 0.5 }, 'matrix.rateSeed: the seed is a whole number ≥ 0, e.g. 1'],
    ['a negative seed', { rateSeed: -1 }, 'matrix.rateSeed: the seed is a whole number ≥ 0'],
  ])('suite: %s', (_, matrix, message) => {
    expect(error(() => resolveMatrix(matrix))).toContain(message);
  });

  test('suite: a ramp longer than the window names matrix.rampS, and the fix', () => {
    expect(error(() => resolveMatrix({ rates: [1], rampS: 12, windowS: 10 }))).toBe(
      'matrix.rampS: a ramp of 12 s is longer than the 10 s window; shorten the ramp to at most the window (e.g. rampS: 5) or lengthen the window',
    );
    // the window from the environment counts
    expect(error(() => resolveMatrix({ rates: [1], rampS: 5 }, { LLM_BENCH_DURATION_S: '2' }))).toContain('matrix.rampS: a ramp of 5 s is longer than the 2 s window');
  });

  test.each([
    ['LLM_BENCH_RATES', '1,0', 'LLM_BENCH_RATES: "0" must be above 0 requests/s; e.g. LLM_BENCH_RATES=0.5,1,2,4 (or none)'],
    ['LLM_BENCH_RATES', '-1', 'LLM_BENCH_RATES: "-1" must be above 0 requests/s'],
    ['LLM_BENCH_RATES', '1,fast', 'LLM_BENCH_RATES: "fast" is not a rate; give requests/s as numbers, e.g. LLM_BENCH_RATES=0.5,1,2,4 (or none)'],
    ['LLM_BENCH_RATES', '1,,2', 'LLM_BENCH_RATES: "" is not a rate'],
    ['LLM_BENCH_RATES', '2/s', 'LLM_BENCH_RATES: "2/s" is not a rate'],
    ['LLM_BENCH_ARRIVAL', 'uniform', 'LLM_BENCH_ARRIVAL: "uniform" is not an arrival process'],
    ['LLM_BENCH_ARRIVAL', 'gamma:0', 'LLM_BENCH_ARRIVAL: the burstiness must be a number above 0, got "0"'],
    ['LLM_BENCH_ARRIVAL', 'gamma:-0.5', 'LLM_BENCH_ARRIVAL: the burstiness must be a number above 0'],
    ['LLM_BENCH_RAMP_S', '-2', 'LLM_BENCH_RAMP_S: "-2" must be a number of seconds ≥ 0; e.g. LLM_BENCH_RAMP_S=5 (0: no ramp)'],
    ['LLM_BENCH_MAX_IN_FLIGHT', '1.5', 'LLM_BENCH_MAX_IN_FLIGHT: "1.5" must be a positive whole number; e.g. LLM_BENCH_MAX_IN_FLIGHT=512'],
    ['LLM_BENCH_MAX_IN_FLIGHT', '0', 'LLM_BENCH_MAX_IN_FLIGHT: "0" must be a positive whole number'],
    ['LLM_BENCH_RATE_SEED', '-1', 'LLM_BENCH_RATE_SEED: "-1" must be a whole number ≥ 0; e.g. LLM_BENCH_RATE_SEED=1'],
    ['LLM_BENCH_RATE_SEED', '1.5', 'LLM_BENCH_RATE_SEED: "1.5" must be a whole number ≥ 0'],
  ])('%s=%s', (name, value, message) => {
    expect(error(() => readEnvOverrides({ [name]: value }))).toContain(message);
  });

  test('environment: a ramp longer than the window names LLM_BENCH_RAMP_S', () => {
    expect(error(() => resolveMatrix({ rates: [1], windowS: 10 }, { LLM_BENCH_RAMP_S: '11' }))).toBe(
      'LLM_BENCH_RAMP_S: a ramp of 11 s is longer than the 10 s window; shorten the ramp to at most the window (e.g. LLM_BENCH_RAMP_S=5) or lengthen the window',
    );
  });

  test('the environment checks its arrival even where the suite has its own', () => {
    expect(error(() => resolveMatrix({ rates: [1], arrival: 'poisson' }, { LLM_BENCH_ARRIVAL: 'gamma' }))).toContain('LLM_BENCH_ARRIVAL: gamma needs a burstiness');
  });
});
