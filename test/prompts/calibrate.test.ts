import { describe, expect, test } from 'vitest';
import { PromptCalibrator, SHORTEST_PROMPT, toleranceTokens, MAX_EXACT_COUNTS } from '../../src/prompts/calibrate.js';

/** Fake BPE-ish tokenizer: each word costs ceil(len/4) tokens; +7 for a "chat template". */
const charCount = (text: string): number => 7 + text.split(/\s+/).filter(Boolean).reduce((acc, w) => acc + Math.ceil(w.length / 4), 0);
/** Fake tokenizer: one token per word. */
const wordCount = (text: string): number => text.split(/\s+/).filter(Boolean).length;

function counting(fn: (t: string) => number): { calls: () => number; count: (t: string) => Promise<number> } {
  let n = 0;
  return { calls: () => n, count: async (t) => (n++, fn(t)) };
}

describe('PromptCalibrator, exact mode', () => {
  test('tolerance rule', () => {
    expect(toleranceTokens(0)).toBe(64);
    expect(toleranceTokens(12_800)).toBe(64);
    expect(toleranceTokens(131_072)).toBe(656);
  });

  test.each([1, 20, 100, 1000, 4096, 32_768, 131_072])('hits %i tokens exactly (character-level refinement)', async (N) => {
    const c = counting(charCount);
    const cal = new PromptCalibrator({ countTokens: c.count });
    const r = await cal.calibrate({ targetTokens: N, prefix: `run-xyz context ${N}` });
    if (N < 20) {
      // the prefix and template alone are longer than N: the shortest prompt with that prefix
      expect(r.promptTokens).toBe(charCount(r.text));
      expect(r.text).toBe(`run-xyz context ${N}`);
    } else {
      expect(r.promptTokens).toBe(N);
    }
    expect(charCount(r.text)).toBe(r.promptTokens);
    expect(r.mode).toBe('exact');
    expect(r.withinTolerance).toBe(true);
    expect(r.measurements).toBe(c.calls());
    expect(c.calls()).toBeLessThanOrEqual(MAX_EXACT_COUNTS);
  });

  test('word-count tokenizer with lead and tail counted, text excludes them', async () => {
    const cal = new PromptCalibrator({ countTokens: async (t) => wordCount(t) });
    const r = await cal.calibrate({ targetTokens: 5000, prefix: 'run-1 ctx', lead: 'Stream 000000. ', tail: ' Request 000000: continue.' });
    expect(r.promptTokens).toBe(5000);
    expect(wordCount(r.lead + r.text + r.tail)).toBe(5000);
    expect(r.text.startsWith('run-1 ctx\n')).toBe(true);
    expect(r.text).not.toContain('Request');
  });

  test('learnt rate makes the next target cheaper', async () => {
    const c = counting(charCount);
    const cal = new PromptCalibrator({ countTokens: c.count });
    await cal.calibrate({ targetTokens: 16_384, prefix: 'a' });
    const first = c.calls();
    await cal.calibrate({ targetTokens: 65_536, prefix: 'b' });
    expect(c.calls() - first).toBeLessThanOrEqual(first + 5);
    expect(c.calls() - first).toBeLessThan(40);
  });

  test('cache: same key costs nothing; concurrent calls share one search', async () => {
    const c = counting(charCount);
    const cal = new PromptCalibrator({ countTokens: c.count });
    const [a, b] = await Promise.all([cal.calibrate({ targetTokens: 2000, prefix: 'p' }), cal.calibrate({ targetTokens: 2000, prefix: 'p' })]);
    expect(a).toBe(b);
    const calls = c.calls();
    const again = await cal.calibrate({ targetTokens: 2000, prefix: 'p' });
    expect(again).toBe(a);
    expect(c.calls()).toBe(calls);
    const other = await cal.calibrate({ targetTokens: 2000, prefix: 'q' });
    expect(other.text).not.toBe(a.text);
    expect(c.calls()).toBeGreaterThan(calls);
  });

  test('target 0 is the shortest prompt', async () => {
    const cal = new PromptCalibrator({ countTokens: async (t) => charCount(t) });
    const r = await cal.calibrate({ targetTokens: 0, prefix: 'ignored' });
    expect(r.text).toBe(SHORTEST_PROMPT);
    expect(r.promptTokens).toBe(8);
    expect(r.withinTolerance).toBe(true);
  });

  test('bad target and missing counters are setup errors', async () => {
    const cal = new PromptCalibrator({ countTokens: async (t) => wordCount(t) });
    await expect(cal.calibrate({ targetTokens: -1, prefix: 'p' })).rejects.toThrow(/targetTokens must be an integer/);
    await expect(cal.calibrate({ targetTokens: 1.5, prefix: 'p' })).rejects.toThrow(/targetTokens/);
    expect(() => new PromptCalibrator({})).toThrow(/countTokens.*measurePromptTokens/);
    const none = new PromptCalibrator({ countTokens: async () => undefined });
    await expect(none.calibrate({ targetTokens: 100, prefix: 'p' })).rejects.toThrow(/no tokenize endpoint/);
  });
});

