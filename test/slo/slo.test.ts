import { describe, expect, test } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { hasPerRequestConstraints, parseSloText, sloFromInput, SloSchema, sloText, type Slo } from '../../src/slo/slo.js';

/** the error parseSloText throws, checked to be a ConfigError */
function parseError(text: string, name?: string): ConfigError {
  try {
    parseSloText(text, name);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`parseSloText(${JSON.stringify(text)}) did not throw`);
}

const EXAMPLE = 'e.g. LLM_BENCH_SLO="perRequest>=20,ttftP90<=2000,tbtP99<=100,errors=0"';

describe('parseSloText: every figure and stat', () => {
  test.each([
    ['perRequest>=20', { perRequestTokensPerSecond: { stat: 'median', min: 20 } }],
    ['perRequestP50>=20', { perRequestTokensPerSecond: { stat: 'median', min: 20 } }],
    ['perRequestP10>=12.5', { perRequestTokensPerSecond: { stat: 'p10', min: 12.5 } }],
    ['perRequestP1>=3', { perRequestTokensPerSecond: { stat: 'p1', min: 3 } }],
    ['ttft<=500', { ttftMs: { stat: 'median', max: 500 } }],
    ['ttftP50<=500', { ttftMs: { stat: 'median', max: 500 } }],
    ['ttftP90<=2000', { ttftMs: { stat: 'p90', max: 2000 } }],
    ['ttftP99<=4000', { ttftMs: { stat: 'p99', max: 4000 } }],
    ['tbt<=30', { timeBetweenTokensMs: { stat: 'median', max: 30 } }],
    ['tbtP50<=30', { timeBetweenTokensMs: { stat: 'median', max: 30 } }],
    ['tbtP90<=50', { timeBetweenTokensMs: { stat: 'p90', max: 50 } }],
    ['tbtP99<=100', { timeBetweenTokensMs: { stat: 'p99', max: 100 } }],
    ['errors=0', { failedRequests: { max: 0 } }],
    ['errors<=3', { failedRequests: { max: 3 } }],
    ['goodput>=0.9', { goodput: { min: 0.9 } }],
    ['goodput>=90%', { goodput: { min: 0.9 } }],
    ['goodput>=100%', { goodput: { min: 1 } }],
    ['goodput>=1', { goodput: { min: 1 } }],
  ] as const)('%s', (text, want) => {
    const slo = parseSloText(text);
    const { text: canonical, ...rest } = slo;
    expect(rest).toEqual(want);
    expect(typeof canonical).toBe('string');
  });

  test('the example of the docs, with every constraint', () => {
    expect(parseSloText('perRequest>=20,ttftP90<=2000,tbtP99<=100,errors=0,goodput>=90%')).toEqual({
      perRequestTokensPerSecond: { stat: 'median', min: 20 },
      ttftMs: { stat: 'p90', max: 2000 },
      timeBetweenTokensMs: { stat: 'p99', max: 100 },
      failedRequests: { max: 0 },
      goodput: { min: 0.9 },
      text: 'perRequest>=20,ttftP90<=2000,tbtP99<=100,errors<=0,goodput>=90%',
    });
  });

  test('figure names are case-insensitive; spaces around parts and operators are allowed; empty parts are skipped', () => {
    const a = parseSloText(' PERREQUESTP10 >= 15 , TTFTp99<= 3000,,goodput >= 95 % ');
    expect(a).toEqual(parseSloText('perRequestP10>=15,ttftP99<=3000,goodput>=95%'));
    expect(a.perRequestTokensPerSecond).toEqual({ stat: 'p10', min: 15 });
    expect(a.ttftMs).toEqual({ stat: 'p99', max: 3000 });
    expect(a.goodput).toEqual({ min: 0.95 });
  });

  test('the canonical text is in a fixed order, whatever order the parts were given in', () => {
    expect(parseSloText('goodput>=0.5,errors=2,tbt<=40,ttftP99<=900,perRequestP1>=7').text).toBe(
      'perRequestP1>=7,ttftP99<=900,tbt<=40,errors<=2,goodput>=50%',
    );
  });

  test('decimal numbers keep their value', () => {
    expect(parseSloText('ttftP90<=1500.5').ttftMs).toEqual({ stat: 'p90', max: 1500.5 });
    expect(parseSloText('perRequest>=.5').perRequestTokensPerSecond).toEqual({ stat: 'median', min: 0.5 });
  });

  test('a percentage is the decimal it reads as: a cell with exactly 99.9 % goodput meets goodput>=99.9%', () => {
    // 99.9 / 100 is 0.9990000000000001 in floating point: 999 met of 1000 would fail that bound
    expect(parseSloText('goodput>=99.9%').goodput!.min).toBe(0.999);
    expect(999 / 1000 >= parseSloText('goodput>=99.9%').goodput!.min).toBe(true);
    for (let tenths = 1; tenths <= 1000; tenths++) {
      const pct = (tenths / 10).toString();
      expect(parseSloText(`goodput>=${pct}%`).goodput!.min).toBe(Number(`${pct}e-2`));
      expect(parseSloText(`goodput>=${pct}%`).goodput!.min).toBe(parseSloText(`goodput>=${Number(`${pct}e-2`)}`).goodput!.min);
    }
  });
});

