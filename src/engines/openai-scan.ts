/**
 * An OpenAI-compatible stream chunk read from its bytes (client/json-scan.ts) instead of
 * JSON.parse then decodeOpenAIChunk: the same DecodedChunk, field for field, for the chunks every
 * token event is (content or reasoning deltas, usage, a finish reason), at a fraction of the cost
 * (issue 24 item 3); and a llama.cpp chunk as decodeLlamacppChunk reads it, `timings` included
 * (b4748 puts them on every chunk). Anything else is left to the decoders (the scan returns
 * undefined): a chunk that is not valid JSON or not an object, an `error`, tool-call deltas, and
 * numbers sent as strings. test/engines/openai-scan.test.ts checks the two readings agree on every
 * recorded chunk, on the real llama.cpp transcripts and on 20,000 mutated chunks.
 */
import { ARRAY, JsonFieldScanner, NULL, ABSENT, NUMBER, OBJECT, ScanPlan, STRING } from '../client/json-scan.js';
import type { DecodedChunk, ServerRequestTimings } from '../shapes/engine.js';

/** llama.cpp `timings` fields, in parseLlamaTimings' order */
const TIMING_FIELDS = [
  ['promptN', 'prompt_n'],
  ['cacheN', 'cache_n'],
  ['promptMs', 'prompt_ms'],
  ['predictedN', 'predicted_n'],
  ['predictedMs', 'predicted_ms'],
  ['predictedPerSecond', 'predicted_per_second'],
] as const satisfies readonly (readonly [keyof ServerRequestTimings, string])[];

const PATHS = [
  ['error'],
  ['timings'],
  ['token_ids'],
  ['choices', 0, 'delta', 'content'],
  ['choices', 0, 'delta', 'reasoning_content'],
  ['choices', 0, 'delta', 'reasoning'],
  ['choices', 0, 'delta', 'tool_calls'],
  ['choices', 0, 'text'],
  ['choices', 0, 'finish_reason'],
  ['choices', 0, 'token_ids'],
  ['usage', 'prompt_tokens'],
  ['usage', 'completion_tokens'],
  ['usage', 'prompt_tokens_details', 'cached_tokens'],
  ...TIMING_FIELDS.map(([, name]) => ['timings', name] as const),
] as const;

const plan = new ScanPlan(PATHS);
const slot = (path: readonly (string | 0)[]): number => plan.slotOf(path);
const ERROR = slot(['error']);
const TIMINGS = slot(['timings']);
const ROOT_IDS = slot(['token_ids']);
const CHOICES = slot(['choices']);
const CHOICE = slot(['choices', 0]);
const DELTA = slot(['choices', 0, 'delta']);
const CONTENT = slot(['choices', 0, 'delta', 'content']);
const REASONING_CONTENT = slot(['choices', 0, 'delta', 'reasoning_content']);
const REASONING = slot(['choices', 0, 'delta', 'reasoning']);
const TOOL_CALLS = slot(['choices', 0, 'delta', 'tool_calls']);
const TEXT = slot(['choices', 0, 'text']);
const FINISH = slot(['choices', 0, 'finish_reason']);
const CHOICE_IDS = slot(['choices', 0, 'token_ids']);
const USAGE = slot(['usage']);
const PROMPT = slot(['usage', 'prompt_tokens']);
const COMPLETION = slot(['usage', 'completion_tokens']);
const DETAILS = slot(['usage', 'prompt_tokens_details']);
const CACHED = slot(['usage', 'prompt_tokens_details', 'cached_tokens']);
const TIMING_SLOTS = TIMING_FIELDS.map(([key, name]) => [key, slot(['timings', name])] as const);

/** one scanner per thread: a scan's results are read before the next scan starts */
const scanner = new JsonFieldScanner(plan);

/**
 * The DecodedChunk decodeOpenAIChunk would give for the JSON in bytes [start, end), or undefined
 * where this reading does not cover the chunk (the caller then parses it). `wantText`: fill `text`
 * (a local tokenizer's recount, or a caller reading the reply); without it `text` is left out.
 */
