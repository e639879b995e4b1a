/**
 * JSONL prompt files (the `file` workload, issue 23): one JSON object per line, blank lines
 * ignored, each line one request in one of three formats:
 *
 *   - plain: `{"text": "..."}` or `{"prompt": "..."}`, one user message;
 *   - OpenAI chat: `{"messages": [{"role": "system" | "user" | "assistant", "content": "..."}]}`,
 *     content a string or a list of `{"type": "text", "text": "..."}` parts (joined by newlines);
 *     the request is the messages up to and including the LAST user message (an answer after it,
 *     as in fine-tuning sets, is what the server is asked to write, so it is not sent);
 *   - ShareGPT: `{"conversations": [{"from": "human" | "gpt" | "system", "value": "..."}]}` (also
 *     `user`, `assistant`, `chatgpt`): the request is the conversation up to and including its
 *     FIRST human turn, with the system turns before it, as vLLM's ShareGPT loader takes the
 *     first turn (model turns before it are dropped).
 *
 * A line may give its own output length, `output_tokens` (or `max_tokens`), a whole number ≥ 1.
 * Other fields (ids, metadata) are ignored. A line that is not JSON, in no known format, with an
 * empty prompt or a bad field is a ConfigError naming the file, the line number and the fix; so is
 * a file with no prompt line. The file's sha256 (of its bytes) names it in the result.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, resolve as resolvePath } from 'node:path';
import { ConfigError } from '../errors.js';
import { mulberry32 } from '../random.js';
import type { ChatMessage, PromptFile, PromptLine } from '../shapes/workload.js';
import { streamSeed } from './draw.js';

const FORMATS = '{"text": "..."}, {"prompt": "..."}, {"messages": [{"role": "user", "content": "..."}]} or {"conversations": [{"from": "human", "value": "..."}]}';

/** A line's mistake; readPromptFile adds the file and the line number. */
class LineError extends Error {}

function contentOf(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part, i) => {
        const p = part as { type?: unknown; text?: unknown } | null;
        if (typeof p !== 'object' || p === null || p.type !== 'text' || typeof p.text !== 'string') {
          throw new LineError(`${where}.content[${i}] is not a text part; only {"type": "text", "text": "..."} parts can be sent as text`);
        }
        return p.text;
      })
      .join('\n');
  }
  throw new LineError(`${where}.content must be a string or a list of text parts, e.g. {"role": "user", "content": "Hello"}`);
}

/** A line's request, and the answer the file gives for it (ShareGPT's next gpt turn, a messages line's trailing assistant message). */
interface Parsed {
  messages: ChatMessage[];
  reply?: string;
}

function fromMessages(messages: unknown): Parsed {
  if (!Array.isArray(messages) || messages.length === 0) throw new LineError('"messages" must be a non-empty list of {"role", "content"} objects');
  const out = messages.map((m, i): ChatMessage => {
    const where = `messages[${i}]`;
    const msg = m as { role?: unknown; content?: unknown } | null;
    if (typeof msg !== 'object' || msg === null) throw new LineError(`${where} is not an object {"role", "content"}`);
    if (msg.role !== 'system' && msg.role !== 'user' && msg.role !== 'assistant') {
      throw new LineError(`${where}.role ${JSON.stringify(msg.role)} is not system, user or assistant`);
    }
    return { role: msg.role, content: contentOf(msg.content, where) };
  });
  let last = out.length - 1;
  while (last >= 0 && out[last]!.role !== 'user') last--;
  if (last < 0) throw new LineError('"messages" has no user message; a request needs one, e.g. {"role": "user", "content": "Hello"}');
  const reply = out[last + 1]?.role === 'assistant' ? out[last + 1]!.content : undefined;
  return { messages: out.slice(0, last + 1), ...(reply ? { reply } : {}) };
}

const SHAREGPT_ROLES: Record<string, ChatMessage['role']> = {
  human: 'user', user: 'user', gpt: 'assistant', assistant: 'assistant', chatgpt: 'assistant', system: 'system',
};

