/**
 * The workload's configuration (issue 23): LLM_BENCH_WORKLOAD and the suite's `workload` (text or
 * object) parsed into a Workload, the canonical text round-tripping, the environment winning over
 * the suite, and every mistake stopped with an error naming the field, the key and a right value.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { completeWorkload, parseWorkloadInput, type WorkloadObject } from '../../src/config/workload-input.js';
import { parseDistribution } from '../../src/config/distribution-input.js';
import { KNOWN_ENV_VARIABLES, readEnvOverrides } from '../../src/config/env.js';
import { resolveSuite } from '../../src/config/resolve.js';
import { ConfigError } from '../../src/errors.js';
import { workloadText, type Workload } from '../../src/shapes/workload.js';

const dir = mkdtempSync(join(tmpdir(), 'wl-config-'));
const prompts = join(dir, 'prompts.jsonl');
writeFileSync(prompts, '{"text":"Hello"}\n');
const url = 'http://127.0.0.1:8000';

const parse = (input: string | WorkloadObject, field = 'LLM_BENCH_WORKLOAD') => completeWorkload(parseWorkloadInput(input, field, dir), 4096);
const error = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('no error');
};

describe('the kinds and their defaults', () => {
  test('each kind alone gets every default', () => {
    expect(parse('synthetic')).toEqual({ kind: 'synthetic' });
    expect(parse('file:prompts.jsonl')).toEqual({ kind: 'file', path: prompts, seed: 1 });
    expect(parse('lengths')).toEqual({
      kind: 'lengths',
      input: { kind: 'normal', mean: 1024, sd: 256, min: 1, max: 2048 },
      output: { kind: 'fixed', value: 4096 },
      seed: 1,
    });
    expect(parse('sharedPrefix')).toEqual({ kind: 'sharedPrefix', groups: 4, prefixTokens: 3072, suffixTokens: 1024, seed: 1 });
    expect(parse('multiTurn')).toEqual({ kind: 'multiTurn', turns: 5, userTokens: 256, systemTokens: 256, thinkMs: { kind: 'fixed', value: 1000 }, seed: 1 });
  });

  test("the issue's examples", () => {
    expect(parse('sharedPrefix:groups=4,prefix=3072,suffix=1024')).toMatchObject({ groups: 4, prefixTokens: 3072, suffixTokens: 1024 });
    expect(parse('lengths:in=normal(1024,256),out=256')).toMatchObject({ input: { kind: 'normal', mean: 1024, sd: 256 }, output: { kind: 'fixed', value: 256 } });
    expect(parse('multiTurn:turns=5,think=2s')).toMatchObject({ turns: 5, thinkMs: { kind: 'fixed', value: 2000 } });
    expect(parse(`file:${prompts},seed=7`)).toEqual({ kind: 'file', path: prompts, seed: 7 });
  });

  test('spaces, a kind in any case and K sizes are understood', () => {
    expect(parse(' SharedPrefix : groups = 2 , prefix = 3K ')).toEqual({ kind: 'sharedPrefix', groups: 2, prefixTokens: 3072, suffixTokens: 1024, seed: 1 });
  });

  test('the object form is the same workload as the text', () => {
    expect(parse({ kind: 'sharedPrefix', groups: 4, prefix: 3072, suffix: 1024 }, 'workload')).toEqual(parse('sharedPrefix:groups=4,prefix=3072,suffix=1024'));
    expect(parse({ kind: 'lengths', in: 'uniform(128,512)', out: 256, seed: 3 }, 'workload')).toEqual(parse('lengths:in=uniform(128,512),out=256,seed=3'));
    expect(parse({ kind: 'multiTurn', turns: 3, think: 'uniform(1s,3s)' }, 'workload')).toEqual(parse('multiTurn:turns=3,think=uniform(1s,3s)'));
    expect(parse({ kind: 'file', path: 'prompts.jsonl', seed: 2 }, 'workload')).toEqual(parse('file:prompts.jsonl,seed=2'));
    expect(parse({ kind: 'synthetic' }, 'workload')).toEqual({ kind: 'synthetic' });
  });
});

describe('distributions', () => {
  const tokens = { unit: 'tokens', least: 1 } as const;
  const time = { unit: 'time', least: 0 } as const;
  test('every form, in tokens', () => {
    expect(parseDistribution('256', tokens)).toEqual({ kind: 'fixed', value: 256 });
    expect(parseDistribution('uniform(128, 512)', tokens)).toEqual({ kind: 'uniform', min: 128, max: 512 });
    expect(parseDistribution('normal(1024,256)', tokens)).toEqual({ kind: 'normal', mean: 1024, sd: 256, min: 1, max: 2048 });
    expect(parseDistribution('normal(100,30.5)', tokens)).toEqual({ kind: 'normal', mean: 100, sd: 30.5, min: 1, max: 222 });
    expect(parseDistribution('normal(1024,256,64,1500)', tokens)).toEqual({ kind: 'normal', mean: 1024, sd: 256, min: 64, max: 1500 });
    expect(parseDistribution('hist(1-100:3;101-200:1;64:0.5)', tokens)).toEqual({
      kind: 'histogram',
      bins: [{ min: 1, max: 100, weight: 3 }, { min: 101, max: 200, weight: 1 }, { min: 64, max: 64, weight: 0.5 }],
    });
  });

  test('every form, in time (held in ms)', () => {
    expect(parseDistribution('2s', time)).toEqual({ kind: 'fixed', value: 2000 });
    expect(parseDistribution('500ms', time)).toEqual({ kind: 'fixed', value: 500 });
    expect(parseDistribution('0.007s', time)).toEqual({ kind: 'fixed', value: 7 });
    expect(parseDistribution('uniform(1s,3s)', time)).toEqual({ kind: 'uniform', min: 1000, max: 3000 });
    expect(parseDistribution('normal(2s,500ms)', time)).toEqual({ kind: 'normal', mean: 2000, sd: 500, min: 0, max: 4000 });
    expect(parseDistribution('hist(1s-2s:3;5s:1)', time)).toEqual({ kind: 'histogram', bins: [{ min: 1000, max: 2000, weight: 3 }, { min: 5000, max: 5000, weight: 1 }] });
  });

  test.each([
    ['uniform(512,128)', tokens, 'min 512 is above its max 128'],
    ['uniform(1)', tokens, 'uniform takes two values'],
    ['normal(10,2,5,3)', tokens, 'clamps 5 … 3 are empty'],
    ['normal(10,2,20,30)', tokens, 'mean 10 lies outside its clamps 20 … 30'],
    ['normal(10)', tokens, 'normal takes mean and sd'],
    ['normal(10,-2)', tokens, '"-2" is not a token count'],
    ['hist(1-10:0)', tokens, 'the weight must be a number above 0'],
    ['hist(1-10)', tokens, 'has no weight'],
    ['hist(10-1:1)', tokens, 'min is above max'],
    ['0', tokens, 'below 1'],
    ['12.5', tokens, 'not a whole number of tokens'],
    ['lots', tokens, 'is not a token count'],
    ['poisson(3)', tokens, '"poisson" is not a distribution'],
    ['2', time, 'has no unit'],
    ['0.0005s', time, 'not a whole number of milliseconds'],
  ])('%s is refused: %s', (text, rules, message) => {
    const d = parseDistribution(text, rules);
    expect('error' in d && d.error).toContain(message);
  });
});

describe('the canonical text round-trips', () => {
  const workloads: Workload[] = [
    { kind: 'synthetic' },
    { kind: 'file', path: prompts, seed: 0 },
    { kind: 'lengths', input: { kind: 'fixed', value: 300 }, output: { kind: 'fixed', value: 1 }, seed: 1 },
    { kind: 'lengths', input: { kind: 'uniform', min: 128, max: 512 }, output: { kind: 'normal', mean: 200.5, sd: 12.25, min: 1, max: 400 }, seed: 9 },
    { kind: 'lengths', input: { kind: 'histogram', bins: [{ min: 1, max: 100, weight: 3 }, { min: 64, max: 64, weight: 0.5 }] }, output: { kind: 'uniform', min: 1, max: 1 }, seed: 2 },
    { kind: 'sharedPrefix', groups: 1, prefixTokens: 1, suffixTokens: 70000, seed: 123 },
    { kind: 'multiTurn', turns: 100, userTokens: 1, systemTokens: 0, thinkMs: { kind: 'fixed', value: 0 }, seed: 1 },
    { kind: 'multiTurn', turns: 2, userTokens: 64, systemTokens: 8, thinkMs: { kind: 'uniform', min: 7, max: 1500 }, seed: 1 },
    { kind: 'multiTurn', turns: 2, userTokens: 64, systemTokens: 8, thinkMs: { kind: 'normal', mean: 2001, sd: 333, min: 1, max: 9999 }, seed: 1 },
    { kind: 'multiTurn', turns: 2, userTokens: 64, systemTokens: 8, thinkMs: { kind: 'histogram', bins: [{ min: 0, max: 3, weight: 1 }, { min: 123456, max: 123457, weight: 2.5 }] }, seed: 1 },
  ];
  test.each(workloads.map((w) => [workloadText(w), w] as const))('%s', (text, w) => {
    expect(parse(text)).toEqual(w);
    expect(workloadText(parse(text))).toBe(text);
  });
});

describe('mistakes name the field, the key, what was given and a right value', () => {
  test.each([
    ['sharedPrefx:groups=3', ['LLM_BENCH_WORKLOAD:', '"sharedPrefx" is not a workload kind (did you mean sharedPrefix?)', 'synthetic, file, lengths, sharedPrefix, multiTurn']],
    ['random', ['"random" is not a workload kind;', 'the kinds are synthetic, file']],
    ['sharedPrefix:grups=3', ['"grups" is not a key of sharedPrefix (did you mean groups?)', 'its keys are groups, prefix, suffix, seed']],
    ['lengths:input=256', ['"input" is not a key of lengths', 'its keys are in, out, seed']],
    ['synthetic:seed=2', ['synthetic takes no keys']],
    ['sharedPrefix:groups=0', ['sharedPrefix groups="0" must be a whole number ≥ 1; e.g. groups=4']],
    ['sharedPrefix:groups=2.5', ['groups="2.5" must be a whole number']],
    ['sharedPrefix:suffix=0', ['suffix="0" must be a whole number ≥ 1 of tokens']],
    ['multiTurn:turns=101', ['turns="101" must be a whole number 1 … 100']],
    ['multiTurn:user=0', ['user="0" must be a whole number ≥ 1']],
    ['multiTurn:think=2', ['multiTurn think="2": "2" has no unit', 'e.g. think=2s']],
    ['lengths:in=uniform(9,3)', ['lengths in="uniform(9,3)": uniform\'s min 9 is above its max 3']],
    ['lengths:out=0', ['lengths out="0"', 'below 1']],
    ['lengths:seed=-1', ['seed="-1" must be a whole number ≥ 0']],
    ['lengths:in=256,in=300', ['the key in is given twice']],
    ['sharedPrefix:groups', ['"groups" in sharedPrefix is not key=value']],
    ['', ['is empty']],
    ['file:', ['needs the path of a JSONL prompt file']],
    ['file:missing.jsonl,seed=2', [`the prompt file ${join(dir, 'missing.jsonl')} does not exist`]],
    [`file:${dir}`, [`the prompt file ${dir} is not a file`]],
    ['file:prompts.jsonl,sed=2', ['"sed" is not a key of file (did you mean seed?)']],
  ])('%s', (text, parts) => {
    const message = error(() => parse(text));
    for (const p of parts) expect(message).toContain(p);
  });

  test('the object form: its messages say the object way', () => {
    expect(error(() => parse({ kind: 'sharedPrefix', groups: 0 }, 'workload'))).toContain('workload: sharedPrefix groups="0" must be a whole number ≥ 1; e.g. groups: 4');
    expect(error(() => parse({ kind: 'multiTurn', think: 2 } as unknown as WorkloadObject, 'workload'))).toContain("think=2 has no unit; write a time string, e.g. think: '2s'");
    expect(error(() => parse({ kind: 'file' } as unknown as WorkloadObject, 'workload'))).toContain('needs its path');
    expect(error(() => parse({ groups: 4 } as unknown as WorkloadObject, 'workload'))).toContain('needs its kind');
    expect(error(() => parse({ kind: 'lengths', in: [1] } as unknown as WorkloadObject, 'workload'))).toContain('lengths in must be a number or a distribution string');
    expect(error(() => parse(42 as unknown as WorkloadObject, 'workload'))).toContain('workload: a workload is text');
  });
});

describe('wired into the run', () => {
  test('LLM_BENCH_WORKLOAD is a known variable and is parsed with the others', () => {
    expect(KNOWN_ENV_VARIABLES).toContain('LLM_BENCH_WORKLOAD');
    expect(readEnvOverrides({ LLM_BENCH_WORKLOAD: 'sharedPrefix:groups=2' }).workload).toMatchObject({ kind: 'sharedPrefix', groups: 2 });
    expect(readEnvOverrides({ LLM_BENCH_WORKLOAD: ' ' }).workload).toBeUndefined();
    expect(() => readEnvOverrides({ LLM_BENCH_WORKLOAD: 'sharedPrefix:grups=2' })).toThrow(/^LLM_BENCH_WORKLOAD: "grups" is not a key of sharedPrefix/);
    expect(() => readEnvOverrides({ LLM_BENCH_WORKLOADS: 'synthetic' })).toThrow('did you mean LLM_BENCH_WORKLOAD?');
  });

  test('synthetic by default; the suite sets it; the environment wins', () => {
    expect(resolveSuite({ target: { url } }, {}).workload).toEqual({ kind: 'synthetic' });
    expect(resolveSuite({ workload: { kind: 'sharedPrefix', groups: 8 } }, {}).workload).toMatchObject({ kind: 'sharedPrefix', groups: 8 });
    expect(resolveSuite({ workload: 'sharedPrefix:groups=8' }, { LLM_BENCH_WORKLOAD: 'multiTurn:turns=2' }).workload).toMatchObject({ kind: 'multiTurn', turns: 2 });
  });

  test("lengths without out: the run's maxOutputTokens, fixed (suite, environment or profile)", () => {
    expect(resolveSuite({ target: { url }, matrix: { maxOutputTokens: 300 }, workload: 'lengths:in=256' }, {}).workload).toMatchObject({ output: { kind: 'fixed', value: 300 } });
    expect(resolveSuite({ target: { url }, workload: 'lengths' }, { LLM_BENCH_MAX_TOKENS: '77' }).workload).toMatchObject({ output: { kind: 'fixed', value: 77 } });
    expect(resolveSuite({ target: { simProfile: 'tiny' } }, { LLM_BENCH_WORKLOAD: 'lengths' }).workload).toMatchObject({ output: { kind: 'fixed', value: 256 } });
  });

  test("a bad suite workload is one line of the suite's errors, naming workload", () => {
    const message = error(() => resolveSuite({ workload: 'sharedPrefix:grups=4' }, {}));
    expect(message).toContain('invalid speed-matrix suite');
    expect(message).toContain('  - workload: "grups" is not a key of sharedPrefix (did you mean groups?)');
  });
});
