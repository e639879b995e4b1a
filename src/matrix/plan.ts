/**
 * Plan of a run (pure): which prefill rows and cells exist, in which order they run, and which
 * cells are Over capacity (not run) with the numbers that decide it.
 */
import { cellKey, contextLabel } from '../shapes/labels.js';
import { overCapacity } from '../judge/status.js';
import type { ResolvedMatrix } from '../config/resolve.js';

export interface PlannedPrefill {
  key: string; // "8K"
  context: number;
}

export interface PlannedCell {
  key: string; // "8K/16"
  context: number;
  contextLabel: string;
  concurrency: number;
  /** set when the cell will not run */
  overCapacity?: { requiredTokens: number; kvCapacityTokens: number; requestTokens: number };
}

export interface MatrixPlan {
  prefill: PlannedPrefill[];
  cells: PlannedCell[];
}

export function planMatrix(
  matrix: ResolvedMatrix,
  capacity: { kvCapacityTokens?: number; maxRunningRequests?: number },
  /** a row's largest request (workload-run.ts rowRequestSizes); by default the row's context and the run's max output tokens */
  largest?: (context: number) => LargestRequest,
): MatrixPlan {
  const prefill = matrix.prefill.map((context) => ({ key: contextLabel(context), context }));
  const cells: PlannedCell[] = [];
  for (const context of matrix.contexts) {
    const request = largest?.(context);
    for (const concurrency of matrix.concurrency) cells.push(planCell(context, concurrency, matrix.maxOutputTokens, capacity, request));
  }
  return { prefill, cells };
}

/** The most tokens one request of a row holds in the KV cache: its prompt and its max_tokens. */
export interface LargestRequest {
  input: number;
  output: number;
}

/**
 * One cell: its key, and whether it is Over capacity (with the numbers that decide it): C × the
 * row's largest request, by default its context and the run's max output tokens (a workload's rows
 * send other lengths: workload-run.ts rowRequestSizes).
 */
export function planCell(
  context: number,
  concurrency: number,
  maxOutputTokens: number,
  capacity: { kvCapacityTokens?: number; maxRunningRequests?: number },
  largest: LargestRequest = { input: context, output: maxOutputTokens },
): PlannedCell {
  const over = overCapacity(context, concurrency, maxOutputTokens, capacity.kvCapacityTokens, capacity.maxRunningRequests, largest.input + largest.output);
  return {
    key: cellKey(context, concurrency),
    context,
    contextLabel: contextLabel(context),
    concurrency,
    ...(over ? { overCapacity: over } : {}),
  };
}

/** Readiness-gate timeout of a cell: a base plus a share that grows with context × concurrency. */
export function gateTimeoutMs(timeouts: { gateMs: number; gatePerContextTokenMs: number }, cell: { context: number; concurrency: number }): number {
  return timeouts.gateMs + timeouts.gatePerContextTokenMs * cell.context * cell.concurrency;
}