function fromConversations(turns: unknown): Parsed {
  if (!Array.isArray(turns) || turns.length === 0) throw new LineError('"conversations" must be a non-empty list of {"from", "value"} turns');
  const out: ChatMessage[] = [];
  for (const [i, t] of turns.entries()) {
    const turn = t as { from?: unknown; value?: unknown } | null;
    if (typeof turn !== 'object' || turn === null) throw new LineError(`conversations[${i}] is not an object {"from", "value"}`);
    const role = typeof turn.from === 'string' ? SHAREGPT_ROLES[turn.from.toLowerCase()] : undefined;
    if (!role) throw new LineError(`conversations[${i}].from ${JSON.stringify(turn.from)} is not human, gpt or system (or user, assistant, chatgpt)`);
    if (typeof turn.value !== 'string') throw new LineError(`conversations[${i}].value must be a string`);
    if (role === 'system') out.push({ role, content: turn.value });
    if (role === 'user') {
      const next = turns[i + 1] as { from?: unknown; value?: unknown } | undefined;
      const answered = typeof next?.from === 'string' && SHAREGPT_ROLES[next.from.toLowerCase()] === 'assistant' && typeof next.value === 'string' && next.value !== '';
      return { messages: [...out, { role, content: turn.value }], ...(answered ? { reply: next.value as string } : {}) };
    }
  }
  throw new LineError('"conversations" has no human turn; the request is the conversation up to its first human turn');
}

function outputTokensOf(line: Record<string, unknown>): number | undefined {
  const given = (['output_tokens', 'max_tokens'] as const).filter((k) => line[k] !== undefined && line[k] !== null);
  if (given.length === 2 && line.output_tokens !== line.max_tokens) {
    throw new LineError(`"output_tokens" (${JSON.stringify(line.output_tokens)}) and "max_tokens" (${JSON.stringify(line.max_tokens)}) differ; give one`);
  }
  const key = given[0];
  if (key === undefined) return undefined;
  const n = line[key];
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new LineError(`"${key}" ${JSON.stringify(n)} must be a whole number of tokens ≥ 1, e.g. "${key}": 256`);
  return n;
}