describe('sloText: canonical text round-trips', () => {
  const canonical = [
    'perRequest>=20,ttftP90<=2000,tbtP99<=100,errors<=0,goodput>=90%',
    'perRequestP10>=12.5',
    'perRequestP1>=3,tbtP90<=45.5',
    'ttft<=800',
    'ttftP99<=4000,errors<=5',
    'tbt<=30,goodput>=99.9%',
    'goodput>=100%',
    'goodput>=12.3456%',
    'errors<=0',
  ];

  test.each(canonical)('%s', (text) => {
    const slo = parseSloText(text);
    expect(slo.text).toBe(text);
    expect(sloText(slo)).toBe(text);
    expect(parseSloText(sloText(slo))).toEqual(slo);
  });

  test('every normalized Slo (figures × stats × goodput shares) comes back from its text', () => {
    const perRequest = [undefined, ...(['median', 'p10', 'p1'] as const).map((stat) => ({ stat, min: 17.25 }))];
    const maxes = [undefined, ...(['median', 'p90', 'p99'] as const).map((stat) => ({ stat, max: 250 }))];
    let checked = 0;
    for (const p of perRequest)
      for (const ttft of maxes)
        for (const tbt of maxes)
          for (const errors of [undefined, { max: 0 }, { max: 7 }])
            for (const goodput of [undefined, { min: 0.9 }, { min: 0.999 }, { min: 0.07 }, { min: 0.123456 }, { min: 1 }]) {
              const x: Omit<Slo, 'text'> = {
                ...(p ? { perRequestTokensPerSecond: p } : {}),
                ...(ttft ? { ttftMs: ttft } : {}),
                ...(tbt ? { timeBetweenTokensMs: tbt } : {}),
                ...(errors ? { failedRequests: errors } : {}),
                ...(goodput ? { goodput } : {}),
              };
              if (Object.keys(x).length === 0) continue;
              const text = sloText(x);
              expect(parseSloText(text)).toEqual({ ...x, text });
              checked++;
            }
    expect(checked).toBe(4 * 4 * 4 * 3 * 6 - 1);
  });

  test('the goodput share keeps its precision in the text (0.9999 is not shown as 100 %)', () => {
    expect(sloText({ goodput: { min: 0.9999 } })).toBe('goodput>=99.99%');
    expect(sloText({ goodput: { min: 0.999 } })).toBe('goodput>=99.9%');
    expect(sloText({ goodput: { min: 0.57 } })).toBe('goodput>=57%');
    expect(sloText({ goodput: { min: 0.0004 } })).toBe('goodput>=0.04%');
    expect(parseSloText(sloText({ goodput: { min: 0.9999 } })).goodput).toEqual({ min: 0.9999 });
    // two different SLOs never share a text (the baseline comparison keys on it)
    expect(sloText({ goodput: { min: 0.9999 } })).not.toBe(sloText({ goodput: { min: 1 } }));
  });

  test('an empty Slo has an empty text', () => {
    expect(sloText({})).toBe('');
  });
});

