import { describe, expect, test } from 'vitest';
import { readEnvOverrides } from '../../src/config/env.js';
import { ConfigError } from '../../src/errors.js';
import { resolveSuite } from '../../src/config/resolve.js';
import type { SuiteInput } from '../../src/config/schema.js';

const SUITE_SLO = { perRequestTokensPerSecond: { min: 20 }, ttftMs: { p90: { max: 2000 } } };

describe('LLM_BENCH_SLO', () => {
  test('readEnvOverrides parses it into a normalized Slo', () => {
    expect(readEnvOverrides({ LLM_BENCH_SLO: 'perRequest>=20,ttftP90<=2000,tbtP99<=100,errors=0,goodput>=90%' }).slo).toEqual({
      perRequestTokensPerSecond: { stat: 'median', min: 20 },
      ttftMs: { stat: 'p90', max: 2000 },
      timeBetweenTokensMs: { stat: 'p99', max: 100 },
      failedRequests: { max: 0 },
      goodput: { min: 0.9 },
      text: 'perRequest>=20,ttftP90<=2000,tbtP99<=100,errors<=0,goodput>=90%',
    });
  });

  test('unset or blank: no SLO', () => {
    expect(readEnvOverrides({}).slo).toBeUndefined();
    expect(readEnvOverrides({ LLM_BENCH_SLO: '' }).slo).toBeUndefined();
    expect(readEnvOverrides({ LLM_BENCH_SLO: '   ' }).slo).toBeUndefined();
    expect(resolveSuite({}, { LLM_BENCH_SLO: '' })).not.toHaveProperty('slo');
  });

  test('resolveSuite: the env var sets cfg.slo', () => {
    const cfg = resolveSuite({}, { LLM_BENCH_SLO: ' ttftP99<=3000 , errors=1 ' });
    expect(cfg.slo).toEqual({ ttftMs: { stat: 'p99', max: 3000 }, failedRequests: { max: 1 }, text: 'ttftP99<=3000,errors<=1' });
  });

  test('resolveSuite: the suite slo sets cfg.slo', () => {
    const cfg = resolveSuite({ slo: SUITE_SLO }, {});
    expect(cfg.slo).toEqual({
      perRequestTokensPerSecond: { stat: 'median', min: 20 },
      ttftMs: { stat: 'p90', max: 2000 },
      text: 'perRequest>=20,ttftP90<=2000',
    });
  });

  test('resolveSuite: no slo anywhere, no cfg.slo (the key is absent)', () => {
    expect(resolveSuite({}, {})).not.toHaveProperty('slo');
  });

  test('resolveSuite: the env var wins over the suite, as every LLM_BENCH_* does (it replaces it, no merge)', () => {
    const cfg = resolveSuite({ slo: SUITE_SLO }, { LLM_BENCH_SLO: 'tbtP90<=40' });
    expect(cfg.slo).toEqual({ timeBetweenTokensMs: { stat: 'p90', max: 40 }, text: 'tbtP90<=40' });
    // like LLM_BENCH_MODEL over target.model in the same call
    const both = resolveSuite({ slo: SUITE_SLO, target: { model: 'suite-model' } }, { LLM_BENCH_SLO: 'tbtP90<=40', LLM_BENCH_MODEL: 'env-model' });
    expect(both.target.model).toBe('env-model');
    expect(both.slo?.text).toBe('tbtP90<=40');
  });

  test('a bad env value fails with a ConfigError naming LLM_BENCH_SLO, from readEnvOverrides and resolveSuite alike', () => {
    for (const bad of ['latency<=5', 'ttft>=5', 'goodput>=150%', 'errors=0.5', ',', 'garbage']) {
      expect(() => readEnvOverrides({ LLM_BENCH_SLO: bad })).toThrow(ConfigError);
      expect(() => readEnvOverrides({ LLM_BENCH_SLO: bad })).toThrow(/^LLM_BENCH_SLO[: ]/);
      expect(() => resolveSuite({}, { LLM_BENCH_SLO: bad })).toThrow(/^LLM_BENCH_SLO[: ]/);
      // a valid suite slo does not hide a bad env var
      expect(() => resolveSuite({ slo: SUITE_SLO }, { LLM_BENCH_SLO: bad })).toThrow(/LLM_BENCH_SLO/);
    }
    expect(() => readEnvOverrides({ LLM_BENCH_SLO: 'latency<=5' })).toThrow('LLM_BENCH_SLO: "latency" is not an SLO figure');
  });

  test('a suite slo with no constraint is a ConfigError with an example', () => {
    expect(() => resolveSuite({ slo: {} }, {})).toThrow(ConfigError);
    expect(() => resolveSuite({ slo: {} }, {})).toThrow('slo: names no constraint; e.g. slo: { perRequestTokensPerSecond');
    // a mistake in the suite is reported even while LLM_BENCH_SLO replaces it (as zod's checks of it are)
    expect(() => resolveSuite({ slo: {} }, { LLM_BENCH_SLO: 'ttft<=100' })).toThrow('slo: names no constraint');
  });

  test('a malformed suite slo is rejected with its path', () => {
    expect(() => resolveSuite({ slo: { latencyMs: { max: 5 } } } as unknown as SuiteInput, {})).toThrow(ConfigError);
    expect(() => resolveSuite({ slo: { latencyMs: { max: 5 } } } as unknown as SuiteInput, {})).toThrow(/invalid speed-matrix suite[\s\S]*slo[\s\S]*latencyMs/);
    expect(() => resolveSuite({ slo: { ttftMs: { p90: { max: 0 } } } } as unknown as SuiteInput, {})).toThrow(/- slo\.ttftMs/);
    expect(() => resolveSuite({ slo: { goodput: { min: 90 } } } as unknown as SuiteInput, {})).toThrow(/- slo\.goodput\.min/);
    expect(() => resolveSuite({ slo: { failedRequests: { max: 0.5 } } } as unknown as SuiteInput, {})).toThrow(/- slo\.failedRequests\.max/);
  });
});
