/**
 * Conversation workers of a multi-turn cell (issue 23, workload kind `multiTurn`): the closed loop
 * of cell.ts with a conversation in place of independent requests. Each of the C workers runs a
 * conversation of T turns, then starts a new one at once; turn t is sent when turn t − 1's reply
 * has ended and its think time has passed. A worker sleeping its think time has no request in
 * flight (the in-flight count, and so the window's client load and the samples, see none).
 *
 * The reply of a turn is the text the stream delivered, as it came (content only: a reasoning
 * delta is not part of the assistant message a chat client sends back). A turn that fails (an
 * error, or an answer with no token) ends its conversation: the worker backs off as cell.ts's
 * workers do and starts a new conversation; an aborted turn (the window's end) ends the worker.
 *
 * The gate, the window, the abort and the drain are cell.ts's, unchanged: this file only replaces
 * closed-loop.ts's `runClosedLoopWorker`.
 */
import type { DecodedChunk } from '../shapes/engine.js';
import type { WorkloadRequest } from '../shapes/workload.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import { sleep } from './session.js';
import type { CellSend, WorkerState } from './worker-state.js';

/** What a cell's conversations are (workload/conversation.ts `Conversations` is one). */
export interface CellConversations {
  /** turns of each conversation, T ≥ 1 */
  readonly turns: number;
  /** conversation k's turn t (1-based), given the replies of turns 1 … t − 1 */
  request(conversation: number, turn: number, replies: readonly string[]): WorkloadRequest;
  /** think time before turn t (2 … T) of conversation k, ms */
  thinkMs(conversation: number, turn: number): number;
}

/** What the run knows of one request of a conversation. */
export interface RequestTurn {
  /** the conversation's number in the cell (0-based, in the order the workers started them) */
  conversation: number;
  /** 1-based */
  turn: number;
  /**
   * tokens of the history this turn re-sends before its new user message, as the server counted
   * them: the previous turn's usage prompt_tokens + completion_tokens (absent on turn 1, or when
   * the server reported no usage)
   */
  historyTokens?: number;
}

export interface ConversationWorkerContext {
  cellTag: string;
  send: CellSend;
  state: WorkerState;
  signal: AbortSignal;
  conversations: CellConversations;
  /** the next conversation number, shared by the cell's workers */
  counter: { next: number };
  /** the turn of every request sent, by id (what the per-turn figures read) */
  turnOf: Map<string, RequestTurn>;
  /** cell.ts's wait after request t, the n-th failure in a row (a 429's Retry-After, else the backoff) */
  waitAfterFailureMs: (t: RequestTimeline, consecutiveFailures: number) => number;
}

/** The reply text of a stream: every non-reasoning text chunk, in order. */
function replyCollector(): { onChunk: (d: DecodedChunk) => void; text: () => string } {
  const parts: string[] = [];
  return {
    onChunk: (d) => {
      if (d.hasText && !d.reasoning && d.text) parts.push(d.text);
    },
    text: () => parts.join(''),
  };
}

/**
 * Worker w: conversation after conversation until the window closes. Request ids are cell.ts's
 * (`${cellTag}-w${w}-r${seq}`); each request's turn goes into `turnOf`.
 */
export async function runConversationWorker(w: number, ctx: ConversationWorkerContext): Promise<void> {
  const { state, signal, conversations: conv } = ctx;
  const running = () => !state.stopping && !signal.aborted;
  let seq = 0;
  let failures = 0;
  while (running()) {
    const conversation = ctx.counter.next++;
    const replies: string[] = [];
    let historyTokens: number | undefined;
    for (let turn = 1; turn <= conv.turns && running(); turn++) {
      if (turn > 1) {
        await sleep(conv.thinkMs(conversation, turn), signal);
        if (!running()) break;
      }
      const id = `${ctx.cellTag}-w${w}-r${seq++}`;
      const request = conv.request(conversation, turn, replies);
      state.requestCounter++;
      ctx.turnOf.set(id, { conversation, turn, ...(historyTokens !== undefined ? { historyTokens } : {}) });
      const reply = replyCollector();
      state.inFlight.add(id);
      const t = await ctx.send(
        id,
        request,
        w,
        signal,
        () => {
          state.gotToken[w] = true;
          state.decoding[w] = true;
          state.failingInARow[w] = 0;
        },
        reply.onChunk,
      );
      state.decoding[w] = false;
      state.inFlight.delete(id);
      state.timelines.push(t);
      if (t.end?.kind === 'error' || t.chunkMs.length === 0) {
        // the conversation ends here; the next one starts after the usual backoff
        failures++;
        state.failingInARow[w] = failures;
        if (!state.stopping) await sleep(ctx.waitAfterFailureMs(t, failures), signal);
        break;
      }
      failures = 0;
      state.failingInARow[w] = 0;
      if (t.end?.kind !== 'done') break; // aborted: the window has closed
      replies.push(reply.text());
      historyTokens = t.promptTokens !== undefined && t.completionTokens !== undefined ? t.promptTokens + t.completionTokens : undefined;
    }
  }
}
