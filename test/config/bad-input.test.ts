/**
 * Bad input a user can give, each stopped before a run starts with an error naming the field and
 * the fix, where it used to be accepted and then went wrong: a simulator profile that is not one
 * (the simulator's stack trace, later), durations too long for a timer (a timer that long fires at
 * once), a run name that is a path, an endpoint given as the base URL, an on/off variable with a
 * value read as off, a misspelt fault in LLM_BENCH_SIM_OVERRIDES (never injected), a throughput
 * tolerance written as a percentage, a typo hint that named an unrelated variable, and
 * `compare --thresholds` with a file that is not there (its default tolerances, silently).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { resolveSuite } from '../../src/config/resolve.js';
import { baseUrlOf } from '../../src/config/names.js';
import { nearestEnvVariable, readEnvOverrides, RUN_ENV_VARIABLES } from '../../src/config/env.js';
import { resolveRunSettings } from '../../src/config/settings.js';
import type { SuiteInput } from '../../src/config/suite-input.js';
import { simOverridesOf } from '../../src/matrix/open.js';
import { resolveSimProfile } from '../../src/sim/index.js';
import { parseThresholds } from '../../src/thresholds/load.js';
import { runCompareCli } from '../../src/compare/cli.js';
import { runReportCli } from '../../src/report/cli.js';
import { runInit } from '../../src/init/init.js';
import { parseSimArgs } from '../../src/sim/cli.js';
import { parseSloText } from '../../src/slo/slo.js';
import { ConfigError } from '../../src/errors.js';
import { MAX_TIMER_MS, timerLimitMs } from '../../src/config/defaults.js';
import { sglangResult } from '../results/fixtures/sglang-h200.js';

describe('an empty variable is unset, except where an empty list means none', () => {
  test('the matrix lists keep their defaults when empty; prefill and rates read empty as none; a lone comma is an error', () => {
    for (const v of ['', '  ']) {
      const o = readEnvOverrides({ LLM_BENCH_CONTEXTS: v, LLM_BENCH_CONCURRENCY: v, LLM_BENCH_DURATION_S: v, LLM_BENCH_URL: v });
      expect(o).not.toHaveProperty('contexts');
      expect(o).not.toHaveProperty('concurrency');
      expect(o).not.toHaveProperty('windowS');
      expect(o).not.toHaveProperty('url');
      expect(readEnvOverrides({ LLM_BENCH_PREFILL: v, LLM_BENCH_RATES: v })).toMatchObject({ prefill: [], rates: [] });
    }
    expect(() => readEnvOverrides({ LLM_BENCH_CONTEXTS: ',' })).toThrow('LLM_BENCH_CONTEXTS is empty; give a comma-separated list such as LLM_BENCH_CONTEXTS=0,8K,64K');
    expect(() => readEnvOverrides({ LLM_BENCH_CONCURRENCY: ',' })).toThrow('LLM_BENCH_CONCURRENCY is empty; give a comma-separated list such as LLM_BENCH_CONCURRENCY=1,4,16');
    // a stray comma is skipped in both lists alike
    expect(readEnvOverrides({ LLM_BENCH_CONTEXTS: '0,,1K,', LLM_BENCH_CONCURRENCY: '4,,8,' })).toMatchObject({ contexts: [0, 1024], concurrency: [4, 8] });
  });
});

describe('the simulator profile is checked when the configuration is resolved', () => {
  test('from LLM_BENCH_SIM_PROFILE and from target.simProfile, with the nearest name', () => {
    expect(() => resolveSuite({}, { LLM_BENCH_SIM_PROFILE: 'tinyy' })).toThrow(
      'LLM_BENCH_SIM_PROFILE: "tinyy" is not a simulator profile (did you mean tiny?); use one of tiny, sglang-h200, vllm-arc-b65x4, bare, e.g. LLM_BENCH_SIM_PROFILE=tiny',
    );
    expect(() => resolveSuite({ target: { simProfile: 'h200' } }, {})).toThrow(/^target\.simProfile: "h200" is not a simulator profile; use one of .*e\.g\. target: \{ simProfile: 'tiny' \}$/);
    // a run against a server never starts the simulator, so its profile is not a reason to stop it
    expect(resolveSuite({ target: { url: 'http://127.0.0.1:8000', simProfile: 'h200' } }, {}).simulated).toBe(false);
    for (const name of ['tiny', 'sglang-h200', 'vllm-arc-b65x4', 'bare']) expect(resolveSuite({}, { LLM_BENCH_SIM_PROFILE: name }).simProfile).toBe(name);
  });
});

describe('durations and counts within what a run can wait', () => {
  test.each([
    ['LLM_BENCH_DURATION_S', '7200', 'LLM_BENCH_DURATION_S: "7200" is over 3600 s, the longest window'],
    ['LLM_BENCH_DURATION_S', '1e9', 'LLM_BENCH_DURATION_S: "1e9" is over 3600'],
    // a window under a second has no server sample and a token or two: refused, not measured as Valid
    ['LLM_BENCH_DURATION_S', '0.01', 'LLM_BENCH_DURATION_S: "0.01" is under 1 s, the shortest window that measures anything'],
    ['LLM_BENCH_DURATION_S', '0.99', 'e.g. LLM_BENCH_DURATION_S=30 (the default), or 2 for a quick look'],
    ['LLM_BENCH_STALL_S', '1e9', 'LLM_BENCH_STALL_S: "1e9" is over 86400 s (a day)'],
    ['LLM_BENCH_RETRY_S', '1e9', 'LLM_BENCH_RETRY_S: "1e9" must be a number of seconds from 0 to 86400 (a day)'],
    ['LLM_BENCH_REPEAT', '1000000000', 'LLM_BENCH_REPEAT: "1000000000" is over 1000 measurements of each cell'],
    // hex is not a count a user means: Number() would read 0x10 as 16
    ['LLM_BENCH_MAX_TOKENS', '0x10', 'LLM_BENCH_MAX_TOKENS: "0x10" must be a positive whole number'],
    ['LLM_BENCH_CLIENT_THREADS', '0x4', 'LLM_BENCH_CLIENT_THREADS: "0x4" must be an integer from 1 to 64, or auto'],
    ['LLM_BENCH_RAMP_S', '0x5', 'LLM_BENCH_RAMP_S: "0x5" must be a number of seconds ≥ 0'],
  ])('%s=%s is refused', (name, value, message) => {
    expect(() => readEnvOverrides({ [name]: value })).toThrow(message);
  });

  test('the largest values still allowed are read, and decimals keep working', () => {
    const o = readEnvOverrides({ LLM_BENCH_DURATION_S: '3600', LLM_BENCH_STALL_S: '86400', LLM_BENCH_RETRY_S: '0', LLM_BENCH_REPEAT: '1000', LLM_BENCH_HEADROOM: '.25', LLM_BENCH_CLIENT_LIMIT_MS: '2.5e1' });
    expect(o).toMatchObject({ windowS: 3600, stallS: 86400, retryS: 0, repeat: 1000, headroom: 0.25, clientLimitMs: 25 });
    expect(readEnvOverrides({ LLM_BENCH_DURATION_S: '30.', LLM_BENCH_STALL_S: '1e3', LLM_BENCH_RATES: '0.5,2' })).toMatchObject({ windowS: 30, stallS: 1000, rates: [0.5, 2] });
    // hex is refused wherever a number is read: rates, a sweep's points, a gamma burstiness
    expect(() => readEnvOverrides({ LLM_BENCH_RATES: '0x10' })).toThrow('LLM_BENCH_RATES: "0x10" is not a rate');
    expect(() => readEnvOverrides({ LLM_BENCH_RATES: 'sweep:0x5' })).toThrow('a sweep\'s points are a whole number from 2 to 20');
    expect(() => readEnvOverrides({ LLM_BENCH_ARRIVAL: 'gamma:0x2' })).toThrow('the burstiness must be a number above 0');
  });

  test('a test time limit made from the longest settings stays one a timer can wait', () => {
    const longest = 3600 * 1000 * 1000; // an hour's window, 1,000 repeats
    expect(longest).toBeGreaterThan(MAX_TIMER_MS);
    expect(timerLimitMs(longest)).toBe(MAX_TIMER_MS);
    expect(timerLimitMs(60_000)).toBe(60_000);
  });

  test("the suite's timeouts are at most a day", () => {
    expect(() => resolveSuite({ timeouts: { stallMs: 1e12 } } as SuiteInput, {})).toThrow(/timeouts\.stallMs: at most a day \(86400000 ms\)/);
    expect(resolveSuite({ timeouts: { stallMs: 86_400_000 } }, {}).timeouts.stallMs).toBe(86_400_000);
  });
});

describe('names, URLs and on/off variables', () => {
  test('LLM_BENCH_NAME follows the suite name rule: it becomes thresholds/<name>.json', () => {
    for (const bad of ['../x', 'a/b', 'my name']) {
      expect(() => resolveSuite({}, { LLM_BENCH_NAME: bad })).toThrow(`LLM_BENCH_NAME: "${bad}" names the threshold file thresholds/<name>.json and the page; use letters, digits`);
    }
    expect(resolveSuite({}, { LLM_BENCH_NAME: 'h200-vllm.v2' }).thresholdsPath).toBe('thresholds/h200-vllm.v2.json');
  });

  test('an endpoint given as the base URL is refused, naming the base', () => {
    expect(() => baseUrlOf('http://h:8000/v1/chat/completions')).toThrow('"http://h:8000/v1/chat/completions" is an endpoint, not the server\'s base URL; give the base, e.g. http://h:8000 ');
    expect(() => resolveSuite({}, { LLM_BENCH_URL: 'https://gw/team-a/llama/v1/completions' })).toThrow('give the base, e.g. https://gw/team-a/llama ');
    // a gateway's path prefix, and a base ending in /v1, stay as they were
    expect(baseUrlOf('https://gw/team-a/llama/')).toEqual({ url: 'https://gw/team-a/llama' });
    expect(baseUrlOf('http://h/v1')?.url).toBe('http://h');
    // credentials in the URL never reach the message
    let message = '';
    try {
      baseUrlOf('https://user:s3cret@gw/v1/chat/completions');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('is an endpoint');
    expect(message).not.toContain('s3cret');
  });

  test('a URL with whitespace inside it is refused (the parser would encode a space and drop a tab); around it, trimmed', () => {
    expect(() => baseUrlOf('http://h:8000/my api')).toThrow('target.url / LLM_BENCH_URL: "http://h:8000/my api" was given with whitespace inside it (a space, tab or line break); remove it, or write %20');
    expect(() => readEnvOverrides({ LLM_BENCH_URL: 'http://h:8000/api\t/v1' })).not.toThrow();
    expect(() => resolveSuite({}, { LLM_BENCH_URL: 'http://h:8000/api\t/v1' })).toThrow('LLM_BENCH_URL: "http://h:8000/api\\t/v1" was given with whitespace inside it');
    expect(() => resolveSuite({}, { LLM_BENCH_URL: 'http://h:8000/api\n/v1' })).toThrow('was given with whitespace inside it');
    // a URL that does not parse at all (a space in the host) is quoted without its credentials too
    expect(() => readEnvOverrides({ LLM_BENCH_URL: 'https://user:s3cret@g w/x' })).toThrow(/^LLM_BENCH_URL: "https:\/\/g w\/x" is not a URL/);
    expect(() => resolveSuite({ target: { url: 'http://h:8000/api\t/v1' } }, {})).toThrow('target.url: was given with whitespace inside it');
    expect(() => resolveSuite({ target: { url: 'http://h:8000/my api' } }, {})).toThrow('target.url: was given with whitespace inside it');
    expect(resolveSuite({ target: { url: ' http://h:8000/api ' } }, {}).target.url).toBe('http://h:8000/api');
    expect(() => resolveSuite({}, { LLM_BENCH_URL: 'https://user:s3cret@gw/team a' })).toThrow(/^(?!.*s3cret).*whitespace inside it/);
    expect(baseUrlOf(' http://h:8000/api/ ')).toEqual({ url: 'http://h:8000/api' });
    expect(baseUrlOf('http://h:8000/my%20api')).toEqual({ url: 'http://h:8000/my%20api' });
  });

  test('LLM_BENCH_QUIET, LLM_BENCH_DEBUG and LLM_BENCH_ALLOW_ERRORS take 1/0, true/false, yes/no or on/off, and nothing else', () => {
    expect(() => readEnvOverrides({ LLM_BENCH_QUIET: '2' })).toThrow('LLM_BENCH_QUIET: "2" must be 1 or 0 (true/false, yes/no and on/off work too)');
    expect(() => readEnvOverrides({ LLM_BENCH_DEBUG: 'maybe' })).toThrow('LLM_BENCH_DEBUG: "maybe" must be 1 or 0');
    expect(() => readEnvOverrides({ LLM_BENCH_ALLOW_ERRORS: 'si' })).toThrow('LLM_BENCH_ALLOW_ERRORS: "si" must be 1 or 0');
    expect(resolveRunSettings({}, { LLM_BENCH_QUIET: 'true' }).quiet).toBe(true);
    expect(resolveRunSettings({}, { LLM_BENCH_QUIET: 'off' }).quiet).toBe(false);
    expect(readEnvOverrides({ LLM_BENCH_ALLOW_ERRORS: 'on' }).allowErrors).toBe(true);
    expect(readEnvOverrides({ LLM_BENCH_ALLOW_ERRORS: 'no' }).allowErrors).toBe(false);
  });

  test('a typo hint names a variable only when the name is a slip of one, not another word', () => {
    expect(nearestEnvVariable('LLM_BENCH_TIMEOUT')).toBeUndefined(); // was LLM_BENCH_OUT
    expect(nearestEnvVariable('LLM_BENCH_HEADERS_MS')).toBeUndefined(); // was LLM_BENCH_HEADROOM
    expect(nearestEnvVariable('LLM_BENCH_')).toBeUndefined(); // was LLM_BENCH_URL
    expect(nearestEnvVariable('LLM_BENCH_STALL')).toBe('LLM_BENCH_STALL_S');
    expect(nearestEnvVariable('LLM_BENCH_THREADS')).toBe('LLM_BENCH_CLIENT_THREADS');
    expect(nearestEnvVariable('LLM_BENCH_SIMPROFILE')).toBe('LLM_BENCH_SIM_PROFILE');
    expect(() => readEnvOverrides({ LLM_BENCH_TIMEOUT: '5' })).toThrow('LLM_BENCH_TIMEOUT: not a variable of llm-speed-matrix');
  });
});

describe('simulator faults and regression tolerances', () => {
  test('a misspelt or non-numeric fault in LLM_BENCH_SIM_OVERRIDES is refused (it would never be injected)', () => {
    const cfg = (json: string) => resolveSuite({}, { LLM_BENCH_SIM_PROFILE: 'tiny', LLM_BENCH_SIM_OVERRIDES: json });
    expect(() => simOverridesOf(cfg('{"faults":{"bogus":1}}'))).toThrow(/^LLM_BENCH_SIM_OVERRIDES: sim fault "bogus" is unknown: use one of .*stallRate/);
    expect(() => simOverridesOf(cfg('{"faults":{"stallRate":"0.5"}}'))).toThrow('LLM_BENCH_SIM_OVERRIDES: sim fault stallRate = "0.5" is invalid: it must be a number ≥ 0');
    expect(simOverridesOf(cfg('{"faults":{"stallRate":0.5}}'))).toEqual({ overrides: { faults: { stallRate: 0.5 } } });
    expect(resolveSimProfile('tiny', { faults: { http500Rate: 0.1 } }).faults.http500Rate).toBe(0.1);
  });

  test('a throughput or capacity tolerance over 1 is a percentage typed as a number; a latency may grow by more than all of itself', () => {
    const file = (regression: unknown) => JSON.stringify({ cells: {}, tolerances: { regression } });
    expect(() => parseThresholds(file({ cells: { totalTokensPerSecond: 25 } }), 'x.json')).toThrow(
      'tolerances.regression.cells.totalTokensPerSecond: a fraction from 0 to 1 (0.25 = 25 %): this figure cannot fall by more than all of itself, so a value over 1 is most likely a percentage; write 25 % as 0.25',
    );
    expect(() => parseThresholds(file({ prefill: { promptTokensPerSecond: { relative: 5 } } }), 'x.json')).toThrow('tolerances.regression.prefill.promptTokensPerSecond.relative: a fraction from 0 to 1');
    expect(() => parseThresholds(file({ capacity: 10 }), 'x.json')).toThrow('tolerances.regression.capacity: a fraction from 0 to 1');
    expect(parseThresholds(file({ cells: { totalTokensPerSecond: 1, ttftMs: 2, timeBetweenTokensMs: { relative: 3, absolute: 1 } } }), 'x.json').tolerances?.regression?.cells).toEqual({
      totalTokensPerSecond: 1,
      ttftMs: 2,
      timeBetweenTokensMs: { relative: 3, absolute: 1 },
    });
  });

  test('compare --thresholds with a file that is not there is an error (exit 2), not the default tolerances', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-bad-'));
    const result = join(dir, 'speed-matrix.json');
    writeFileSync(result, JSON.stringify(sglangResult()));
    const err: string[] = [];
    const code = await runCompareCli([result, result, '--thresholds', join(dir, 'nope.json')], { out: () => undefined, err: (t) => err.push(t) });
    expect(code).toBe(2);
    expect(err.join('\n')).toContain(`--thresholds ${join(dir, 'nope.json')}: no such file`);
  });
});

describe('budgets no run can meet, and variables that change nothing', () => {
  test('a figure whose min is above its max is refused, naming the cell', () => {
    const file = JSON.stringify({ cells: { '0/1': { min: { totalTokensPerSecond: 10 }, max: { totalTokensPerSecond: 5 } } }, prefill: { '8K': { min: { ttftMs: 1 }, max: { ttftMs: 2 } } } });
    const keys = { cellKeys: ['0/1'], prefillKeys: ['8K'] };
    expect(() => parseThresholds(file, 'x.json', keys)).toThrow(
      'x.json: cells["0/1"]: min.totalTokensPerSecond 10 is above max.totalTokensPerSecond 5, so no measurement can pass; lower the min or raise the max',
    );
    expect(parseThresholds(JSON.stringify({ cells: { '0/1': { min: { totalTokensPerSecond: 5 }, max: { totalTokensPerSecond: 5 } } } }), 'x.json', keys).cells['0/1']?.min?.totalTokensPerSecond).toBe(5);
    // a slack wide enough lets such a pair pass, and the file is taken as it is where -u rewrites it or compare reads its tolerances
    const slacked = JSON.stringify({ cells: { '0/1': { min: { totalTokensPerSecond: 10 }, max: { totalTokensPerSecond: 9 } } }, tolerances: { slack: 0.1 } });
    expect(() => parseThresholds(slacked, 'x.json', keys)).not.toThrow();
    expect(() => parseThresholds(file, 'x.json', { ...keys, allowUnknown: true })).not.toThrow();
    expect(() => parseThresholds(file, 'x.json')).not.toThrow();
  });

  test('rate-cell variables in a run without rate cells are said to change nothing; with rates there is no note', () => {
    expect(resolveSuite({}, { LLM_BENCH_ARRIVAL: 'constant', LLM_BENCH_RAMP_S: '2' }).unusedRateSettingsNote).toBe(
      'LLM_BENCH_ARRIVAL, LLM_BENCH_RAMP_S are set, but this run has no rate cells (LLM_BENCH_RATES or matrix.rates), so they change nothing',
    );
    expect(resolveSuite({}, { LLM_BENCH_RATES: '2', LLM_BENCH_ARRIVAL: 'constant' }).unusedRateSettingsNote).toBeUndefined();
    expect(resolveSuite({}, {}).unusedRateSettingsNote).toBeUndefined();
    // contexts given beside a workload with its own row: said, not silently dropped
    expect(resolveSuite({}, { LLM_BENCH_WORKLOAD: 'sharedPrefix:groups=4,prefix=3K', LLM_BENCH_CONTEXTS: '0,1K' }).unusedContextsNote).toBe(
      'LLM_BENCH_CONTEXTS (0, 1K) is set, but the sharedPrefix workload sends lengths of its own: the run has its one row, 4K, and the contexts change nothing',
    );
    expect(resolveSuite({}, { LLM_BENCH_WORKLOAD: 'sharedPrefix:groups=4,prefix=3K' }).unusedContextsNote).toBeUndefined();
    expect(resolveSuite({}, { LLM_BENCH_CONTEXTS: '0,1K' }).unusedContextsNote).toBeUndefined();
  });
});

describe('the commands: the option named, a usage error', () => {
  test('report and compare --out where nothing can be written name --out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-bad-'));
    const result = join(dir, 'speed-matrix.json');
    writeFileSync(result, JSON.stringify(sglangResult()));
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'x');
    for (const run of [
      (err: string[]) => runReportCli([result, '--out', join(blocker, 'report.html')], { out: () => undefined, err: (t) => err.push(t) }),
      (err: string[]) => runCompareCli([result, result, '--out', join(blocker, 'diff.md')], { out: () => undefined, err: (t) => err.push(t) }),
    ]) {
      const err: string[] = [];
      expect(await run(err)).toBe(2);
      expect(err.join('\n')).toMatch(new RegExp(`--out ${blocker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(report\\.html|diff\\.md): cannot write the (page|diff page) there`));
    }
  });

  test('sim --profile that is not one is a usage error; init --dir that is a file says so', () => {
    expect(() => parseSimArgs(['--profile', 'nope'])).toThrow(ConfigError);
    expect(() => parseSimArgs(['--profile', 'nope'])).toThrow(/^--profile nope is invalid: unknown sim profile "nope": profile must be one of tiny, sglang-h200, vllm-arc-b65x4, bare/);
    const dir = mkdtempSync(join(tmpdir(), 'lsm-bad-'));
    const file = join(dir, 'package.json');
    writeFileSync(file, '{}');
    expect(() => runInit({ dir: file, force: false })).toThrow(`--dir ${file} is a file, not a folder`);
    expect(() => runInit({ dir: join(dir, 'missing'), force: false })).toThrow(`--dir ${join(dir, 'missing')}: no such folder`);
  });

  test('an SLO with a negative number says so', () => {
    expect(() => parseSloText('perRequest>=-5')).toThrow('LLM_BENCH_SLO: "perRequest>=-5" has a negative number; every SLO figure is 0 or more');
    expect(() => parseSloText('perRequest>>5')).toThrow('LLM_BENCH_SLO: "perRequest>>5" is not <figure><op><number>');
  });
});

describe('the variables are documented', () => {
  test("docs/running.md's table has a row for every variable a run reads (a misspelt name's error sends users there)", () => {
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'running.md'), 'utf8');
    const missing = RUN_ENV_VARIABLES.filter((name) => !doc.includes(`| \`${name}\` |`));
    expect(missing).toEqual([]);
  });
});

describe('found in a user trial: a port out of range, a unit in an SLO, a one-token cap', () => {
  test('a port outside 1 … 65535 is named as such, in the variable and in the suite file (the URL parser said only "not a URL")', () => {
    expect(() => readEnvOverrides({ LLM_BENCH_URL: 'http://127.0.0.1:99999' })).toThrow('LLM_BENCH_URL: "http://127.0.0.1:99999" has port 99999, outside 1 … 65535');
    expect(() => readEnvOverrides({ LLM_BENCH_URL: 'http://[::1]:0/api' })).toThrow('has port 0, outside 1 … 65535');
    // the credentials stay out of the message
    expect(() => readEnvOverrides({ LLM_BENCH_URL: 'https://u:s3cret@gw:70000' })).toThrow(/^(?!.*s3cret).*has port 70000/);
    expect(() => resolveSuite({ target: { url: 'http://127.0.0.1:99999' } }, {})).toThrow('target.url: has port 99999, outside 1 … 65535');
    expect(readEnvOverrides({ LLM_BENCH_URL: 'http://127.0.0.1:65535' }).url).toBe('http://127.0.0.1:65535');
  });

  test('an SLO number written with a unit says to drop it, with the value in the unit the figure takes', () => {
    expect(() => parseSloText('ttftP90<=2s')).toThrow('LLM_BENCH_SLO: "ttftP90<=2s": give the number without a unit ("s"); times are in milliseconds and rates in tok/s, e.g. ttftP90<=2000');
    expect(() => parseSloText('tbt<=40ms')).toThrow('e.g. tbt<=40');
    expect(() => parseSloText('perRequest>=20tok/s')).toThrow('e.g. perRequest>=20');
    expect(() => parseSloText('ttft<=0.25sec')).toThrow('e.g. ttft<=250');
    expect(parseSloText('ttftP90<=2000').ttftMs).toEqual({ stat: 'p90', max: 2000 });
  });

  test('an output cap of one token is refused: it has no time between tokens and no per-request tok/s', () => {
    expect(() => readEnvOverrides({ LLM_BENCH_MAX_TOKENS: '1' })).toThrow('LLM_BENCH_MAX_TOKENS: "1" must be at least 2: a request of one output token has no time between tokens');
    expect(() => resolveSuite({ matrix: { maxOutputTokens: 1 } }, {})).toThrow('matrix.maxOutputTokens: must be at least 2');
    expect(resolveSuite({}, { LLM_BENCH_MAX_TOKENS: '2' }).matrix.maxOutputTokens).toBe(2);
  });

  test('an arrival error gives its example once', () => {
    const message = (() => {
      try {
        readEnvOverrides({ LLM_BENCH_ARRIVAL: 'gamma:0' });
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(message).toBe('LLM_BENCH_ARRIVAL: the burstiness must be a number above 0, got "0" (e.g. "gamma:0.5")');
  });
});