export function scanOpenAIChunk(bytes: Uint8Array, start: number, end: number, wantText: boolean): DecodedChunk | undefined {
  const s = scanner;
  if (!s.scan(bytes, start, end) || s.type(0) !== OBJECT || !absentOrNull(s, ERROR)) return undefined;
  const out: DecodedChunk = { hasText: false, reasoning: false };
  if (s.type(CHOICES) === ARRAY && s.type(CHOICE) === OBJECT && !readChoice(s, out, wantText)) return undefined;
  if (s.type(USAGE) === OBJECT && !readUsage(s, out)) return undefined;
  return out;
}

/**
 * The `timings` of the chunk the last scanOpenAIChunk read, as parseLlamaTimings reads them
 * (llama.cpp's scan, engines/llamacpp.ts): undefined where there are none, false where a field is
 * not read here (a number sent as a string).
 */
export function scannedLlamaTimings(): ServerRequestTimings | undefined | false {
  if (scanner.type(TIMINGS) !== OBJECT) return undefined;
  const timings: ServerRequestTimings = {};
  let any = false;
  for (const [key, at] of TIMING_SLOTS) {
    const v = count(scanner, at);
    if (v === false) return false;
    if (v !== undefined && v >= 0) {
      timings[key] = v;
      any = true;
    }
  }
  return any ? timings : undefined;
}

function absentOrNull(s: JsonFieldScanner, slot: number): boolean {
  const t = s.type(slot);
  return t === ABSENT || t === NULL;
}

/** choices[0]: its delta, text, finish reason and token ids; false where the scan does not cover it */
function readChoice(s: JsonFieldScanner, out: DecodedChunk, wantText: boolean): boolean {
  if (s.type(DELTA) === OBJECT) {
    if (s.nonEmptyString(CONTENT)) {
      out.hasText = true;
      if (wantText) out.text = s.text(CONTENT);
    } else {
      const reasoning = s.nonEmptyString(REASONING_CONTENT) ? REASONING_CONTENT : s.nonEmptyString(REASONING) ? REASONING : -1;
      if (reasoning >= 0) {
        out.hasText = true;
        out.reasoning = true;
        if (wantText) out.text = s.text(reasoning);
      } else if (s.type(TOOL_CALLS) === ARRAY && s.count(TOOL_CALLS) > 0) {
        return false; // the calls' names and arguments: decodeOpenAIChunk
      }
    }
  }
  if (s.nonEmptyString(TEXT)) {
    out.hasText = true;
    if (wantText) out.text = (out.text ?? '') + s.text(TEXT);
  }
  if (s.nonEmptyString(FINISH) && !s.stringIs(FINISH, 'null')) {
    const reason = s.text(FINISH);
    if (reason !== 'null') out.finishReason = reason;
  }
  const ids = s.type(CHOICE_IDS) === ARRAY ? CHOICE_IDS : s.type(ROOT_IDS) === ARRAY ? ROOT_IDS : -1;
  if (ids >= 0) out.tokenCount = s.count(ids);
  return true;
}

/** usage's token counts; false where a count is a string (asNumber's numeric strings: decodeOpenAIChunk) */
function readUsage(s: JsonFieldScanner, out: DecodedChunk): boolean {
  const prompt = count(s, PROMPT);
  const completion = count(s, COMPLETION);
  const cached = s.type(DETAILS) === OBJECT ? count(s, CACHED) : undefined;
  if (prompt === false || completion === false || cached === false) return false;
  const usage = usageOf(prompt, completion, cached);
  if (usage !== undefined) out.usage = usage;
  return true;
}

/** a chunk's usage from its three counts (each undefined where the chunk has none); undefined without any (decodeOpenAIChunk's rule too) */
export function usageOf(prompt: number | undefined, completion: number | undefined, cached: number | undefined): DecodedChunk['usage'] {
  if (prompt === undefined && completion === undefined && cached === undefined) return undefined;
  const u: NonNullable<DecodedChunk['usage']> = {};
  if (prompt !== undefined) u.promptTokens = prompt;
  if (completion !== undefined) u.completionTokens = completion;
  if (cached !== undefined) u.cachedTokens = cached;
  return u;
}

/** a finite number field; undefined for any other type; false for a string (not read here) */
function count(s: JsonFieldScanner, slot: number): number | undefined | false {
  const t = s.type(slot);
  if (t === STRING) return false;
  if (t !== NUMBER) return undefined;
  const v = s.number(slot);
  return Number.isFinite(v) ? v : undefined;
}
