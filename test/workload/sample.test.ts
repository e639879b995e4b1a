/**
 * The shipped sample (issue 23 "A shipped sample"): bench/workloads/sample.jsonl is exactly what
 * scripts/workload/make-sample.ts writes (fix: npx tsx scripts/workload/make-sample.ts), and
 * readPromptFile reads every line of it, in all three formats, some with their own output length.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { SAMPLE_LINES, SAMPLE_PATH, sampleText } from '../../scripts/workload/make-sample.js';
import { readPromptFile } from '../../src/workload/prompt-file.js';

test('the committed sample is the script output (fix: npx tsx scripts/workload/make-sample.ts)', () => {
  const made = sampleText();
  expect(made).toBe(sampleText());
  expect(readFileSync(SAMPLE_PATH, 'utf8') === made).toBe(true);
});

test('readPromptFile reads every line: the three formats, some output lengths, some history', () => {
  const f = readPromptFile(SAMPLE_PATH);
  expect(f.name).toBe('sample.jsonl');
  expect(f.lines).toHaveLength(SAMPLE_LINES);
  expect(SAMPLE_LINES).toBeGreaterThanOrEqual(200);
  const raw = readFileSync(SAMPLE_PATH, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  for (const key of ['text', 'prompt', 'messages', 'conversations']) expect(raw.filter((r) => key in r).length, key).toBeGreaterThan(10);
  expect(f.lines.filter((l) => l.outputTokens !== undefined).length).toBeGreaterThan(10);
  expect(f.lines.filter((l) => l.messages.some((m) => m.role === 'system')).length).toBeGreaterThan(10);
  expect(f.lines.filter((l) => l.messages.some((m) => m.role === 'assistant')).length).toBeGreaterThan(10);
  // lengths vary: from a few words to several hundred
  const chars = f.lines.map((l) => l.messages.reduce((s, m) => s + m.content.length, 0));
  expect(Math.min(...chars)).toBeLessThan(200);
  expect(Math.max(...chars)).toBeGreaterThan(2000);
  expect(f.lines.every((l) => l.messages.at(-1)!.role === 'user')).toBe(true);
});
