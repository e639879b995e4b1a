/**
 * The run's workload, opened once (issue 23): the resolved Workload, what the result records of it
 * (`info.run.workload`), and for `file` the prompt file, read once at the start so a bad line
 * fails the run before any server is reached.
 *
 * A file's identity is its name and content, not where it lies: the recorded text is
 * `file:<name>,seed=N` and the sha256 is compared beside it, so a baseline measured on a laptop
 * compares with a CI run of the same file.
 */
import { basename } from 'node:path';
import { ConfigError } from '../errors.js';
import type { PromptFile, PromptLine, Workload } from '../shapes/workload.js';
import { workloadText } from '../shapes/workload.js';
import type { WorkloadInfo } from '../shapes/result.js';
import { readPromptFile, renderMessages } from '../workload/prompt-file.js';
import { SHORTEST_PROMPT } from '../prompts/synth.js';
import type { PromptSizer } from '../workload/cell-requests.js';
import { drawnMean } from '../workload/draw.js';
import { distributionMax } from '../workload/request-kit.js';
import type { LargestRequest } from './plan.js';

/** lines counted at once when a file is counted */
const COUNT_AT_ONCE = 8;

export interface RunWorkload {
  workload: Workload;
  info: WorkloadInfo;
  /** the file workload's prompts */
  file?: PromptFile;
}

/** The workload's canonical text as results record it (a file by its name). */
export function recordedWorkloadText(w: Workload): string {
  return w.kind === 'file' ? `file:${basename(w.path)},seed=${w.seed}` : workloadText(w);
}

/** Opens the run's workload; a file workload reads (and checks) its file here. */
export function openRunWorkload(workload: Workload, rates: boolean): RunWorkload {
  if (workload.kind === 'multiTurn' && rates) {
    throw new ConfigError(
      'LLM_BENCH_WORKLOAD: a multiTurn workload runs in the closed-loop cells only (a concurrency column is that many simultaneous conversations); ' +
        'open-loop rate cells send single requests. Set LLM_BENCH_RATES=none (or drop matrix.rates), or choose another workload',
    );
  }
  const info: WorkloadInfo = { kind: workload.kind, text: recordedWorkloadText(workload) };
  if (workload.kind !== 'file') return { workload, info };
  const file = readPromptFile(workload.path);
  info.file = { name: file.name, sha256: file.sha256, lines: file.lines.length, used: file.lines.length, skipped: 0 };
  return { workload, info, file };
}

/**
 * A file's lines, counted once per run where prompts can be counted (a tokenize endpoint or a
 * local tokenizer):
 * - a line without an output length of its own whose file gives the answer (`replyText`) asks
 *   for as many tokens as that answer has, as vLLM's ShareGPT loader does: the answer counted as
 *   a prompt, less the chat template's tokens (a one-word prompt's count less one);
 * - where the max model length is known, a line whose prompt plus output exceeds it is never sent
 *   (workload/file-requests.ts skips it the same way) and the result counts it in `file.skipped`.
 * Without a counter nothing is skipped, replies size nothing (the run's max output tokens), and the
 * server's refusals are failed requests of the cell.
 */
export async function countFileLines(run: RunWorkload, sizer: PromptSizer, maxModelLen: number | undefined, maxOutputTokens: number): Promise<void> {
  if (!run.file || !run.info.file || !sizer.count) return;
  const template = await sizer.count(SHORTEST_PROMPT);
  if (template === undefined) return;
  const count = sizer.count.bind(sizer);
  let skipped = 0;
  let fromReplies = 0;
  const one = async (line: PromptLine): Promise<void> => {
    if (line.outputTokens === undefined && line.replyText !== undefined) {
      const reply = await count(line.replyText);
      if (reply !== undefined) {
        line.outputTokens = Math.max(1, reply - (template - 1));
        fromReplies++;
      }
    }
    if (maxModelLen === undefined) return;
    const tokens = await count(renderMessages(line.messages));
    if (tokens === undefined) return;
    // kept on the line: a cell's requests (workload/file-requests.ts) skip by the same count
    line.promptTokens = tokens;
    if (tokens + (line.outputTokens ?? maxOutputTokens) > maxModelLen) skipped++;
  };
  // a few lines at a time: a long file is counted in seconds, without flooding the server
  for (let i = 0; i < run.file.lines.length; i += COUNT_AT_ONCE) await Promise.all(run.file.lines.slice(i, i + COUNT_AT_ONCE).map(one));
  run.info.file.skipped = skipped;
  run.info.file.used = run.file.lines.length - skipped;
  if (fromReplies > 0) run.info.file.outputFromReplies = fromReplies;
}

