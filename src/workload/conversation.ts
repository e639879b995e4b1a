/**
 * The conversations of a multi-turn cell (issue 23, workload kind `multiTurn`).
 *
 * Conversation k's turn t sends the whole history so far and one new user message:
 *   [system]? user₁ assistant₁ user₂ assistant₂ … user_t
 * where assistant_i is the reply of turn i exactly as it was streamed (the runner keeps it,
 * load/conversations.ts). So a conversation's turn t − 1 is a byte-identical prefix of its turn t
 * (chat: the messages; completions: `render(messages)`, which must keep that property), which is
 * what a prefix cache reuses; the new user message and the last reply are what it cannot.
 *
 * Texts:
 * - the system message (omitted when systemTokens is 0) and the user message of each turn are
 *   sized ONCE, before the window, by the injected `size(targetTokens, prefix)` (the run's
 *   calibrator), each from a prefix that starts with a sample lead of fixed width;
 * - conversation k's texts are those texts with the sample lead replaced by k's own lead, of the
 *   same width (so they count the same tokens): the conversation's number with its digits least
 *   significant first, so consecutive conversations differ from their first character and share no
 *   prefix with each other beyond the chat template's own tokens.
 * Building a request is then synchronous and cheap, for any number of conversations.
 *
 * The sizes are those of one message counted alone (the calibrator counts a prompt of one user
 * message, its chat template included), so a turn counts about systemTokens + userTokens for its
 * new part, give or take the template's tokens per message.
 */
import type { ChatMessage, Workload, WorkloadRequest } from '../shapes/workload.js';
import { ConfigError } from '../errors.js';
import { fitsProblem } from './request-kit.js';

export type MultiTurnWorkload = Extract<Workload, { kind: 'multiTurn' }>;

/**
 * A text that starts with `prefix` and counts about `targetTokens` prompt tokens (the run's
 * PromptCalibrator: `calibrate({ targetTokens, prefix }).then((p) => p.text)`); the text may grow
 * only after the prefix.
 */
export type TextSizer = (targetTokens: number, prefix: string) => Promise<string>;

/** The one text the completions endpoint sends for a list of messages (workload/prompt-file.ts `renderMessages`). */
export type RenderMessages = (messages: readonly ChatMessage[]) => string;

/** Think time in ms before turn `turn` (2 … T) of conversation `conversation` (e.g. workload/draw.ts `lengthDraws`). */
export type ThinkTime = (conversation: number, turn: number) => number;

/** Digits of a conversation's number in its lead: 10⁶ conversations a cell at most. */
export const CONVERSATION_DIGITS = 6;
/** Digits of a turn's number in a user message's lead: 999 turns at most. */
export const TURN_DIGITS = 3;
const MAX_CONVERSATIONS = 10 ** CONVERSATION_DIGITS;
const MAX_TURNS = 10 ** TURN_DIGITS - 1;

/** The conversation number, fixed width, least significant digit first ("17" → "710000"). */
function conversationDigits(conversation: number): string {
  return String(conversation).padStart(CONVERSATION_DIGITS, '0').split('').reverse().join('');
}

/** The lead of a conversation's text: its number, then the turn's (`sys` for the system message). */
export function conversationLead(conversation: number, turn: number | 'system'): string {
  const t = turn === 'system' ? 'sys' : String(turn).padStart(TURN_DIGITS, '0');
  return `${conversationDigits(conversation)}-${t}`;
}

/** The lead the texts are sized with: the width of every real lead, a number no conversation has. */
const SAMPLE_CONVERSATION = MAX_CONVERSATIONS - 1;

export interface PrepareConversationsOptions {
  workload: MultiTurnWorkload;
  /**
   * unique to the run and the cell (e.g. the cell's request-id tag `${runId}-c${ctx}x${C}`): in
   * every text, so no earlier run or cell has cached them
   */
  tag: string;
  size: TextSizer;
  render: RenderMessages;
  think: ThinkTime;
  /** each turn's output cap (max_tokens): the run's max output tokens */
  maxTokens: number;
  /**
   * the server's max model length, when known: a first turn past it refuses the cell (later turns
   * hold the replies as they came, so they are the run start's note: matrix/workload-run.ts
   * multiTurnLengthNote)
   */
  maxModelLen?: number;
}

/** The prepared conversations of one cell: every method is synchronous. */
export interface Conversations {
  readonly turns: number;
  /** conversation k's system message, or undefined when systemTokens is 0 */
  system(conversation: number): ChatMessage | undefined;
  /** conversation k's user message of turn t (1-based) */
  user(conversation: number, turn: number): ChatMessage;
  /** turn t's messages, given the replies of turns 1 … t − 1 (`replies[i]` is turn i + 1's) */
  messages(conversation: number, turn: number, replies: readonly string[]): ChatMessage[];
  /** turn t's request: messages, their rendering, the output cap, the turn */
  request(conversation: number, turn: number, replies: readonly string[]): WorkloadRequest;
  /** think time before turn t (2 … T), ms */
  thinkMs(conversation: number, turn: number): number;
}