describe('parseSloText: mistakes are ConfigErrors naming the part, the rule and an example', () => {
  test('an unknown figure lists the figures', () => {
    const e = parseError('latency<=5');
    expect(e.message).toContain('LLM_BENCH_SLO: "latency" is not an SLO figure');
    expect(e.message).toContain('perRequest, perRequestP10, perRequestP1 (>=); ttft, ttftP90, ttftP99, tbt, tbtP90, tbtP99, itl, itlP90, itlP95, itlP99, maxGapMs (<=)');
    expect(e.message).toContain(EXAMPLE);
    expect(parseError('ttftP95<=100').message).toContain('"ttftP95" is not an SLO figure');
    expect(parseError('perRequestP90>=10').message).toContain('"perRequestP90" is not an SLO figure');
    expect(parseError('tbtP10<=10').message).toContain('"tbtP10" is not an SLO figure');
  });

  test.each([
    ['perRequest>=0', 'LLM_BENCH_SLO: "perRequest>=0": a per-request tok/s minimum must be above 0, or every cell meets it'],
    ['perRequestP10>=0.0', 'a per-request tok/s minimum must be above 0'],
    ['ttft<=0', 'LLM_BENCH_SLO: "ttft<=0": a TTFT maximum must be above 0, or no cell can meet it'],
    ['tbtP99<=0', 'LLM_BENCH_SLO: "tbtP99<=0": a time-between-tokens maximum must be above 0, or no cell can meet it'],
  ])('impossible bound %s', (text, message) => {
    const e = parseError(text);
    expect(e.message).toContain(message);
    expect(e.message).toContain(EXAMPLE);
  });

  test.each([
    ['ttft>=5', 'LLM_BENCH_SLO: "ttft>=5": ttft takes <= (it is a maximum); e.g. ttft<=5'],
    ['ttft=5', 'LLM_BENCH_SLO: "ttft=5": ttft takes <= (it is a maximum); e.g. ttft<=5'],
    ['tbtP90>=50', '"tbtP90>=50": tbtP90 takes <= (it is a maximum); e.g. tbtP90<=50'],
    ['perRequest<=20', '"perRequest<=20": perRequest takes >= (it is a minimum); e.g. perRequest>=20'],
    ['perRequestP10=20', 'perRequestP10 takes >= (it is a minimum); e.g. perRequestP10>=20'],
    ['goodput<=0.9', '"goodput<=0.9": goodput takes >= (it is a minimum); e.g. goodput>=0.9'],
    ['errors>=1', 'LLM_BENCH_SLO: "errors>=1": errors takes <= or = (a maximum); e.g. errors=0'],
  ])('wrong operator %s', (text, message) => {
    expect(parseError(text).message).toContain(message);
  });

  test.each(['errors=1.5', 'errors<=0.5'])('non-integer errors %s', (text) => {
    expect(parseError(text).message).toContain(`LLM_BENCH_SLO: "${text}": errors is a count of failed requests (0, 1, …); e.g. errors=0`);
  });

  test.each(['goodput>=0', 'goodput>=0%', 'goodput>=1.5', 'goodput>=150%', 'goodput>=100.1%'])('goodput out of range %s', (text) => {
    expect(parseError(text).message).toContain(`LLM_BENCH_SLO: "${text}": goodput is a share of requests above 0 and at most 1 (or 100%); e.g. goodput>=90%`);
  });

  test.each([
    ['perRequest>=20,perRequestP10>=10', 'LLM_BENCH_SLO: per-request tok/s is given twice ("perRequestP10>=10"); keep one'],
    ['ttft<=100,ttftP99<=500', 'LLM_BENCH_SLO: TTFT is given twice ("ttftP99<=500"); keep one'],
    ['tbtP90<=20,tbt<=10', 'LLM_BENCH_SLO: time between tokens is given twice ("tbt<=10"); keep one'],
    ['errors=0,errors<=2', 'LLM_BENCH_SLO: errors is given twice ("errors<=2"); keep one'],
    ['goodput>=90%,goodput>=0.5', 'LLM_BENCH_SLO: goodput is given twice ("goodput>=0.5"); keep one'],
  ])('a figure given twice: %s', (text, message) => {
    expect(parseError(text).message).toContain(message);
  });

  test.each(['', '   ', ',', ' , ,'])('empty text %j', (text) => {
    expect(parseError(text).message).toBe(`LLM_BENCH_SLO is empty; ${EXAMPLE}`);
  });

  test.each([
    ['garbage', 'garbage'],
    ['ttft<2000', 'ttft<2000'],
    ['ttft==2000', 'ttft==2000'],
    ['ttft<=1e3', 'ttft<=1e3'],
    ['perRequest>=20;ttft<=5', 'perRequest>=20;ttft<=5'],
    ['<=5', '<=5'],
    ['ttft_p90<=5', 'ttft_p90<=5'],
    ['perRequest>=20,oops', 'oops'],
  ])('garbage %j', (text, part) => {
    const e = parseError(text);
    expect(e.message).toBe(`LLM_BENCH_SLO: "${part}" is not <figure><op><number>; ${EXAMPLE}`);
  });

  test('a number with a unit says to drop the unit, in the unit the figure takes', () => {
    expect(parseError('ttft<=2s').message).toBe('LLM_BENCH_SLO: "ttft<=2s": give the number without a unit ("s"); times are in milliseconds and rates in tok/s, e.g. ttft<=2000');
  });

  test('a negative number is named as such', () => {
    expect(parseError('ttft<=-5').message).toBe(`LLM_BENCH_SLO: "ttft<=-5" has a negative number; every SLO figure is 0 or more; ${EXAMPLE}`);
  });

  test.each(['ttft<=1.2.3', 'perRequest>=.', 'goodput>=..%'])('not a number %j', (text) => {
    expect(parseError(text).message).toMatch(/^LLM_BENCH_SLO: ".*": .* is not a number; e\.g\. LLM_BENCH_SLO=/);
  });

  test.each(['ttft<=50%', 'perRequest>=20%', 'errors<=5%'])('a percentage outside goodput %j', (text) => {
    expect(parseError(text).message).toBe(`LLM_BENCH_SLO: "${text}": only goodput takes a percentage; ${EXAMPLE}`);
  });

  test('the variable name in messages can be changed', () => {
    expect(parseError('latency<=5', 'MY_SLO').message).toMatch(/^MY_SLO: "latency" is not an SLO figure/);
    expect(parseError('', 'MY_SLO').message).toMatch(/^MY_SLO is empty/);
  });
});

