/**
 * One line of the optional per-request file (LLM_BENCH_REQUESTS_FILE; docs/running.md "Every
 * request, one line each"), as vLLM's `--save-detailed` keeps its requests: when each was sent, got
 * its first token and ended, its tokens, its gaps in brief, and its error. The result JSON and the
 * pages stay the same size whatever the token count; this file grows with the requests (one line
 * each, about 500 B), never with the tokens.
 *
 * Times are seconds from the opening of the cell's window (negative: before it), to 0.1 ms.
 */
export interface RequestRecord {
  /** the run: when the Vitest invocation that measured it started (ISO 8601); every line of one file has the same */
  run: string;
  /** what measured it: a sustained-decode cell or an open-loop rate cell */
  kind: 'decode' | 'rate';
  /** the cell's key: `1K/8` (decode), `1K@2/s` (rate) */
  cell: string;
  context: number;
  /** simultaneous requests of a decode cell */
  concurrency?: number;
  /** offered requests/s of a rate cell */
  rate?: number;
  /** which measurement of a repeated cell (LLM_BENCH_REPEAT), from 1 */
  repeat: number;
  /** the request's id (its X-Request-Id) */
  id: string;
  /** a rate cell's request: when the schedule said to send it */
  scheduledS?: number;
  /** handed to the HTTP client */
  sentS: number;
  /** first token-carrying chunk */
  firstTokenS?: number;
  /** last token-carrying chunk */
  lastTokenS?: number;
  /** when it ended (done, error or aborted at the window's end); absent while still open */
  endS?: number;
  /** first token − the TTFT start (the request written to the socket, as the cell's TTFT) */
  ttftMs?: number;
  /** last token chunk − the TTFT start (vLLM's latency) */
  e2eMs?: number;
  /** (e2e − TTFT) / (tokens − 1), requests of 2 or more tokens (vLLM's TPOT) */
  tpotMs?: number;
  /** output tokens over the whole request, counted as the cell counts them */
  outputTokens: number;
  /** output tokens inside the window (what the cell's total tok/s counts) */
  windowTokens: number;
  /** where the token counts came from (usage, chunk-token-ids, local-tokenizer, chunks) */
  tokenSource: string;
  /** prompt tokens the server reported, else the ones the prompt was built to have */
  promptTokens?: number;
  /** ended normally inside the window: counted in the cell's completed requests */
  completedInWindow: boolean;
  /** the request's gaps between token chunks, its whole stream (the cell's ITL counts those ending inside the window) */
  itl?: { gaps: number; meanMs: number; medianMs: number; p99Ms: number; maxMs: number };
  /** how it ended: done, error, aborted (the window closed on it), or open (no end recorded) */
  end: 'done' | 'error' | 'aborted' | 'open';
  /** an error's code and message (secrets redacted), and its HTTP status where there was one */
  error?: { code: string; message: string; httpStatus?: number };
  /** sent once more on a fresh connection after a reused one failed before any response byte */
  resent?: number;
}