function checkWorkload(w: MultiTurnWorkload, maxTokens: number): void {
  const bad = (field: string, rule: string, value: unknown): never => {
    throw new Error(`multiTurn workload ${field} = ${String(value)} is invalid: ${rule}`);
  };
  if (!Number.isInteger(w.turns) || w.turns < 1 || w.turns > MAX_TURNS) bad('turns', `it must be an integer 1 … ${MAX_TURNS} (e.g. turns=5)`, w.turns);
  if (!Number.isInteger(w.userTokens) || w.userTokens < 1) bad('user', 'it must be an integer ≥ 1 (tokens of each user message, e.g. user=512)', w.userTokens);
  if (!Number.isInteger(w.systemTokens) || w.systemTokens < 0) bad('system', 'it must be an integer ≥ 0 (tokens of the system message; 0 = none)', w.systemTokens);
  if (!Number.isInteger(maxTokens) || maxTokens < 1) bad('max tokens', 'each turn needs an output cap ≥ 1 (LLM_BENCH_MAX_TOKENS)', maxTokens);
}

/**
 * Why no conversation can start: its first turn (the system and user messages and the output cap)
 * is over the server's max model length. Later turns hold the replies as they came, so they are
 * the run start's note (matrix/workload-run.ts multiTurnLengthNote), not a refusal.
 */
export function firstTurnProblem(w: MultiTurnWorkload, maxTokens: number, maxModelLen: number | undefined): string | undefined {
  return fitsProblem(
    w.systemTokens + w.userTokens + maxTokens,
    maxModelLen,
    `a conversation's first turn (system ${w.systemTokens} + user ${w.userTokens} + ${maxTokens} output tokens)`,
    'lower system= or user= in LLM_BENCH_WORKLOAD, or LLM_BENCH_MAX_TOKENS',
  );
}

/** Sizes one text from a prefix that starts with the sample lead; returns what follows the lead. */
async function sizedBody(size: TextSizer, tokens: number, sampleLead: string, rest: string): Promise<string> {
  const prefix = `${sampleLead} ${rest}`;
  const text = await size(tokens, prefix);
  if (!text.startsWith(prefix)) {
    throw new Error(`multiTurn: the text sizer returned a text that does not start with its prefix ${JSON.stringify(prefix)}; a sizer may only add text after the prefix`);
  }
  return text.slice(sampleLead.length);
}

/**
 * Sizes the cell's texts (systemTokens once, userTokens once per turn) and returns its
 * conversations; call it before the cell's window.
 */
export async function prepareConversations(o: PrepareConversationsOptions): Promise<Conversations> {
  const w = o.workload;
  checkWorkload(w, o.maxTokens);
  const tooLong = firstTurnProblem(w, o.maxTokens, o.maxModelLen);
  if (tooLong !== undefined) throw new ConfigError(tooLong);
  const about = `${o.tag} seed ${w.seed}`;
  const systemBody = w.systemTokens > 0 ? await sizedBody(o.size, w.systemTokens, conversationLead(SAMPLE_CONVERSATION, 'system'), `${about}. System.`) : undefined;
  const userBodies: string[] = [];
  for (let t = 1; t <= w.turns; t++) {
    userBodies.push(await sizedBody(o.size, w.userTokens, conversationLead(SAMPLE_CONVERSATION, t), `${about}. User turn ${t}.`));
  }

  const checkConversation = (k: number): void => {
    if (!Number.isInteger(k) || k < 0 || k >= SAMPLE_CONVERSATION) {
      throw new RangeError(`multiTurn: conversation number ${k} is out of range: 0 … ${SAMPLE_CONVERSATION - 1} (a cell starts at most that many conversations)`);
    }
  };
  const checkTurn = (t: number): void => {
    if (!Number.isInteger(t) || t < 1 || t > w.turns) throw new RangeError(`multiTurn: turn ${t} is out of range: 1 … ${w.turns}`);
  };
  const system = (k: number): ChatMessage | undefined => {
    checkConversation(k);
    return systemBody === undefined ? undefined : { role: 'system', content: conversationLead(k, 'system') + systemBody };
  };
  const user = (k: number, t: number): ChatMessage => {
    checkConversation(k);
    checkTurn(t);
    return { role: 'user', content: conversationLead(k, t) + userBodies[t - 1]! };
  };
  const messages = (k: number, t: number, replies: readonly string[]): ChatMessage[] => {
    checkTurn(t);
    if (replies.length < t - 1) throw new RangeError(`multiTurn: turn ${t} needs the replies of turns 1 … ${t - 1} (got ${replies.length})`);
    const out: ChatMessage[] = [];
    const s = system(k);
    if (s) out.push(s);
    for (let i = 1; i < t; i++) out.push(user(k, i), { role: 'assistant', content: replies[i - 1]! });
    out.push(user(k, t));
    return out;
  };
  return {
    turns: w.turns,
    system,
    user,
    messages,
    request: (k, t, replies) => {
      const m = messages(k, t, replies);
      return { prompt: o.render(m), messages: m, maxTokens: o.maxTokens, turn: t };
    },
    thinkMs: (k, t) => {
      checkTurn(t);
      const ms = o.think(k, t);
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`multiTurn: think time ${ms} ms before turn ${t} of conversation ${k} is invalid: it must be a finite number ≥ 0`);
      return ms;
    },
  };
}
