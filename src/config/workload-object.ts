/**
 * The suite's `workload` written as an object (issue 23, docs/workloads.md): the same kinds and
 * keys as the text `kind:key=value,…` (config/workload-input.ts parses both), each field documented
 * for an editor's hover. Token lengths are numbers or distribution strings ('normal(1024,256)'),
 * think times strings with their unit ('2s').
 */

/** The method's own prompts: one exact length per context row, fixed output (the default). */
export interface SyntheticWorkloadInput {
  /**
   * The workload's kind: synthetic prompts of the context rows' exact lengths.
   * @example 'synthetic'
   */
  kind: 'synthetic';
}

/** Prompts from a JSONL file, one per line, used in a seeded order. */
export interface FileWorkloadInput {
  /**
   * The workload's kind: prompts read from a JSONL file.
   * @example 'file'
   */
  kind: 'file';
  /**
   * Path of the JSONL prompt file, relative to the working folder (plain `text`/`prompt`, OpenAI
   * `messages` or ShareGPT `conversations` lines; optional `output_tokens` per line).
   * @example 'bench/workloads/sample.jsonl'
   */
  path: string;
  /**
   * Seed of the order the lines are used in, an integer ≥ 0 (no unit).
   * @default 1
   * @example 42
   */
  seed?: number;
}

/** Input and output lengths drawn per request; prompts synthesised to the drawn length. */
export interface LengthsWorkloadInput {
  /**
   * The workload's kind: drawn input and output lengths.
   * @example 'lengths'
   */
  kind: 'lengths';
  /**
   * Prompt length in tokens: a number (fixed) or a distribution, 'uniform(128,512)',
   * 'normal(1024,256)' (clamped to 1 … mean + 4 sd), 'normal(1024,256,64,2048)',
   * 'hist(1-100:3;101-200:1)'.
   * @default 'normal(1024,256)'
   * @example 'uniform(512,2048)'
   */
  in?: number | string;
  /**
   * Output length (max_tokens) in tokens: a number or a distribution, as `in`.
   * @default the run's maxOutputTokens, fixed
   * @example 256
   */
  out?: number | string;
  /**
   * Seed of the draws, an integer ≥ 0 (no unit).
   * @default 1
   * @example 42
   */
  seed?: number;
}

/** G groups, each a shared P-token prefix; every request adds an S-token suffix of its own. */
export interface SharedPrefixWorkloadInput {
  /**
   * The workload's kind: groups of requests sharing a prefix.
   * @example 'sharedPrefix'
   */
  kind: 'sharedPrefix';
  /**
   * Number of groups (count, integer ≥ 1); requests are spread over them.
   * @default 4
   * @example 16
   */
  groups?: number;
  /**
   * Length of each group's shared prefix, in tokens (integer ≥ 1).
   * @default 3072
   * @example 8192
   */
  prefix?: number;
  /**
   * Length of each request's own suffix, in tokens (integer ≥ 1).
   * @default 1024
   * @example 256
   */
  suffix?: number;
  /**
   * Seed of the prompts' text and of the order of groups, an integer ≥ 0 (no unit).
   * @default 1
   * @example 42
   */
  seed?: number;
}

/** Conversations of T turns: each turn re-sends the history plus a new user message. */
export interface MultiTurnWorkloadInput {
  /**
   * The workload's kind: multi-turn conversations (a concurrency column is that many conversations).
   * @example 'multiTurn'
   */
  kind: 'multiTurn';
  /**
   * Turns per conversation (count, integer 1 … 100).
   * @default 5
   * @example 8
   */
  turns?: number;
  /**
   * Length of each turn's new user message, in tokens (integer ≥ 1).
   * @default 256
   * @example 512
   */
  user?: number;
  /**
   * Length of the system prompt that opens each conversation, in tokens (integer ≥ 0).
   * @default 256
   * @example 1024
   */
  system?: number;
  /**
   * Think time between a reply's end and the next turn, with its unit: '2s', '500ms', or a
   * distribution such as 'uniform(1s,3s)' or 'normal(2s,500ms)'.
   * @default '1s'
   * @example 'uniform(1s,3s)'
   */
  think?: string;
  /**
   * Seed of the prompts' text and of the drawn think times, an integer ≥ 0 (no unit).
   * @default 1
   * @example 42
   */
  seed?: number;
}

/** The suite's workload as an object: one of the kinds with its keys. */
export type WorkloadObject = SyntheticWorkloadInput | FileWorkloadInput | LengthsWorkloadInput | SharedPrefixWorkloadInput | MultiTurnWorkloadInput;