/**
 * Chat-template tokens each reply a turn re-sends adds, with the user message after it, beyond the
 * two texts' own sizes (each sized alone, its template counted once): measured on a real llama.cpp
 * b4748, turn 3 of `turns=4,user=128,system=128` at 512 output tokens counted 1,596 prompt tokens
 * against 1,536 of texts, 30 for each of its 2 re-sent replies.
 */
export const TEMPLATE_TOKENS_PER_REPLY = 32;

/**
 * Where a multiTurn conversation can outgrow the server's max model length: turn t sends the
 * system message, t user messages and the t − 1 replies before it, with their template's tokens
 * (TEMPLATE_TOKENS_PER_REPLY each), and asks for the max output; at its largest (every reply at the
 * max output) that is system + t × (user + max output) + (t − 1) × the template's tokens. The first
 * turn that can pass the max model length, when it is a later turn than the first (a first turn
 * past it makes every cell of the row Not run: workload/conversation.ts), gets a line at the run's
 * start. The server meets it once the replies before it are long enough (at most, all at the max
 * output), so it is said, not refused; and what the server does then differs: a refusal (a failed
 * request: its cell reads Errors, the conversation ends), or a cut (a real llama.cpp b4748 shifts
 * its context: that turn 4 at 512 output tokens on 2,048-token slots was sent about 2,260 prompt
 * tokens and counted 1,243). Undefined when every turn fits, or the length is unknown.
 */
export function multiTurnLengthNote(w: Workload, maxOutputTokens: number, maxModelLen: number | undefined): string | undefined {
  if (w.kind !== 'multiTurn' || maxModelLen === undefined) return undefined;
  const at = (t: number): number => turnPromptTokens(w, t, maxOutputTokens) + maxOutputTokens;
  let turn = 1;
  while (turn <= w.turns && at(turn) <= maxModelLen) turn++;
  if (turn === 1 || turn > w.turns) return undefined;
  // turn ≥ 2 here: it re-sends at least one reply
  const template = ` + about ${(turn - 1) * TEMPLATE_TOKENS_PER_REPLY} of chat template for the ${turn - 1} repl${turn === 2 ? 'y' : 'ies'} it re-sends`;
  return (
    `multiTurn: turn ${turn} of ${w.turns} can hold about ${at(turn).toLocaleString('en-US')} tokens (system ${w.systemTokens} + ${turn} × (user ${w.userTokens} + max output ${maxOutputTokens})${template}), ` +
    `over the server's max model length ${maxModelLen.toLocaleString('en-US')}, once the replies before it are long enough (at most, all at the max output). The server may then refuse it ` +
    `(a failed request: its cell reads Errors, and the conversation ends) or cut its history (llama.cpp shifts its context; the Workload section's prompt tokens per turn show it). ` +
    `To keep every turn within it, lower turns= or user= in LLM_BENCH_WORKLOAD, or LLM_BENCH_MAX_TOKENS`
  );
}

/**
 * The prompt of a multiTurn conversation's turn t at its largest: the system message, t user
 * messages and the t − 1 replies before it, each at the max output with its template's tokens
 * (TEMPLATE_TOKENS_PER_REPLY). multiTurnLengthNote adds the max output it asks for; the row's
 * KV-cache sizes (multiTurnRequestSizes) hold it beside that output.
 */
function turnPromptTokens(w: Extract<Workload, { kind: 'multiTurn' }>, t: number, maxOutputTokens: number): number {
  return w.systemTokens + t * w.userTokens + (t - 1) * (maxOutputTokens + TEMPLATE_TOKENS_PER_REPLY);
}

/** A request's tokens in the KV cache: its prompt (input) and its max_tokens (output): plan.ts's LargestRequest. */
export type RequestTokens = LargestRequest;

/** What a row's requests hold: the mean request and the largest one (by prompt + output). */
export interface RowRequestSizes {
  mean: RequestTokens;
  largest: RequestTokens;
}

/**
 * What a row's requests ask of the server's KV cache: the largest decides a concurrency cell's
 * Over capacity (METHOD.md: C × (context + max output)), the mean a rate cell's (Little's law puts
 * the mean request in flight). The method's synthetic rows and sharedPrefix send the row's context
 * and ask for the run's max output tokens; multiTurn's turns grow (multiTurnRequestSizes); a
 * lengths workload sends its drawn lengths (the largest: the top of both distributions, which one
 * draw can reach); a file its lines that are sent (prompt tokens where the run counted them, else
 * the row's 0; each line's output length, else the run's), the largest being the line with the
 * most of both together.
 */
