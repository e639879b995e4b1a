/**
 * A local tokenizer: a Hugging Face `tokenizer.json` read from a local file (`target.tokenizer` /
 * LLM_BENCH_TOKENIZER), for servers that cannot count for us (no tokenize endpoint, no usage).
 * The only module that imports the tokenizer library (docs/tokenizer.md says which and why); it is
 * given the parsed JSON, never a model name, so nothing is fetched from a hub.
 *
 * Counts are of the text alone: no special tokens are added (no BOS), as a server's usage and
 * tokenize endpoints (add_special: false) count a message's content.
 */
import { readFile } from 'node:fs/promises';
import { Tokenizer } from '@huggingface/tokenizers';
import { ConfigError } from '../errors.js';

export interface LocalTokenizer {
  /** the file it was read from */
  readonly path: string;
  /** tokens of `text` (no special tokens added) */
  count(text: string): number;
}

/** Where a configured path came from, for error messages: the field and the variable. */
export const TOKENIZER_FIELDS = 'LLM_BENCH_TOKENIZER / target.tokenizer';

const FIX = `set ${TOKENIZER_FIELDS} to the path of the model's tokenizer.json (the file beside its weights)`;

/** Builds a tokenizer from an already parsed tokenizer.json (the sim's export, tests). */
export function localTokenizerFromJson(json: unknown, path = '(in memory)'): LocalTokenizer {
  const root = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  const model = root?.model as Record<string, unknown> | undefined;
  if (!root || !model || typeof model !== 'object' || model.vocab === undefined) {
    throw new ConfigError(`${TOKENIZER_FIELDS}: ${path} is not a Hugging Face tokenizer.json (no "model" with a "vocab"); ${FIX}`);
  }
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(root, {});
  } catch (error) {
    throw new ConfigError(`${TOKENIZER_FIELDS}: ${path} could not be read as a tokenizer.json (${(error as Error).message}); ${FIX}`, { cause: error });
  }
  const count = (text: string): number => (text === '' ? 0 : tokenizer.encode(text, { add_special_tokens: false }).ids.length);
  try {
    count('Hello, world.');
  } catch (error) {
    throw new ConfigError(`${TOKENIZER_FIELDS}: ${path} fails to tokenize a test sentence (${(error as Error).message}); ${FIX}`, { cause: error });
  }
  return { path, count };
}

const loaded = new Map<string, Promise<LocalTokenizer>>();

/**
 * Reads and checks a tokenizer.json (cached per path for the process). A missing, unreadable or
 * invalid file is a ConfigError naming LLM_BENCH_TOKENIZER / target.tokenizer and the fix.
 */
export function loadLocalTokenizer(path: string): Promise<LocalTokenizer> {
  let pending = loaded.get(path);
  if (!pending) {
    pending = readTokenizer(path);
    loaded.set(path, pending);
    pending.catch(() => loaded.delete(path));
  }
  return pending;
}

async function readTokenizer(path: string): Promise<LocalTokenizer> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? (error as Error).message})`;
    throw new ConfigError(`${TOKENIZER_FIELDS}: ${path} ${why}; ${FIX}`, { cause: error });
  }
  let json: unknown;
  try {
    // a byte-order mark is no JSON
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ConfigError(`${TOKENIZER_FIELDS}: ${path} is not JSON (${(error as Error).message}); ${FIX}`, { cause: error });
  }
  return localTokenizerFromJson(json, path);
}