/** One line's request (line number added by the caller). */
function parseLine(text: string): Omit<PromptLine, 'line'> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LineError(`not JSON (${(error as Error).message}); each line is one JSON object such as {"text": "Hello"}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LineError(`not a JSON object; each line is one object such as ${FORMATS}`);
  const line = value as Record<string, unknown>;
  const formats = (['text', 'prompt', 'messages', 'conversations'] as const).filter((k) => line[k] !== undefined);
  if (formats.length === 0) throw new LineError(`no prompt: a line needs "text", "prompt", "messages" or "conversations", e.g. ${FORMATS}`);
  if (formats.length > 1) throw new LineError(`both ${formats.map((f) => `"${f}"`).join(' and ')} given; a line is one request in one format`);
  const format = formats[0]!;
  let parsed: Parsed;
  if (format === 'messages') parsed = fromMessages(line.messages);
  else if (format === 'conversations') parsed = fromConversations(line.conversations);
  else {
    if (typeof line[format] !== 'string') throw new LineError(`"${format}" must be a string, e.g. {"${format}": "Hello"}`);
    parsed = { messages: [{ role: 'user', content: line[format] }] };
  }
  const { messages, reply } = parsed;
  if (messages.every((m) => m.content.trim() === '')) throw new LineError('the prompt is empty; give the text the request sends');
  const outputTokens = outputTokensOf(line);
  // a line's own output length wins; else the file's answer may size it (matrix/workload-run.ts)
  if (outputTokens !== undefined) return { messages, outputTokens };
  return reply !== undefined ? { messages, replyText: reply } : { messages };
}

/**
 * Reads and checks a JSONL prompt file (path resolved against the working folder). Throws a
 * ConfigError naming the file and the line number of the first bad line.
 */
export function readPromptFile(path: string): PromptFile {
  const abs = resolvePath(path);
  let bytes: Buffer;
  try {
    bytes = readFileSync(abs);
  } catch (error) {
    throw new ConfigError(`prompt file ${abs} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give the path of a JSONL file of prompts, e.g. file:bench/workloads/sample.jsonl`);
  }
  const lines: PromptLine[] = [];
  // every bad line at once (one fix per run was the old way), the first MAX_NAMED of them by number
  const bad: string[] = [];
  const notUtf8 = nonUtf8Lines(bytes);
  const texts = bytes.toString('utf8').replace(/^\uFEFF/, '').split('\n');
  for (const [i, raw] of texts.entries()) {
    const text = raw.trim();
    if (text === '') continue;
    if (notUtf8.has(i + 1)) {
      bad.push(`line ${i + 1}: not UTF-8 text (bytes that are no UTF-8 character, as a Latin-1 or Windows-1252 export writes); save the file as UTF-8`);
      continue;
    }
    try {
      lines.push({ line: i + 1, ...parseLine(text) });
    } catch (error) {
      if (!(error instanceof LineError)) throw error;
      bad.push(`line ${i + 1}: ${error.message}`);
    }
  }
  if (bad.length === 1) throw new ConfigError(`prompt file ${abs}, ${bad[0]}`);
  if (bad.length > 1) {
    const more = bad.length > MAX_NAMED ? [`… and ${bad.length - MAX_NAMED} more`] : [];
    throw new ConfigError(`prompt file ${abs}: ${bad.length} bad lines, each to fix:\n  ${[...bad.slice(0, MAX_NAMED), ...more].join('\n  ')}`);
  }
  if (lines.length === 0) throw new ConfigError(`prompt file ${abs} has no prompt lines; write one JSON object per line, such as ${FORMATS}`);
  return { path: abs, name: basename(abs), sha256: createHash('sha256').update(bytes).digest('hex'), lines };
}

/** The bad lines a prompt file's error names one by one; the rest are counted. */
const MAX_NAMED = 20;

/** The numbers (from 1) of the lines that are not valid UTF-8; none for a valid file (one pass). */
function nonUtf8Lines(bytes: Buffer): Set<number> {
  const out = new Set<number>();
  const strict = new TextDecoder('utf-8', { fatal: true });
  try {
    strict.decode(bytes);
    return out;
  } catch {
    // some line is not: find which
  }
  let start = 0;
  let line = 1;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0x0a) continue;
    try {
      strict.decode(bytes.subarray(start, i));
    } catch {
      out.add(line);
    }
    start = i + 1;
    line++;
  }
  return out;
}

/** Fisher–Yates over 0 … n−1 with its own stream. */
function permutation(n: number, seed: number, cycle: number): Uint32Array {
  const u = mulberry32(streamSeed(seed, `order/${cycle}`));
  const p = new Uint32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(u() * (i + 1));
    [p[i], p[j]] = [p[j]!, p[i]!];
  }
  return p;
}

/**
 * The seeded order the lines are used in: request i (0-based) gets line index `order(i)` (an index
 * into PromptFile.lines). Every n requests use every line once, each cycle in a permutation of its
 * own (cycle c's from the seed and c), so a run longer than the file does not repeat one order.
 * Deterministic for (n, seed); the last few cycles' permutations are kept.
 */
export function seededOrder(n: number, seed: number): (i: number) => number {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`seededOrder needs n ≥ 1 lines, got ${n}`);
  const cycles = new Map<number, Uint32Array>();
  return (i) => {
    if (!Number.isSafeInteger(i) || i < 0) throw new RangeError(`request index ${i} is not a whole number ≥ 0`);
    const cycle = Math.floor(i / n);
    let p = cycles.get(cycle);
    if (!p) {
      if (cycles.size >= 4) cycles.delete(cycles.keys().next().value!);
      p = permutation(n, seed, cycle);
      cycles.set(cycle, p);
    }
    return p[i - cycle * n]!;
  };
}

const ROLE_NAMES: Record<ChatMessage['role'], string> = { system: 'System', user: 'User', assistant: 'Assistant' };

/**
 * The completions endpoint's text of a message list, a plain rendering with no model's chat
 * template: each message as `Role: content` (System, User, Assistant), separated by a blank line,
 * then `Assistant:` for the model to continue, e.g. "System: Be brief.\n\nUser: Hi\n\nAssistant:".
 */
export function renderMessages(messages: readonly ChatMessage[]): string {
  return [...messages.map((m) => `${ROLE_NAMES[m.role]}: ${m.content}`), 'Assistant:'].join('\n\n');
}
