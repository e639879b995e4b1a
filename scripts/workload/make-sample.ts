/**
 * Writes bench/workloads/sample.jsonl, the shipped sample of the `file` workload (issue 23): a few
 * hundred prompt lines in the three formats readPromptFile accepts (plain `text`/`prompt`, OpenAI
 * `messages`, ShareGPT `conversations`), some with their own `output_tokens`. Every word is made
 * here, from the project's filler word list (src/prompts/synth.ts) walked by seeded PRNGs, so the
 * file is ours, under the repository's licence, and the same bytes on every run:
 *
 *   npx tsx scripts/workload/make-sample.ts           writes the file
 *
 * test/workload/sample.test.ts checks the committed file is this script's output.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Filler } from '../../src/prompts/synth.js';
import { fnv1a, mulberry32 } from '../../src/random.js';

export const SAMPLE_PATH = fileURLToPath(new URL('../../bench/workloads/sample.jsonl', import.meta.url));
/** how many prompt lines the sample has */
export const SAMPLE_LINES = 300;

const QUESTIONS = [
  'Can you explain why', 'What happens when', 'How would you describe', 'Why do people say that',
  'Is it true that', 'What is the best way to understand', 'Could you tell me whether', 'How often does it happen that',
];
const TASKS = [
  'Summarise the following notes in three sentences:', 'Rewrite this passage in plain words:',
  'List the main points of this text:', 'Write a short story that begins with these words:',
  'Answer the question at the end of this passage.', 'Give this paragraph a title and explain the choice:',
];
const FOLLOW_UPS = ['And what about', 'Why is that, given', 'Could you say more on', 'What if we change'];
const SYSTEMS = [
  'You are a helpful assistant. Answer clearly and briefly.', 'You are a patient teacher who explains each step.',
  'You are an editor. Keep the meaning and improve the wording.', 'You answer in one short paragraph.',
];

/** A stream of text for one line: each call gives `words` more words of its own filler. */
function textSource(line: number): (words: number) => string {
  let part = 0;
  return (words) => new Filler(`sample/${line}/${part++}`).text(words);
}

/** A length in words: mostly short, some medium, a few long (the mix users' prompts have). */
function words(u: () => number): number {
  const r = u();
  if (r < 0.65) return 8 + Math.floor(u() * 50);
  if (r < 0.95) return 60 + Math.floor(u() * 160);
  return 300 + Math.floor(u() * 400);
}

/** A model's reply in an earlier turn, in words. */
function replyWords(u: () => number): number {
  return 15 + Math.floor(u() * 100);
}

function pick<T>(u: () => number, xs: readonly T[]): T {
  return xs[Math.floor(u() * xs.length)]!;
}

/** A question-like opening turn: a question about filler, or a task over a passage. */
function firstTurn(u: () => number, text: (n: number) => string): string {
  if (u() < 0.5) return `${pick(u, QUESTIONS)} ${text(words(u)).replace(/[.,]$/, '').toLowerCase()}?`;
  return `${pick(u, TASKS)}\n\n${text(words(u))}`;
}

/** A later turn of a conversation: a short follow-up question. */
function followUp(u: () => number, text: (n: number) => string): string {
  return `${pick(u, FOLLOW_UPS)} ${text(4 + Math.floor(u() * 25)).replace(/[.,]$/, '').toLowerCase()}?`;
}

function plainLine(u: () => number, text: (n: number) => string): Record<string, unknown> {
  return { [u() < 0.7 ? 'text' : 'prompt']: firstTurn(u, text) };
}

function messagesLine(u: () => number, text: (n: number) => string): Record<string, unknown> {
  const messages: Array<{ role: string; content: unknown }> = [];
  if (u() < 0.6) messages.push({ role: 'system', content: pick(u, SYSTEMS) });
  const exchanges = u() < 0.7 ? 0 : 1 + Math.floor(u() * 3);
  for (let e = 0; e < exchanges; e++) {
    messages.push({ role: 'user', content: e === 0 ? firstTurn(u, text) : followUp(u, text) }, { role: 'assistant', content: text(replyWords(u)) });
  }
  const last = exchanges === 0 ? firstTurn(u, text) : followUp(u, text);
  // now and then the OpenAI form of content: a list of text parts
  messages.push({ role: 'user', content: u() < 0.15 ? [{ type: 'text', text: last }, { type: 'text', text: text(6) }] : last });
  return { messages };
}

function shareGptLine(u: () => number, text: (n: number) => string, line: number): Record<string, unknown> {
  const conversations: Array<{ from: string; value: string }> = [];
  if (u() < 0.2) conversations.push({ from: 'system', value: pick(u, SYSTEMS) });
  const turns = 1 + Math.floor(u() * 3);
  for (let t = 0; t < turns; t++) conversations.push({ from: 'human', value: t === 0 ? firstTurn(u, text) : followUp(u, text) }, { from: 'gpt', value: text(replyWords(u)) });
  return { id: `sample-${line}`, conversations };
}

/** The sample's text: SAMPLE_LINES JSON lines, each ending in a newline. */
export function sampleText(): string {
  const out: string[] = [];
  for (let line = 1; line <= SAMPLE_LINES; line++) {
    const u = mulberry32(fnv1a(`sample-line/${line}`));
    const text = textSource(line);
    const format = line % 3;
    const obj = format === 1 ? plainLine(u, text) : format === 2 ? messagesLine(u, text) : shareGptLine(u, text, line);
    if (u() < 0.15) obj.output_tokens = pick(u, [32, 64, 128, 256, 512]);
    out.push(JSON.stringify(obj));
  }
  return `${out.join('\n')}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(SAMPLE_PATH, sampleText());
  console.log(`wrote ${SAMPLE_LINES} prompt lines into ${SAMPLE_PATH}`);
}