export function rowRequestSizes(run: RunWorkload, context: number, maxOutputTokens: number, maxModelLen: number | undefined): RowRequestSizes {
  const w = run.workload;
  if (w.kind === 'multiTurn') return multiTurnRequestSizes(w, maxOutputTokens, maxModelLen);
  if (w.kind === 'lengths') {
    return { mean: { input: drawnMean(w.input), output: drawnMean(w.output) }, largest: { input: distributionMax(w.input), output: distributionMax(w.output) } };
  }
  const lines = w.kind === 'file' ? run.file?.lines : undefined;
  if (lines !== undefined) {
    // one pass, no spread into Math.max: a prompt file may hold hundreds of thousands of lines
    let sent = 0;
    let inputSum = 0;
    let outputSum = 0;
    let largest: RequestTokens | undefined;
    for (const line of lines) {
      const output = line.outputTokens ?? maxOutputTokens;
      // as a cell's requests skip them (workload/file-requests.ts): a counted line too long for the server is never sent
      if (maxModelLen !== undefined && line.promptTokens !== undefined && line.promptTokens + output > maxModelLen) continue;
      const input = line.promptTokens ?? context;
      sent++;
      inputSum += input;
      outputSum += output;
      if (largest === undefined || input + output > largest.input + largest.output) largest = { input, output };
    }
    if (largest !== undefined) return { mean: { input: inputSum / sent, output: outputSum / sent }, largest };
  }
  const one = { input: context, output: maxOutputTokens };
  return { mean: one, largest: one };
}

/**
 * A multiTurn row's requests: turn t sends turnPromptTokens, so the largest is the last turn's,
 * every reply before it at the max output. C
 * conversations hold C of those when all are at their last turn: they start together, and a
 * benchmark's replies run to the max output, so with a fixed think time they stay close; drawn
 * think times spread them, so it is a bound, as a lengths workload's largest request is. (Until
 * 2026-12-06 the row was held to its first turn, system + user + max output, and a cell that fitted
 * that ran, and could outgrow the KV cache at its later turns.) No request holds more than the
 * server's max model length, where known: a server refuses a longer one or cuts its history
 * (llama.cpp shifts its context), and multiTurnLengthNote says so at the run's start. The mean is
 * over the turns, as a conversation sends them.
 */
function multiTurnRequestSizes(w: Extract<Workload, { kind: 'multiTurn' }>, maxOutputTokens: number, maxModelLen: number | undefined): RowRequestSizes {
  const sent = (t: number): number => turnPromptTokens(w, t, maxOutputTokens);
  // what the cache can hold of a prompt beside its max output (a first turn past the max model length makes the row Not run)
  const held = (t: number): number => (maxModelLen !== undefined && sent(t) + maxOutputTokens > maxModelLen ? Math.max(0, maxModelLen - maxOutputTokens) : sent(t));
  let sum = 0;
  for (let t = 1; t <= w.turns; t++) sum += held(t);
  return { mean: { input: sum / w.turns, output: maxOutputTokens }, largest: { input: held(w.turns), output: maxOutputTokens } };
}

/**
 * rowRequestSizes by row, each row sized once (a file row is one pass over its lines): for the
 * callers that ask again and again, the capacity search at every probe, a rate cell at its
 * capacity check and its client threads. Ask after countFileLines, which sizes the lines.
 */
export function requestSizesByRow(run: RunWorkload, maxOutputTokens: number, maxModelLen: number | undefined): (context: number) => RowRequestSizes {
  const sized = new Map<number, RowRequestSizes>();
  return (context) => {
    let sizes = sized.get(context);
    if (sizes === undefined) {
      sizes = rowRequestSizes(run, context, maxOutputTokens, maxModelLen);
      sized.set(context, sizes);
    }
    return sizes;
  };
}

/** Each row's largest request (rowRequestSizes), as the plan's Over capacity reads it (plan.ts planMatrix, planCell). */
export function largestRequests(run: RunWorkload, maxOutputTokens: number, maxModelLen: number | undefined): (context: number) => LargestRequest {
  const sizes = requestSizesByRow(run, maxOutputTokens, maxModelLen);
  return (context) => sizes(context).largest;
}
