/**
 * JSONL prompt files (issue 23 "Files", "Bad input"): every format read into messages, each
 * mistake an error naming the file and its line number, the file's sha256, and the seeded order:
 * the same file and seed give the same order twice, another seed another.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readPromptFile, renderMessages, seededOrder } from '../../src/workload/prompt-file.js';
import { ConfigError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'prompt-file-'));
let count = 0;
const file = (text: string): string => {
  const path = join(dir, `f${count++}.jsonl`);
  writeFileSync(path, text);
  return path;
};
const lines = (...objects: unknown[]) => objects.map((o) => (typeof o === 'string' ? o : JSON.stringify(o))).join('\n');

describe('formats', () => {
  test('plain text and prompt: one user message', () => {
    const f = readPromptFile(file(lines({ text: 'Hello' }, { prompt: 'Why is the sky blue?', id: 7 })));
    expect(f.lines).toEqual([
      { line: 1, messages: [{ role: 'user', content: 'Hello' }] },
      { line: 2, messages: [{ role: 'user', content: 'Why is the sky blue?' }] },
    ]);
  });

  test('OpenAI messages: string or text-part content; a trailing answer is not sent', () => {
    const f = readPromptFile(
      file(
        lines(
          { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] },
          { messages: [{ role: 'user', content: [{ type: 'text', text: 'Line one' }, { type: 'text', text: 'line two' }] }] },
          { messages: [{ role: 'user', content: 'Q1' }, { role: 'assistant', content: 'A1' }, { role: 'user', content: 'Q2' }, { role: 'assistant', content: 'A2' }] },
        ),
      ),
    );
    expect(f.lines.map((l) => l.messages)).toEqual([
      [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }],
      [{ role: 'user', content: 'Line one\nline two' }],
      [{ role: 'user', content: 'Q1' }, { role: 'assistant', content: 'A1' }, { role: 'user', content: 'Q2' }],
    ]);
  });

  test('ShareGPT: up to and including the first human turn, system turns before it kept', () => {
    const f = readPromptFile(
      file(
        lines(
          { id: 'a', conversations: [{ from: 'human', value: 'First?' }, { from: 'gpt', value: 'Answer' }, { from: 'human', value: 'Second?' }] },
          { conversations: [{ from: 'system', value: 'You are kind.' }, { from: 'gpt', value: 'Hello!' }, { from: 'user', value: 'Hi' }, { from: 'chatgpt', value: 'x' }] },
          { conversations: [{ from: 'Human', value: 'Case?' }] },
        ),
      ),
    );
    expect(f.lines.map((l) => l.messages)).toEqual([
      [{ role: 'user', content: 'First?' }],
      [{ role: 'system', content: 'You are kind.' }, { role: 'user', content: 'Hi' }],
      [{ role: 'user', content: 'Case?' }],
    ]);
  });

  test('output length per line; blank lines skipped and numbered as in the file; CRLF and a BOM read', () => {
    const f = readPromptFile(file(`\uFEFF${lines({ text: 'a', output_tokens: 64 }, '', '   ', { text: 'b', max_tokens: 8 }, { text: 'c', output_tokens: 5, max_tokens: 5 })}\r\n`.replaceAll('\n', '\r\n')));
    expect(f.lines).toEqual([
      { line: 1, messages: [{ role: 'user', content: 'a' }], outputTokens: 64 },
      { line: 4, messages: [{ role: 'user', content: 'b' }], outputTokens: 8 },
      { line: 5, messages: [{ role: 'user', content: 'c' }], outputTokens: 5 },
    ]);
  });

  test('the path absolute, the name, and the sha256 of the bytes', () => {
    const text = lines({ text: 'hash me' });
    const path = file(text);
    const f = readPromptFile(path);
    expect(f.path).toBe(path);
    expect(f.name).toBe(path.split('/').pop());
    expect(f.sha256).toBe(createHash('sha256').update(text).digest('hex'));
    expect(readPromptFile(file(`${text}\n`)).sha256).not.toBe(f.sha256);
  });
});

describe('mistakes name the file and the line', () => {
  test.each([
    ['{"text": "ok"}\n{"text": "unclosed', 2, 'not JSON'],
    ['{"text": "ok"}\n\n[1, 2]', 3, 'not a JSON object'],
    ['{"input": "hi"}', 1, 'no prompt: a line needs "text", "prompt", "messages" or "conversations"'],
    ['{"text": "a", "prompt": "b"}', 1, 'both "text" and "prompt" given'],
    ['{"text": 5}', 1, '"text" must be a string'],
    ['{"text": "   "}', 1, 'the prompt is empty'],
    ['{"messages": []}', 1, '"messages" must be a non-empty list'],
    ['{"messages": [{"role": "tool", "content": "x"}]}', 1, 'messages[0].role "tool" is not system, user or assistant'],
    ['{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}', 1, 'messages[0].content[0] is not a text part'],
    ['{"messages": [{"role": "user", "content": null}]}', 1, 'messages[0].content must be a string'],
    ['{"messages": [{"role": "system", "content": "x"}]}', 1, '"messages" has no user message'],
    ['{"conversations": [{"from": "gpt", "value": "x"}]}', 1, '"conversations" has no human turn'],
    ['{"conversations": [{"from": "bot", "value": "x"}]}', 1, 'conversations[0].from "bot" is not human, gpt or system'],
    ['{"conversations": [{"from": "human", "value": 3}]}', 1, 'conversations[0].value must be a string'],
    ['{"conversations": "hi"}', 1, '"conversations" must be a non-empty list'],
    ['{"text": "a"}\n{"text": "b", "output_tokens": 0}', 2, '"output_tokens" 0 must be a whole number of tokens ≥ 1'],
    ['{"text": "b", "max_tokens": 2.5}', 1, '"max_tokens" 2.5 must be a whole number'],
    ['{"text": "b", "output_tokens": 5, "max_tokens": 6}', 1, '"output_tokens" (5) and "max_tokens" (6) differ; give one'],
  ])('%s → line %i: %s', (text, line, message) => {
    const path = file(text);
    let thrown: unknown;
    try {
      readPromptFile(path);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toContain(`prompt file ${path}, line ${line}: ${message}`);
  });

  test('several bad lines: every one named with its number at once (the first 20, the rest counted); a line that is not UTF-8 is named as such', () => {
    const bytes = Buffer.concat([
      Buffer.from('{"text": "fine"}\n{"text": 3}\n'),
      // "café" in Latin-1: the é is one byte, 0xE9, no UTF-8 character
      Buffer.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x20, 0x22, 0x63, 0x61, 0x66, 0xe9, 0x22, 0x7d, 0x0a]),
      Buffer.from('not json\n{"text": "ok"}\n'),
    ]);
    const path = join(dir, 'several.jsonl');
    writeFileSync(path, bytes);
    let message = '';
    try {
      readPromptFile(path);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(`prompt file ${path}: 3 bad lines, each to fix:`);
    expect(message).toContain('\n  line 2: ');
    expect(message).toContain('\n  line 3: not UTF-8 text (bytes that are no UTF-8 character, as a Latin-1 or Windows-1252 export writes); save the file as UTF-8');
    expect(message).toContain('\n  line 4: not JSON');
    const many = file(Array.from({ length: 25 }, (_, i) => `{"text": ${i}}`).join('\n'));
    let named = '';
    try {
      readPromptFile(many);
    } catch (e) {
      named = (e as Error).message;
    }
    expect(named).toContain('25 bad lines');
    expect(named).toContain('line 20: ');
    expect(named).not.toContain('line 21: ');
    expect(named).toContain('… and 5 more');
  });

  test('a file with no prompt lines, and a missing file', () => {
    const empty = file('\n  \n');
    expect(() => readPromptFile(empty)).toThrow(`prompt file ${empty} has no prompt lines`);
    expect(() => readPromptFile(join(dir, 'absent.jsonl'))).toThrow(`prompt file ${join(dir, 'absent.jsonl')} cannot be read (ENOENT)`);
  });
});

describe('the seeded order', () => {
  const order = (n: number, seed: number, count: number) => {
    const o = seededOrder(n, seed);
    return Array.from({ length: count }, (_, i) => o(i));
  };

  test('same file and seed: the same order twice; another seed: another', () => {
    expect(order(50, 1, 200)).toEqual(order(50, 1, 200));
    expect(order(50, 2, 50)).not.toEqual(order(50, 1, 50));
  });

  test('each cycle of n requests uses every line once, in a new permutation', () => {
    const xs = order(20, 1, 60);
    const cycles = [xs.slice(0, 20), xs.slice(20, 40), xs.slice(40)];
    for (const c of cycles) expect([...c].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(cycles[1]).not.toEqual(cycles[0]);
    expect(cycles[2]).not.toEqual(cycles[1]);
    // not the identity: the lines are shuffled
    expect(cycles[0]).not.toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  test('asked out of order, each request gets the same line', () => {
    const inOrder = order(7, 3, 100);
    const o = seededOrder(7, 3);
    for (const i of [99, 0, 50, 8, 99, 13, 1]) expect(o(i)).toBe(inOrder[i]);
    expect(seededOrder(1, 5)(41)).toBe(0);
    expect(() => seededOrder(0, 1)).toThrow('n ≥ 1');
  });
});

test('renderMessages: the plain completions text of a message list', () => {
  expect(renderMessages([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Bye' }])).toBe(
    'System: Be brief.\n\nUser: Hi\n\nAssistant: Hello\n\nUser: Bye\n\nAssistant:',
  );
  expect(renderMessages([{ role: 'user', content: 'Hi' }])).toBe('User: Hi\n\nAssistant:');
});
