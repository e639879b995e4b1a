/** The sim's tokenizer.json, read by the local-tokenizer library, counts exactly as the sim does. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countTokens, genPiece } from '../../src/sim/tokenizer.js';
import { simTokenizerJson } from '../../src/sim/tokenizer-json.js';
import { renderChat } from '../../src/sim/chat-template.js';
import { composePrompt } from '../../src/prompts/synth.js';
import { mulberry32 } from '../../src/random.js';
import { localTokenizerFromJson } from '../../src/tokenizer/local.js';
import { parseSimArgs, startSimCli } from '../../src/sim/cli.js';

/** pieces random strings are made of: every whitespace the sim knows, specials and their fragments, Unicode the sim does not treat as space */
const ALPHABET = [
  ' ', ' ', '  ', '\t', '\n', '\r\n', '\v', '\f', 'a', 'b', 'Z', 'word', '<', '|', '>', '<|', '|>', '<||>', '<|im_start|>', '<|x|>',
  '<|' + 'y'.repeat(28) + '|>', '<|' + 'y'.repeat(29) + '|>', '\u00a0', '\u2028', '\u3000', 'é', '日本', '😀', '👍🏽', '\u0301', '\ud800', '.', ',', '##', '<unk>', '[UNK]',
];

function randomText(rnd: () => number): string {
  const n = Math.floor(rnd() * 40);
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rnd() * ALPHABET.length)];
  return s;
}

describe('simTokenizerJson', () => {
  const local = localTokenizerFromJson(simTokenizerJson());

  it('counts exactly as countTokens on random strings of spaces, specials, fragments and Unicode', () => {
    const rnd = mulberry32(20260118);
    const wrong: Array<{ text: string; local: number; sim: number }> = [];
    let nonTrivial = 0;
    for (let i = 0; i < 5000; i++) {
      const text = randomText(rnd);
      const sim = countTokens(text);
      if (sim > 3) nonTrivial++;
      const got = local.count(text);
      if (got !== sim && wrong.length < 5) wrong.push({ text, local: got, sim });
    }
    expect(wrong).toEqual([]);
    expect(nonTrivial).toBeGreaterThan(3000); // the strings were not all tiny
  });

  it('counts long prompts, a rendered chat and generated text exactly', () => {
    const texts = [
      composePrompt({ prefix: 'Run t, context 8192.', words: 6000, partialChars: 2 }),
      renderChat([{ role: 'user', content: 'Hello there. <|not special' }]),
      Array.from({ length: 2000 }, (_, i) => genPiece(5, i)).join(''),
      '',
      '   ',
      '\n\nleading whitespace',
    ];
    for (const t of texts) expect(local.count(t), JSON.stringify(t.slice(0, 40))).toBe(countTokens(t));
  });

  it('llm-speed-matrix sim --tokenizer-json PATH writes it before serving', async () => {
    expect(parseSimArgs(['--tokenizer-json', 'x.json']).tokenizerJson).toBe('x.json');
    expect(() => parseSimArgs(['--tokenizer-json'])).toThrow('--tokenizer-json needs a file path, e.g. --tokenizer-json tokenizer.json');
    const path = join(mkdtempSync(join(tmpdir(), 'lsm-simtok-')), 'tokenizer.json');
    const lines: string[] = [];
    const sim = await startSimCli(['--port', '0', '--tokenizer-json', path], (l) => lines.push(l));
    await sim.close();
    expect(lines.join('')).toContain(`LLM_BENCH_TOKENIZER=${path}`);
    expect(localTokenizerFromJson(JSON.parse(readFileSync(path, 'utf8'))).count('ab  cd\n')).toBe(2);
  });
});
