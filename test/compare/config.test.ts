import { describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { simOverridesOf } from '../../src/matrix/open.js';
import { parseThresholds } from '../../src/thresholds/load.js';
import { isThresholdsSchemaCurrent } from '../../src/thresholds/gen-schema.js';
import { resolveTolerances } from '../../src/thresholds/tolerances.js';
import { renderStepSummary } from '../../src/pages/step-summary.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

describe('LLM_BENCH_REPEAT, LLM_BENCH_BASELINE, LLM_BENCH_SIM_OVERRIDES', () => {
  test('resolved from the environment', () => {
    const cfg = resolveSuite({}, { LLM_BENCH_REPEAT: '3', LLM_BENCH_BASELINE: 'base/speed-matrix.json', LLM_BENCH_SIM_OVERRIDES: '{"stepBaseMs":12}' });
    expect(cfg.repeat).toBe(3);
    expect(cfg.baselinePath).toBe('base/speed-matrix.json');
    expect(cfg.simOverrides).toEqual({ stepBaseMs: 12 });
    expect(resolveSuite({}, {}).repeat).toBe(1);
  });
  test('bad values are errors naming the variable and an example', () => {
    expect(() => resolveSuite({}, { LLM_BENCH_REPEAT: '0' })).toThrow('LLM_BENCH_REPEAT: "0" must be a positive whole number; e.g. LLM_BENCH_REPEAT=3');
    expect(() => resolveSuite({}, { LLM_BENCH_SIM_OVERRIDES: '{stepBaseMs:12}' })).toThrow(
      /^LLM_BENCH_SIM_OVERRIDES is not valid JSON \(.*\); give a JSON object of simulator profile fields, e\.g\. LLM_BENCH_SIM_OVERRIDES='\{"stepBaseMs":12\}'$/,
    );
    expect(() => resolveSuite({}, { LLM_BENCH_SIM_OVERRIDES: '[1]' })).toThrow('LLM_BENCH_SIM_OVERRIDES must be a JSON object');
  });
  test('overrides are checked against the simulator profile', () => {
    const cfg = (json: string) => resolveSuite({}, { LLM_BENCH_SIM_PROFILE: 'tiny', LLM_BENCH_SIM_OVERRIDES: json });
    expect(simOverridesOf(cfg('{"stepBaseMs":12}'))).toEqual({ overrides: { stepBaseMs: 12 } });
    expect(() => simOverridesOf(cfg('{"stepMs":12}'))).toThrow(/LLM_BENCH_SIM_OVERRIDES: "stepMs" is not a simulator profile field; use one of .*stepBaseMs/);
    expect(() => simOverridesOf(cfg('{"stepBaseMs":"12"}'))).toThrow('LLM_BENCH_SIM_OVERRIDES: "stepBaseMs" must be a number like the profile\'s 10, got "12"');
    expect(() => simOverridesOf(cfg('{"stepBaseMs":0}'))).toThrow(/^LLM_BENCH_SIM_OVERRIDES: .*stepBaseMs/);
    expect(simOverridesOf(resolveSuite({}, {}))).toEqual({});
  });
});

describe('tolerances.regression in the threshold file', () => {
  test('parsed and applied per figure', () => {
    const file = parseThresholds(
      JSON.stringify({ tolerances: { regression: { cells: { ttftMs: { relative: 0.2, absolute: 20 } }, prefill: { promptTokensPerSecond: 0.15 } } } }),
      'th.json',
    );
    const t = resolveTolerances(file.tolerances?.regression);
    expect(t.cells.ttftMs).toEqual({ relative: 0.2, absolute: 20 });
    expect(t.cells.totalTokensPerSecond).toEqual({ relative: 0.05, absolute: 0 });
    expect(t.prefill.promptTokensPerSecond).toEqual({ relative: 0.15, absolute: 0 });
  });
  test('an unknown figure or a negative tolerance is an error naming where', () => {
    expect(() => parseThresholds(JSON.stringify({ tolerances: { regression: { cells: { ttft: 0.1 } } } }), 'th.json')).toThrow(
      'tolerances.regression.cells: unknown key "ttft"; allowed: totalTokensPerSecond, perRequestTokensPerSecond, ttftMs, timeBetweenTokensMs',
    );
    expect(() => parseThresholds(JSON.stringify({ tolerances: { regression: { cells: { ttftMs: -1 } } } }), 'th.json')).toThrow(
      /tolerances\.regression\.cells\.ttftMs/,
    );
  });
  test('the editor schema is current', () => {
    expect(isThresholdsSchemaCurrent()).toBe(true);
  });
});

describe('job summary', () => {
  test('the grid, and failures only when there are some', () => {
    const r = sglangResult();
    const plain = renderStepSummary(r);
    expect(plain).toContain('## Speed matrix: Muse-Glimmer-30B on H200 NVL 141GB');
    expect(plain).toContain('40 of 40 cells · 30 s windows');
    expect(plain).toContain('| 8K | 59.3 · Requests queued · 122 ms TTFT | **114.2** tok/s · 186 ms TTFT |');
    expect(plain).not.toContain('###');
    r.info.baselinePath = 'main/speed-matrix.json';
    r.cells[4]!.baselineFailures = ['8K/16 totalTokensPerSecond 690.1 vs baseline 857.3: −19.5% (tolerance 5%)'];
    r.cells[5]!.thresholdFailures = ['8K/32 ttftMs 900.0 > max 800.0 (12.5% above)'];
    const md = renderStepSummary(r);
    expect(md).toContain('### Regressions against the baseline `main/speed-matrix.json`\n\n- 8K/16 totalTokensPerSecond 690.1 vs baseline 857.3: −19.5% (tolerance 5%)');
    expect(md).toContain('### Threshold failures\n\n- 8K/32 ttftMs 900.0 > max 800.0 (12.5% above)');
  });
});
