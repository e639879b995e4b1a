/**
 * The reporter's settings are resolved once (src/config/settings.ts): options over the
 * environment over DEFAULTS, and what they say reaches the printer of progress lines.
 */
import { describe, expect, test } from 'vitest';
import { DEFAULTS } from '../../src/config/defaults.js';
import { resolveRunSettings } from '../../src/config/settings.js';
import { progressPrinter } from '../../src/matrix/progress.js';

describe('resolveRunSettings', () => {
  test('the results folder: the option, else LLM_BENCH_OUT (trimmed), else the default', () => {
    expect(resolveRunSettings({ outDir: 'mine' }, { LLM_BENCH_OUT: 'env' }).outDir).toBe('mine');
    expect(resolveRunSettings({}, { LLM_BENCH_OUT: ' out ' }).outDir).toBe('out');
    expect(resolveRunSettings({}, { LLM_BENCH_OUT: '  ' }).outDir).toBe(DEFAULTS.outDir);
    expect(resolveRunSettings({}, {}).outDir).toBe('reports');
  });

  test('the threshold file, the baseline and the job summary', () => {
    const s = resolveRunSettings({}, { LLM_BENCH_THRESHOLDS: 't.json', LLM_BENCH_BASELINE: ' base.json ', GITHUB_STEP_SUMMARY: '/s.md' });
    expect(s).toMatchObject({ thresholdsPath: 't.json', baseline: 'base.json', stepSummaryPath: '/s.md' });
    expect(resolveRunSettings({ thresholdsPath: 'o.json', stepSummaryPath: 'o.md' }, { LLM_BENCH_THRESHOLDS: 't.json', GITHUB_STEP_SUMMARY: '/s.md' })).toMatchObject({
      thresholdsPath: 'o.json',
      stepSummaryPath: 'o.md',
    });
    expect(resolveRunSettings({}, {})).toEqual({ outDir: 'reports', update: { all: false }, quiet: false, debug: false, githubActions: false });
  });

  test('-u: headroom and LLM_BENCH_UPDATE=all, or the reason they cannot be used (never a throw)', () => {
    expect(resolveRunSettings({}, { LLM_BENCH_HEADROOM: '0.25', LLM_BENCH_UPDATE: 'all' }).update).toEqual({ headroom: 0.25, all: true });
    expect(resolveRunSettings({}, { LLM_BENCH_HEADROOM: '2' }).update).toEqual({ error: expect.stringMatching(/^LLM_BENCH_HEADROOM: "2" must be a fraction/) });
    expect(resolveRunSettings({}, { LLM_BENCH_CONCURENCY: '4' }).update).toEqual({ error: expect.stringMatching(/did you mean LLM_BENCH_CONCURRENCY/) });
  });

  test('quiet, JUnit, debug, GitHub Actions', () => {
    const s = resolveRunSettings({}, { LLM_BENCH_QUIET: '1', LLM_BENCH_JUNIT: ' j.xml ', LLM_BENCH_DEBUG: 'true', GITHUB_ACTIONS: 'true' });
    expect(s).toMatchObject({ quiet: true, junitPath: 'j.xml', debug: true, githubActions: true });
  });
});

describe('progress lines follow the resolved settings', () => {
  test('LLM_BENCH_QUIET=1 silences them; otherwise each is one stamped line', () => {
    const written: string[] = [];
    progressPrinter(resolveRunSettings({}, { LLM_BENCH_QUIET: '1' }), (t) => written.push(t))('window open');
    expect(written).toEqual([]);
    progressPrinter(resolveRunSettings({}, {}), (t) => written.push(t))('window open');
    expect(written).toEqual([expect.stringMatching(/^\[speed-matrix \d\d:\d\d:\d\d\] window open\n$/)]);
  });
});
