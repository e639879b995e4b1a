import { describe, expect, test } from 'vitest';
import { CHAT_GENERATION_PROMPT_TOKENS, CHAT_TOKENS_PER_MESSAGE, renderChat } from '../../src/sim/chat-template.js';
import { countTokens, genPiece, GEN_PIECES, scanTokens, TokenVocab } from '../../src/sim/tokenizer.js';

describe('sim tokenizer', () => {
  test.each([
    ['', 0],
    ['a', 1],
    ['abcd', 1],
    ['abcde', 2],
    ['ab  cd\n', 2],
    ['  leading', 3], // leading whitespace token + "lead" + "ing"
    ['<|user|>\nhi', 2],
    ['x<|end|>', 2],
    ['<|not closed', 4], // "<|no" "t " "clos" "ed"
  ])('%j → %i tokens', (text, n) => {
    expect(countTokens(text)).toBe(n);
  });

  test('tokens cover the text exactly, in order', () => {
    const text = '  Hello,   wonderful world!\n<|user|>\nxyzzy12345 ';
    let at = 0;
    scanTokens(text, (s, e) => {
      expect(s).toBe(at);
      expect(e).toBeGreaterThan(s);
      at = e;
    });
    expect(at).toBe(text.length);
  });

  test('generated text tokenizes back to the number of generated tokens', () => {
    for (const seed of [0, 1, 17, 9972]) {
      let text = '';
      for (let i = 0; i < 500; i++) text += genPiece(seed, i);
      expect(countTokens(text)).toBe(500);
    }
    expect(GEN_PIECES.every((p) => countTokens(p) === 1)).toBe(true);
  });

  test('detokenize(tokenize(x)) round-trips and ids of generated pieces are stable', () => {
    const v = new TokenVocab();
    const text = 'The quick brown fox\n  jumps <|end|> over';
    const t = v.tokenize(text);
    expect(t.ids).toHaveLength(countTokens(text));
    expect(v.detokenize(t.ids)).toBe(text);
    expect(new TokenVocab().tokenize('the ').ids).toEqual(v.tokenize('the ').ids);
  });

  test('chat template cost is Σ(content + 2) + 1', () => {
    const msgs = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Count the tokens of this sentence please' },
    ];
    const expected = msgs.reduce((a, m) => a + countTokens(m.content) + CHAT_TOKENS_PER_MESSAGE, 0) + CHAT_GENERATION_PROMPT_TOKENS;
    expect(countTokens(renderChat(msgs))).toBe(expected);
    expect(countTokens(renderChat(msgs, false))).toBe(expected - CHAT_GENERATION_PROMPT_TOKENS);
  });
});