describe('PromptCalibrator, estimated mode', () => {
  test('falls back to measured requests when the counter has no tokenizer; within tolerance, few requests', async () => {
    const m = counting(charCount);
    const cal = new PromptCalibrator({ countTokens: async () => undefined, measurePromptTokens: m.count });
    const r1 = await cal.calibrate({ targetTokens: 8192, prefix: 'run-e ctx 8192' });
    expect(r1.mode).toBe('estimated');
    expect(cal.mode).toBe('estimated');
    expect(r1.promptTokens).toBe(charCount(r1.text));
    expect(Math.abs(r1.promptTokens - 8192)).toBeLessThanOrEqual(toleranceTokens(8192));
    expect(r1.withinTolerance).toBe(true);
    expect(m.calls()).toBeLessThanOrEqual(1 + 4);
    const before = m.calls();
    const r2 = await cal.calibrate({ targetTokens: 65_536, prefix: 'run-e ctx 65536' });
    expect(Math.abs(r2.promptTokens - 65_536)).toBeLessThanOrEqual(toleranceTokens(65_536));
    expect(r2.promptTokens).toBe(charCount(r2.text));
    expect(m.calls() - before).toBeLessThanOrEqual(2);
    const z = await cal.calibrate({ targetTokens: 0, prefix: 'x' });
    expect(z).toMatchObject({ text: SHORTEST_PROMPT, mode: 'estimated', promptTokens: 8 });
  });

  test('a tokenizer far from the default rate still converges', async () => {
    // 3 tokens per word: the first guess (1.3/word) is far off
    const heavy = (t: string): number => 3 * wordCount(t) + 11;
    const cal = new PromptCalibrator({ measurePromptTokens: async (t) => heavy(t) });
    const r = await cal.calibrate({ targetTokens: 30_000, prefix: 'p' });
    expect(Math.abs(r.promptTokens - 30_000)).toBeLessThanOrEqual(toleranceTokens(30_000));
    expect(r.measurements).toBeLessThanOrEqual(5);
  });
});

describe('PromptCalibrator across targets of one text series (workload lengths)', () => {
  test('exact: a series keeps its counts, so many lengths cost few calls each and each is exact', async () => {
    const c = counting(charCount);
    const cal = new PromptCalibrator({ countTokens: c.count });
    const targets = Array.from({ length: 200 }, (_, i) => 100 + i * 13);
    const alone = counting(charCount);
    for (const N of targets) {
      const r = await cal.calibrate({ targetTokens: N, prefix: '', seed: 'series', lead: 'lead 000000. ' });
      expect(r.promptTokens).toBe(N);
      expect(charCount('lead 000000. ' + r.text)).toBe(N);
      // the same target in a calibrator of its own (no series memory)
      await new PromptCalibrator({ countTokens: alone.count }).calibrate({ targetTokens: N, prefix: '', seed: 'series', lead: 'lead 000000. ' });
    }
    expect(c.calls()).toBeLessThan(alone.calls() * 0.7);
    expect(await cal.count('a b c')).toBe(charCount('a b c'));
  });

  test('estimated: the learnt overhead is measured again for fixed parts of another size', async () => {
    let calls = 0;
    const measure = async (t: string) => (calls++, charCount(t));
    const cal = new PromptCalibrator({ measurePromptTokens: measure });
    expect(await cal.count('a b c')).toBeUndefined();
    await cal.calibrate({ targetTokens: 2000, prefix: 'run-1 ctx 2000' });
    // a suffix counted after a long shared prefix (the lead): its overhead is not the row's
    const longLead = 'word '.repeat(1500);
    const r = await cal.calibrate({ targetTokens: 1800, prefix: '', seed: 's', lead: longLead });
    expect(Math.abs(r.promptTokens - 1800)).toBeLessThanOrEqual(toleranceTokens(1800));
    expect(r.promptTokens).toBe(charCount(longLead + r.text));
    expect(r.measurements).toBeLessThanOrEqual(3);
    expect(calls).toBeGreaterThan(0);
  });
});
