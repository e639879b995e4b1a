/**
 * The workload of a run (issue 23): what its requests look like. `synthetic` is the method's own
 * (METHOD.md: one exact prompt length per context row, fixed output) and the default; the others
 * are shapes users' traffic has: prompts from a file, drawn lengths, groups sharing a prefix, and
 * conversations that grow turn by turn. Written as text in the suite's `workload`,
 * LLM_BENCH_WORKLOAD and the result's `info.run.workload.text`:
 * `kind:key=value,…` (config/workload-input.ts parses it; `workloadText` writes it back).
 *
 * A non-synthetic workload replaces the context rows with ONE row of its own; the row's context
 * number is the workload's nominal prompt length (`nominalContext`), so cell keys stay
 * `<context>/<concurrency>` and `<context>@<rate>`.
 */

/** A distribution of whole numbers (token lengths, or think times in ms). */
export type LengthDistribution =
  | { kind: 'fixed'; value: number }
  /** uniform over the whole numbers min … max, both included */
  | { kind: 'uniform'; min: number; max: number }
  /** normal, rounded to whole numbers and clamped to min … max */
  | { kind: 'normal'; mean: number; sd: number; min: number; max: number }
  /** bins drawn with probability weight / Σweights, then uniform over the whole numbers min … max of the bin */
  | { kind: 'histogram'; bins: Array<{ min: number; max: number; weight: number }> };

export type Workload =
  | { kind: 'synthetic' }
  /**
   * JSONL prompts, one per line (plain `text`/`prompt`, OpenAI `messages`, ShareGPT
   * `conversations`; optional output length per line); used in a seeded order
   */
  | { kind: 'file'; path: string; seed: number }
  /** input and output lengths drawn per request; prompts synthesised to exactly the drawn input length */
  | { kind: 'lengths'; input: LengthDistribution; output: LengthDistribution; seed: number }
  /** G groups, each a P-token shared prefix; every request adds an S-token suffix of its own */
  | { kind: 'sharedPrefix'; groups: number; prefixTokens: number; suffixTokens: number; seed: number }
  /**
   * conversations of T turns: each turn sends the history so far plus a new user message of
   * `userTokens`; `systemTokens` of system prompt open each conversation; a think time (ms)
   * between a reply's end and the next turn
   */
  | { kind: 'multiTurn'; turns: number; userTokens: number; systemTokens: number; thinkMs: LengthDistribution; seed: number };

export type WorkloadKind = Workload['kind'];
export const WORKLOAD_KINDS: readonly WorkloadKind[] = ['synthetic', 'file', 'lengths', 'sharedPrefix', 'multiTurn'];

/** One chat message of a request (file `messages`, ShareGPT turns, multi-turn histories). */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * One request a workload asks for. `prompt` is always set: the whole text (for the completions
 * endpoint, a rendering of `messages`); `messages`, when set, is what the chat endpoint sends.
 */
export interface WorkloadRequest {
  prompt: string;
  messages?: ChatMessage[];
  /** the output cap (max_tokens) of this request */
  maxTokens: number;
  /** the prompt tokens it was built to have, when known (lengths, sharedPrefix, multi-turn, counted file lines) */
  promptTokens?: number;
  /** sharedPrefix: the group (0-based) */
  group?: number;
  /** multi-turn: the conversation's turn (1-based) */
  turn?: number;
}

function num(n: number): string {
  return String(n);
}

/** A distribution as the text the parser reads: "256", "uniform(128,512)", "normal(1024,256,1,4096)", "hist(1-100:3;101-200:1)". */
export function distributionText(d: LengthDistribution): string {
  switch (d.kind) {
    case 'fixed':
      return num(d.value);
    case 'uniform':
      return `uniform(${d.min},${d.max})`;
    case 'normal':
      return `normal(${d.mean},${d.sd},${d.min},${d.max})`;
    case 'histogram':
      return `hist(${d.bins.map((b) => `${b.min}-${b.max}:${b.weight}`).join(';')})`;
  }
}