describe('suite form: SloSchema + sloFromInput', () => {
  const fromSuite = (input: unknown): Slo => sloFromInput(SloSchema.parse(input));

  test('the documented example', () => {
    expect(fromSuite({ perRequestTokensPerSecond: { min: 20 }, ttftMs: { p90: { max: 2000 } } })).toEqual({
      perRequestTokensPerSecond: { stat: 'median', min: 20 },
      ttftMs: { stat: 'p90', max: 2000 },
      text: 'perRequest>=20,ttftP90<=2000',
    });
  });

  test.each([
    [{ perRequestTokensPerSecond: { median: { min: 20 } } }, { perRequestTokensPerSecond: { stat: 'median', min: 20 } }, 'perRequest>=20'],
    [{ perRequestTokensPerSecond: { p10: { min: 15 } } }, { perRequestTokensPerSecond: { stat: 'p10', min: 15 } }, 'perRequestP10>=15'],
    [{ perRequestTokensPerSecond: { p1: { min: 5 } } }, { perRequestTokensPerSecond: { stat: 'p1', min: 5 } }, 'perRequestP1>=5'],
    [{ ttftMs: { max: 700 } }, { ttftMs: { stat: 'median', max: 700 } }, 'ttft<=700'],
    [{ ttftMs: { median: { max: 700 } } }, { ttftMs: { stat: 'median', max: 700 } }, 'ttft<=700'],
    [{ ttftMs: { p99: { max: 3000 } } }, { ttftMs: { stat: 'p99', max: 3000 } }, 'ttftP99<=3000'],
    [{ timeBetweenTokensMs: { max: 25 } }, { timeBetweenTokensMs: { stat: 'median', max: 25 } }, 'tbt<=25'],
    [{ timeBetweenTokensMs: { p90: { max: 40 } } }, { timeBetweenTokensMs: { stat: 'p90', max: 40 } }, 'tbtP90<=40'],
    [{ timeBetweenTokensMs: { p99: { max: 100 } } }, { timeBetweenTokensMs: { stat: 'p99', max: 100 } }, 'tbtP99<=100'],
    [{ failedRequests: { max: 0 } }, { failedRequests: { max: 0 } }, 'errors<=0'],
    [{ failedRequests: { max: 4 } }, { failedRequests: { max: 4 } }, 'errors<=4'],
    [{ goodput: { min: 0.95 } }, { goodput: { min: 0.95 } }, 'goodput>=95%'],
    [{ goodput: { min: 1 } }, { goodput: { min: 1 } }, 'goodput>=100%'],
  ])('%j', (input, want, text) => {
    const slo = fromSuite(input);
    expect(slo).toEqual({ ...want, text });
    // the suite form and its text are the same SLO
    expect(parseSloText(slo.text)).toEqual(slo);
  });

  test('the suite and the env var give the same Slo for the same constraints', () => {
    expect(
      fromSuite({
        perRequestTokensPerSecond: { min: 20 },
        ttftMs: { p90: { max: 2000 } },
        timeBetweenTokensMs: { p99: { max: 100 } },
        failedRequests: { max: 0 },
        goodput: { min: 0.9 },
      }),
    ).toEqual(parseSloText('perRequest>=20,ttftP90<=2000,tbtP99<=100,errors=0,goodput>=90%'));
  });

  test('an slo without any constraint is a ConfigError with an example', () => {
    const empty = SloSchema.parse({});
    expect(() => sloFromInput(empty)).toThrow(ConfigError);
    expect(() => sloFromInput(empty)).toThrow(
      'slo: names no constraint; e.g. slo: { perRequestTokensPerSecond: { min: 20 }, ttftMs: { p90: { max: 2000 } } }',
    );
  });

  test.each([
    ['an unknown figure', { latencyMs: { max: 5 } }],
    ['an unknown key in a bound', { ttftMs: { max: 5, min: 1 } }],
    ['two stats in one bound', { ttftMs: { p90: { max: 5 }, p99: { max: 9 } } }],
    ['a stat a minimum does not have', { perRequestTokensPerSecond: { p90: { min: 5 } } }],
    ['a stat a maximum does not have', { ttftMs: { p10: { max: 5 } } }],
    ['min on a maximum', { ttftMs: { min: 5 } }],
    ['max on a minimum', { perRequestTokensPerSecond: { max: 5 } }],
    ['an extra key in a quantile', { ttftMs: { p90: { max: 5, unit: 'ms' } } }],
    ['an unknown key in failedRequests', { failedRequests: { max: 0, min: 0 } }],
    ['an unknown key in goodput', { goodput: { min: 0.9, of: 'tokens' } }],
    ['a zero minimum', { perRequestTokensPerSecond: { min: 0 } }],
    ['a negative maximum', { timeBetweenTokensMs: { max: -1 } }],
    ['a zero maximum', { ttftMs: { p99: { max: 0 } } }],
    ['a fractional error count', { failedRequests: { max: 0.5 } }],
    ['a negative error count', { failedRequests: { max: -1 } }],
    ['goodput 0', { goodput: { min: 0 } }],
    ['goodput above 1', { goodput: { min: 1.5 } }],
    ['goodput as a percentage', { goodput: { min: 90 } }],
    ['a string', { ttftMs: { max: '2000' } }],
  ])('zod rejects %s', (_what, input) => {
    expect(SloSchema.safeParse(input).success).toBe(false);
  });

  test('zod accepts each documented shape (the union is not stricter than the docs)', () => {
    for (const input of [
      { perRequestTokensPerSecond: { min: 1 } },
      { perRequestTokensPerSecond: { p10: { min: 1 } } },
      { ttftMs: { p90: { max: 1 } } },
      { timeBetweenTokensMs: { median: { max: 1 } } },
      { failedRequests: { max: 0 } },
      { goodput: { min: 0.5 } },
    ]) {
      expect(SloSchema.safeParse(input).success).toBe(true);
    }
  });
});

describe('hasPerRequestConstraints', () => {
  test.each([
    ['perRequest>=20', true],
    ['ttftP90<=2000', true],
    ['tbtP99<=100', true],
    ['errors=0', false],
    ['goodput>=90%', false],
    ['errors=0,goodput>=90%', false],
    ['errors=0,tbt<=50', true],
  ])('%s → %s', (text, want) => {
    expect(hasPerRequestConstraints(parseSloText(text))).toBe(want);
  });
});
