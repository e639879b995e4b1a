/**
 * A multi-turn cell's figures per turn (issue 23: TTFT of the first turn against later turns, and
 * the history length). Pure.
 *
 * The rules are the cell's own (figures.ts), applied to each turn's requests:
 * - TTFT: every request whose first token arrived by the window's end, from its TTFT start
 *   (request.ts `ttftStartMs`), so the turns' TTFT samples are exactly the cell's, split by turn;
 * - requests: those that completed (ended done) inside the window, as the cell's completedRequests;
 * - promptTokensMean: the mean usage prompt_tokens of the turn's requests that report it (the
 *   history so far plus the new user message).
 * A request with no turn in `turnOf` (none of a conversation's, e.g. a scout) is left out. A turn
 * is listed when it has a request in the window's figures (completed, or with a TTFT sample).
 */
import type { RequestTimeline } from '../shapes/timeline.js';
import type { TurnFigures } from '../shapes/result.js';
import { ttftStartMs } from './request.js';
import { distribution, mean } from './stats.js';

export interface TurnFiguresInput {
  /** the cell's worker requests (scout excluded), including those sent before the window */
  timelines: readonly RequestTimeline[];
  windowStartMs: number;
  windowEndMs: number;
  /** each request's turn, by id (load/cell.ts CellRun.turns) */
  turnOf: ReadonlyMap<string, { turn: number }>;
  /** where TTFT starts; the cell's (MATRIX_TTFT_FROM in the matrix); default 'send' as figures.ts */
  ttftFrom?: 'send' | 'sent-headers';
}

interface TurnAccumulator {
  requests: number;
  ttft: number[];
  prompt: number[];
}

/** The per-turn figures, turn 1 first. */
export function computeTurnFigures(input: TurnFiguresInput): TurnFigures[] {
  const { windowStartMs: ws, windowEndMs: we } = input;
  if (!Number.isFinite(ws) || !Number.isFinite(we) || !(we > ws)) {
    throw new RangeError(`computeTurnFigures: windowEndMs (${we}) must be finite and after windowStartMs (${ws})`);
  }
  const byTurn = new Map<number, TurnAccumulator>();
  for (const t of input.timelines) {
    const turn = input.turnOf.get(t.id)?.turn;
    if (turn === undefined) continue;
    const hasTtft = t.firstTokenMs !== undefined && t.firstTokenMs <= we;
    const completed = t.end?.kind === 'done' && t.end.atMs >= ws && t.end.atMs <= we;
    if (!hasTtft && !completed) continue;
    let acc = byTurn.get(turn);
    if (!acc) byTurn.set(turn, (acc = { requests: 0, ttft: [], prompt: [] }));
    if (completed) acc.requests++;
    if (hasTtft) acc.ttft.push(t.firstTokenMs! - ttftStartMs(t, input.ttftFrom ?? 'send'));
    if (t.promptTokens !== undefined) acc.prompt.push(t.promptTokens);
  }
  return [...byTurn.entries()]
    .sort(([a], [b]) => a - b)
    .map(([turn, acc]) => {
      const f: TurnFigures = { turn, requests: acc.requests };
      const ttft = distribution(acc.ttft);
      if (ttft !== undefined) f.ttftMs = ttft;
      const prompt = mean(acc.prompt);
      if (prompt !== undefined) f.promptTokensMean = prompt;
      return f;
    });
}
