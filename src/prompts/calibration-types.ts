/**
 * The calibration's constants and shapes (calibrate.ts is the calibrator and re-exports them):
 * the tolerance rule, what a calibration is asked and gives back, what a result records of it.
 */
import type { EndpointKind, EngineAdapter, HttpTarget, ServerFacts } from '../shapes/engine.js';
import type { LocalCounter } from './local-counter.js';

/** Absolute part of the tolerance, tokens. */
export const TOLERANCE_MIN_TOKENS = 64;
/** Relative part of the tolerance. */
export const TOLERANCE_FRACTION = 0.005;
/** Most server requests estimated mode sends for one target (after the learnt state exists). */
export const DEFAULT_MAX_MEASUREMENTS = 4;
/** Most counter calls exact mode makes for one target (a safety bound; ~20 are typical at 128K). */
export const MAX_EXACT_COUNTS = 80;
/** Estimated mode reuses the learnt overhead for fixed parts (lead + prefix + tail) within this many characters of the measured ones. */
export const OVERHEAD_REUSE_CHARS = 64;
/** Text series whose counts exact mode keeps across targets (a run has one per row and a few per workload cell). */
export const MAX_SERIES = 64;

export type CalibrationMode = 'exact' | 'estimated';
/** What counted the prompt tokens: the server's tokenize endpoint, its usage.prompt_tokens, or a local tokenizer. */
export type PromptTokenCounter = 'tokenize-endpoint' | 'server-usage' | 'local-tokenizer';

export interface CalibrationRecord {
  mode: CalibrationMode;
  targetTokens: number;
  toleranceTokens: number;
  withinTolerance: boolean;
  countedBy?: PromptTokenCounter;
  /** local tokenizer: the chat template's tokens, from the server's usage, added to the content's count */
  templateTokens?: number;
}

/** What a result records of a calibration (PromptCalibration in the result schema). */
export function calibrationRecord(p: CalibratedPrompt): CalibrationRecord {
  return {
    mode: p.mode,
    targetTokens: p.targetTokens,
    toleranceTokens: p.toleranceTokens,
    withinTolerance: p.withinTolerance,
    ...(p.countedBy !== undefined ? { countedBy: p.countedBy } : {}),
    ...(p.templateTokens !== undefined ? { templateTokens: p.templateTokens } : {}),
  };
}

/** max(64, 0.5 % of target) tokens. */
export function toleranceTokens(targetTokens: number): number {
  return Math.max(TOLERANCE_MIN_TOKENS, Math.ceil(targetTokens * TOLERANCE_FRACTION));
}

export interface CalibrateRequest {
  targetTokens: number;
  /** run-unique text at the start (cold prefill); seeds the filler unless `seed` is given */
  prefix: string;
  /** sample of the per-request tail counted with the text (not part of `text`) */
  tail?: string;
  /** sample of the per-stream lead counted with the text (not part of `text`) */
  lead?: string;
  /** filler seed; default `prefix` */
  seed?: string;
}

export interface CalibratedPrompt {
  /** the shared text: prefix + filler (or SHORTEST_PROMPT for target 0) */
  text: string;
  /** server-counted prompt tokens of lead + text + tail */
  promptTokens: number;
  mode: CalibrationMode;
  targetTokens: number;
  toleranceTokens: number;
  withinTolerance: boolean;
  lead: string;
  tail: string;
  /** counter calls or server requests spent on this target */
  measurements: number;
  /** what counted the tokens (absent: a caller-given counter) */
  countedBy?: PromptTokenCounter;
  /** local tokenizer: the template tokens added to each count (absent: content only) */
  templateTokens?: number;
}

export interface CalibratorOptions {
  /** exact counter of a full prompt (chat template included); resolves undefined when there is none */
  countTokens?: (text: string) => Promise<number | undefined>;
  /** server-counted prompt tokens of one real request (max_tokens = 1); the fallback */
  measurePromptTokens?: (text: string) => Promise<number>;
  /** estimated mode: most requests per target; default DEFAULT_MAX_MEASUREMENTS */
  maxMeasurements?: number;
  /** what `countTokens` is, for the record */
  countedBy?: PromptTokenCounter;
  /** the template tokens `countTokens` adds (local tokenizer), once known */
  templateTokens?: () => number | undefined;
}

export interface AdapterCalibratorOptions {
  adapter: EngineAdapter;
  target: HttpTarget;
  facts: ServerFacts;
  endpoint: EndpointKind;
  measurePromptTokens?: (text: string) => Promise<number>;
  maxMeasurements?: number;
  /** counts prompts when the server has no tokenize endpoint (target.tokenizer / LLM_BENCH_TOKENIZER) */
  localTokenizer?: LocalCounter;
  /** how long a tokenize call waits for a server that does not answer; default DEFAULTS.unreachableRetryMs (LLM_BENCH_RETRY_S) */
  retryMs?: number;
  /** a tokenize call found the server unreachable and waits `waitMs` before trying again */
  onRetry?: (error: unknown, waitMs: number) => void;
}
