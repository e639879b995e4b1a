/**
 * The parts the workload request factories share (cell-requests.ts is the entry point): the
 * options and the object a cell's requests are, the request mark that opens each request's own
 * text, and the checks against the server's max model length.
 */
import type { CalibratedPrompt, CalibrateRequest } from '../prompts/calibrate.js';
import type { ChatMessage, LengthDistribution, PromptFile, Workload, WorkloadRequest } from '../shapes/workload.js';
import { maxOf } from '../extent.js';

/**
 * What sizes prompts: PromptCalibrator satisfies it (RunPrompts' calibrator, so the run learns
 * tokens per word once). `count` is the exact prompt tokens of a text sent as the prompt (chat
 * template included), undefined without a tokenize endpoint or a local tokenizer.
 */
export interface PromptSizer {
  calibrate(req: CalibrateRequest): Promise<CalibratedPrompt>;
  count?(text: string): Promise<number | undefined>;
}

/** Seeded length draws per request index (workload/draw.ts `lengthDraws`): lengths only. */
export interface RequestLengthDraws {
  /** the prompt tokens of request i */
  input(i: number): number;
  /** the output tokens (max_tokens) of request i */
  output(i: number): number;
}

/** A prompt file and its seeded order (workload/prompt-file.ts, draw.ts): file only. */
export interface RequestFileSource {
  prompts: PromptFile;
  /** the index into `prompts.lines` of request i (`seededOrder(lines, seed)`) */
  order(i: number): number;
  /** the whole text of a line's messages (`renderMessages`): the request's `prompt` */
  render(messages: readonly ChatMessage[]): string;
}

export type CellWorkload = Extract<Workload, { kind: 'lengths' | 'sharedPrefix' | 'file' }>;

export interface WorkloadRequestsOptions {
  workload: CellWorkload;
  /** the run's id (LoadSession.runId) */
  runId: string;
  /** the cell's key: `cellKey(context, C)` ("3K/4") or `rateCellKey(context, rate)` ("3K@2") */
  cellKey: string;
  /** the run's max output tokens (sharedPrefix's max_tokens; file lines without their own) */
  maxOutputTokens: number;
  /** the server's max model length, when the probe found it */
  maxModelLen?: number;
  sizer: PromptSizer;
  /** lengths: the seeded draws */
  draws?: RequestLengthDraws;
  /** file: the file, its order and its rendering */
  file?: RequestFileSource;
}

export interface CellRequests {
  readonly kind: CellWorkload['kind'];
  /** request `requestIndex` of the cell (synchronous; `worker` is not used by these kinds) */
  requestFor(worker: number, requestIndex: number): WorkloadRequest;
  /** what warms the cell before its window (sharedPrefix: one per group; lengths, file: none) */
  scoutRequests(): WorkloadRequest[];
  /** sizes requests 0 … count−1 (calibration, counts); call once before the cell, count ≥ 1 */
  prepare(count: number): Promise<void>;
  /** requests prepared so far (0 before `prepare`) */
  readonly prepared: number;
  /** file lines dropped as too long for the server (never sent); 0 for the other kinds */
  readonly skipped: number;
  /** counter calls or measurements `prepare` spent (CalibratedPrompt.measurements summed, plus counts) */
  readonly sizingCalls: number;
  /** one line for the page: "4 groups × 3072 + 1024 tokens" */
  describe(): string;
}

/** Digits of a request number in a text (fixed width keeps token counts steady below 10^6). */
export const MARK_DIGITS = 6;

/**
 * Request i's number as it opens a request's own text: zero-padded to MARK_DIGITS and written
 * BACKWARDS (42 → "240000"), so two requests' texts differ from the first digit on instead of
 * sharing the leading zeros (a token-level prefix cache would count those as hits).
 */
export function requestMark(i: number): string {
  return String(i).padStart(MARK_DIGITS, '0').split('').reverse().join('');
}

/** The request number scouts use: never a worker's (they count up from 0). */
export const SCOUT_INDEX = 10 ** MARK_DIGITS - 1;

/** The largest value a distribution can give. */
export function distributionMax(d: LengthDistribution): number {
  switch (d.kind) {
    case 'fixed':
      return d.value;
    case 'uniform':
    case 'normal':
      return d.max;
    case 'histogram':
      return maxOf(d.bins.map((b) => b.max));
  }
}

/** Why `tokens` (what a request needs at most) cannot be sent: over the server's max model length; undefined where it fits or the length is unknown. */
export function fitsProblem(tokens: number, maxModelLen: number | undefined, what: string, fix: string): string | undefined {
  return maxModelLen !== undefined && tokens > maxModelLen ? `${what} = ${tokens} tokens exceeds the server's max model length ${maxModelLen}; ${fix}` : undefined;
}

/** `prepare`'s count, checked. */
export function checkPrepareCount(count: number): void {
  if (!Number.isInteger(count) || count < 1) {
    throw new Error(`workload requests: prepare(count) needs a whole number ≥ 1 (got ${count}); pass the number of requests the cell may send.`);
  }
}

/** The index requests beyond the prepared ones reuse: the prepared ones again, in order. */
export function wrapIndex(i: number, prepared: number): number {
  if (prepared === 0) throw new Error('workload requests: requestFor was called before prepare(count); prepare the cell first.');
  return i < prepared ? i : i % prepared;
}
