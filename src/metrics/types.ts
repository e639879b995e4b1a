/**
 * Figures of a cell and of a prefill row, as defined in the README's method section
 * (which follows shared METHOD.md). Units are in the names. A figure that cannot be computed is
 * `undefined`, never 0.
 */

export type CellStatus =
  | 'valid'
  | 'over-capacity'
  | 'requests-queued'
  | 'warmup-timed-out'
  | 'errors'
  | 'client-limited';

export interface Distribution {
  median: number;
  p90: number;
  p99: number;
  samples: number;
}

export interface CellFigures {
  /** output tokens whose arrival time is inside the window */
  outputTokens: number;
  tokenSource: 'usage' | 'chunk-token-ids' | 'chunks';
  /** observed window length */
  measuredForS: number;
  /** outputTokens / measuredForS */
  totalTokensPerSecond: number;
  /** median over requests of 1000 / request's mean time between tokens */
  perRequestTokensPerSecond?: number;
  /** per-request mean time between tokens inside the window: median, p90, p99 */
  timeBetweenTokensMs?: Distribution;
  /** first-token time − send time of the cell's requests: median (+p90/p99), with sample count */
  ttftMs?: Distribution;
  /** mean of the server's running-requests metric inside the window, when metrics exist */
  serverActiveRequests?: number;
  /** client's time-weighted in-flight request count over the window */
  clientActiveRequests: number;
  /** the one shown as "Average active requests": server when available, else client */
  averageActiveRequests: number;
  averageActiveRequestsSource: 'server' | 'client';
  /** server and client active counts differ by more than 10 % */
  activeRequestsDisagree: boolean;
  /** max of the server's waiting-requests metric inside the window */
  maxWaitingRequests?: number;
  completedRequests: number;
  /** failed inside the cell (from the first worker request to the window's end) */
  failedRequests: number;
  /** requests started by the cell's workers (scout excluded) */
  startedRequests: number;
  /** server-reported prompt tokens of the cell's requests (median), when usage was seen */
  promptTokens?: number;
}

export interface PrefillFigures {
  promptTokens: number;
  ttftMs: number;
  /** promptTokens / (ttftMs / 1000) */
  promptTokensPerSecond: number;
}
