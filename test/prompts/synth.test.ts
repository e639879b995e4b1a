import { describe, expect, test } from 'vitest';
import { buildPrompt, composePrompt, Filler, fillerText, FILLER_WORDS } from '../../src/prompts/synth.js';
import { fnv1a as hashSeed, mulberry32 as prng } from '../../src/random.js';

describe('synth', () => {
  test('deterministic per seed, different across seeds', () => {
    expect(fillerText('run-a', 200)).toBe(new Filler('run-a').text(200));
    expect(fillerText('run-a', 200)).not.toBe(fillerText('run-b', 200));
    expect(hashSeed('x')).toBe(hashSeed('x'));
    const r1 = prng(42);
    const r2 = prng(42);
    for (let i = 0; i < 100; i++) {
      const v = r1();
      expect(v).toBe(r2());
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThan(1);
    }
  });

  test('prefix-stable: n words are a prefix of n+1 words; partial words too', () => {
    const f = new Filler('stable');
    for (const n of [0, 1, 7, 100, 1000]) {
      const a = f.text(n);
      const b = f.text(n + 1);
      expect(b.startsWith(a)).toBe(true);
      const word = f.word(n);
      for (let k = 1; k < word.length; k++) {
        const p = f.text(n, k);
        expect(b.startsWith(p)).toBe(true);
        expect(p.length).toBe(a.length + (n > 0 ? 1 : 0) + k);
      }
    }
  });

  test('varied prose: many distinct words, sentences, words count as asked', () => {
    const words = new Filler('variety').words(5000).slice(0, 5000);
    expect(words).toHaveLength(5000);
    const distinct = new Set(words.map((w) => w.toLowerCase().replace(/[.,]$/, '')));
    expect(distinct.size).toBeGreaterThan(FILLER_WORDS.length * 0.8);
    const periods = words.filter((w) => w.endsWith('.')).length;
    expect(periods).toBeGreaterThan(5000 / 18);
    expect(periods).toBeLessThan(5000 / 5);
    expect(new Filler('variety').text(5000).split(' ')).toHaveLength(5000);
  });

  test('composePrompt and buildPrompt', () => {
    expect(composePrompt({ prefix: 'P', words: 0 })).toBe('P');
    expect(composePrompt({ prefix: 'P', words: 3 })).toBe(`P\n${fillerText('P', 3)}`);
    expect(composePrompt({ prefix: 'P', words: 3, seed: 'S' })).toBe(`P\n${fillerText('S', 3)}`);
    const p = buildPrompt({ prefix: 'Run 1.', targetTokens: 1300, tail: ' END' });
    expect(p.startsWith('Run 1.\n')).toBe(true);
    expect(p.endsWith(' END')).toBe(true);
    expect(p.split(/\s+/).length).toBeGreaterThan(950);
    expect(p.split(/\s+/).length).toBeLessThan(1060);
  });
});