/** Think times are written in seconds ("2s", "uniform(1s,3s)"). */
export function thinkText(d: LengthDistribution): string {
  const s = (ms: number) => `${ms / 1000}s`;
  switch (d.kind) {
    case 'fixed':
      return s(d.value);
    case 'uniform':
      return `uniform(${s(d.min)},${s(d.max)})`;
    case 'normal':
      return `normal(${s(d.mean)},${s(d.sd)},${s(d.min)},${s(d.max)})`;
    case 'histogram':
      return `hist(${d.bins.map((b) => `${s(b.min)}-${s(b.max)}:${b.weight}`).join(';')})`;
  }
}

/**
 * The canonical text of a workload: every parameter written, defaults included, in a fixed order,
 * so two runs of the same workload have the same text (what compare, the baseline gate and the
 * threshold files compare). "synthetic" for the default.
 */
export function workloadText(w: Workload): string {
  switch (w.kind) {
    case 'synthetic':
      return 'synthetic';
    case 'file':
      return `file:${w.path},seed=${w.seed}`;
    case 'lengths':
      return `lengths:in=${distributionText(w.input)},out=${distributionText(w.output)},seed=${w.seed}`;
    case 'sharedPrefix':
      return `sharedPrefix:groups=${w.groups},prefix=${w.prefixTokens},suffix=${w.suffixTokens},seed=${w.seed}`;
    case 'multiTurn':
      return `multiTurn:turns=${w.turns},user=${w.userTokens},system=${w.systemTokens},think=${thinkText(w.thinkMs)},seed=${w.seed}`;
  }
}

/** The mean of a distribution (normal: the mean before clamping). */
export function distributionMean(d: LengthDistribution): number {
  switch (d.kind) {
    case 'fixed':
      return d.value;
    case 'uniform':
      return (d.min + d.max) / 2;
    case 'normal':
      return d.mean;
    case 'histogram': {
      const total = d.bins.reduce((s, b) => s + b.weight, 0);
      return d.bins.reduce((s, b) => s + (b.weight / total) * ((b.min + b.max) / 2), 0);
    }
  }
}

/**
 * The context number of a workload's one row (its nominal prompt length): sharedPrefix P + S,
 * lengths the input mean (rounded), multi-turn the first turn's system + user tokens, file 0 (its
 * lengths are the file's; the page names the workload instead of the context there).
 */
export function nominalContext(w: Exclude<Workload, { kind: 'synthetic' }>): number {
  switch (w.kind) {
    case 'file':
      return 0;
    case 'lengths':
      return Math.round(distributionMean(w.input));
    case 'sharedPrefix':
      return w.prefixTokens + w.suffixTokens;
    case 'multiTurn':
      return w.systemTokens + w.userTokens;
  }
}

/** One usable line of a JSONL prompt file (workload/prompt-file.ts reads them). */
export interface PromptLine {
  /** 1-based line number in the file */
  line: number;
  /** the request's messages: a plain prompt is one user message; ShareGPT turns are mapped to roles */
  messages: ChatMessage[];
  /**
   * the output length (max_tokens): the line's own (`output_tokens` or `max_tokens`), or where it
   * gives none, its reply's token count once the run has counted it (matrix/workload-run.ts)
   */
  outputTokens?: number;
  /**
   * the answer the file gives for the request, when the line has no output length of its own:
   * ShareGPT's gpt turn after the first human turn, a messages line's trailing assistant message
   */
  replyText?: string;
  /** the prompt tokens of its rendered prompt, once the run has counted them (matrix/workload-run.ts) */
  promptTokens?: number;
}

/** A JSONL prompt file, read and checked. */
export interface PromptFile {
  /** the path as resolved (absolute) */
  path: string;
  /** the file's name without its folder (what the result records) */
  name: string;
  /** sha256 of the file's bytes, hex */
  sha256: string;
  /** the prompt lines, in file order (blank lines are not lines of the file's prompts) */
  lines: PromptLine[];
}
