/**
 * What the closed-loop workers of a cell share (load/closed-loop.ts runClosedLoopWorker and
 * load/conversations.ts runConversationWorker): the send of one request and the worker state the
 * gate, the window and the end read.
 */
import type { DecodedChunk } from '../shapes/engine.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { WorkloadRequest } from '../shapes/workload.js';

/** One request of the cell: its id, request (prompt or messages, output cap), worker's client (C = the scout's), first-token hook. */
export type CellSend = (
  id: string,
  request: WorkloadRequest,
  dispatcherIndex: number,
  signal: AbortSignal,
  onFirstToken?: () => void,
  onChunk?: (chunk: DecodedChunk) => void,
) => Promise<RequestTimeline>;

/** What the C closed-loop workers share: read by the gate and the window, stopped by the end. */
export interface WorkerState {
  /** every request the workers sent, in the order they ended */
  readonly timelines: RequestTimeline[];
  /** ids of the worker requests in flight; cellAbort aborts them all */
  readonly inFlight: Set<string>;
  /** worker w has had a token */
  readonly gotToken: boolean[];
  /** worker w's request in flight has had its first token (it is decoding, not waiting or in prefill) */
  readonly decoding: boolean[];
  /** failed requests in a row per worker (a token resets it) */
  readonly failingInARow: number[];
  /** no new requests (the window has closed) */
  stopping: boolean;
  /** requests started by all workers: the prompt's request index */
  requestCounter: number;
}
