/**
 * Every decision about one cell, in two calls:
 * - judgeCellStatus: a measured cell's status, statuses and evidence, from its repeats' figures
 *   and timelines (status.ts for each repeat, repeat.ts over them);
 * - judgeCell: what the cell's test enforces and the result stores, from the cell's result: its
 *   threshold budget (thresholds.ts), the cell rules below, the SLO verdict (slo-verdict.ts) and
 *   the baseline (baseline-gate.ts).
 * The cell rules, each a failure line:
 * - Client-limited fails unless the run allows it (allowClientLimited): its figures may be wrong;
 * - Stream buffered fails unless the threshold file accepts the status (tolerances.acceptStatuses);
 * - failed requests fail unless the budget sets max.failedRequests or the run allows errors;
 * - no output tokens in the window fails (a Client-limited cell has its own line already).
 * An Over capacity cell (not run) fails only when it has a budget that now fails: a budgeted cell
 * that no longer fits (a smaller KV cache, a longer max output) is a regression, not a skip.
 * Pure: the caller stores the judgement on the result and throws (src/matrix/cell-test.ts).
 */
import type { CellResult, ClientLimitedEvidence, Slo, SloVerdict } from '../shapes/result.js';
import type { CellBudget, Tolerances } from '../thresholds/schema.js';
import { oneLine } from '../text/escape.js';
import { percent } from '../text/format.js';
import { METHOD_LOOP_DELAY_MS, cellStatuses, type CellStatusInput, type CellStatusResult } from './status.js';
import { combineStatuses } from './repeat.js';
import { evaluateCell } from './thresholds.js';
import { sloVerdict } from './slo-verdict.js';
import { baselineCellFailures, type Baseline } from './baseline-gate.js';
import { overCapacityReason } from '../text/over-capacity.js';

/** What a cell is judged against: the run's rules and the cell's own budget. */
export interface CellRules {
  /** the threshold file's budget for this cell */
  budget?: CellBudget;
  tolerances?: Tolerances;
  allowClientLimited: boolean;
  allowErrors: boolean;
  /** the run's SLO (LLM_BENCH_SLO) */
  slo?: Slo;
  /** LLM_BENCH_BASELINE */
  baseline?: Baseline;
  /** the run's max output tokens (an Over capacity cell's line shows its sum) */
  maxOutputTokens: number;
}

/** What the judge decides about a cell beyond its status; stored on the result as they are. */
export interface CellJudgement {
  /** the budget's and the cell rules' failure lines (empty: pass); absent on an Over capacity cell that does not fail */
  thresholdFailures?: string[];
  /** the cell against the run's SLO; absent without one */
  slo?: SloVerdict;
  /** the baseline's regression lines; absent without a baseline */
  baselineFailures?: string[];
}

/** A measured cell's status over its repeats (one CellStatusInput per repeat, in run order). */
export function judgeCellStatus(repeats: readonly CellStatusInput[]): CellStatusResult {
  return combineStatuses(repeats.map(cellStatuses));
}

/** The judgement of one cell's result (measured, kept from a resumed run, or Over capacity). */
export function judgeCell(key: string, cell: CellResult, rules: CellRules): CellJudgement {
  if (cell.status === 'over-capacity') return judgeOverCapacity(key, cell, rules);
  const thresholdFailures = [...evaluateCell(key, cell, rules.budget, rules.tolerances), ...cellRuleFailures(key, cell, rules)];
  return {
    thresholdFailures,
    // a kept cell is judged again: the SLO may have changed
    ...(rules.slo ? { slo: sloVerdict(cell, rules.slo) } : {}),
    ...(rules.baseline ? { baselineFailures: baselineCellFailures(rules.baseline, cell) } : {}),
  };
}

function judgeOverCapacity(key: string, cell: CellResult, rules: CellRules): CellJudgement {
  const out: CellJudgement = {};
  const budgetFailures = evaluateCell(key, cell, rules.budget, rules.tolerances);
  if (rules.budget !== undefined && budgetFailures.length > 0) {
    out.thresholdFailures = [`${key} is Over capacity: ${overCapacityReason(cell, rules.maxOutputTokens)}, but its budget expects it to run`, ...budgetFailures];
  }
  if (rules.slo) out.slo = sloVerdict(cell, rules.slo);
  // a cell the baseline measured is a regression now (the KV cache holds less): one line, as compare gives
  if (rules.baseline) out.baselineFailures = baselineCellFailures(rules.baseline, cell);
  return out;
}

/**
 * A client thread under this many cores that is late anyway was most likely held up by other work
 * on the machine, not by its own streams. On this project's 2-core VM (2026-12-02): the tiny
 * matrix's 4-stream cells, marked on CI, used 0.04–0.075 of a core; the fewest streams that put a
 * thread over the bound by their own reads (256, issue 24's harness, `perf/accuracy.ts`) 0.15 on
 * each of two threads and 0.25 on one. Only the advice depends on it (with HELD_UP_WAIT_SHARE).
 */
export const IDLE_CLIENT_CORES = 0.1;

/**
 * A client thread carrying at most this many streams cannot be milliseconds late by its own reads:
 * a burst of 16 token events, at the 10–15 µs of CPU an event costs with sockets on this project's
 * VMs (docs/accuracy.md, CPU per event), is under 0.3 ms of work. Such a thread under
 * MOSTLY_IDLE_CORES that was late and waited for a core was held up by other work too, however far
 * over IDLE_CLIENT_CORES: a real llama.cpp server with -t 2 on the 2-core VM (2026-12-03) held up
 * 4- and 8-stream cells whose thread used 0.12 of a core and waited for one 10 % of the time,
 * which the CPU cut alone told to spread over more threads.
 */
export const FEW_STREAMS_PER_THREAD = 16;
/** see FEW_STREAMS_PER_THREAD: over half a core, a thread's own work may be what made it late */
export const MOSTLY_IDLE_CORES = 0.5;

/**
 * A thread that waited, ready to run, for a core this share of the time or more had no core free:
 * more client threads would wait too. Same VM and harness: 1,024 streams on two threads with the
 * server in a third process waited 21 %; on one thread 3.9 %; 256 streams 10–12 %, where a second
 * thread still lowered the true error p99 (5.2 to 3.4 ms).
 */
export const NO_FREE_CORE_WAIT_SHARE = 0.15;

/**
 * A nearly idle thread is said to have been held up by others only when it also waited for a core
 * at least this share of the time (where the wait was read): the tiny matrix's crowded 4-stream
 * cells waited 2.2–4.3 %. An idle thread that did not wait stalled on short work of its own (a
 * collection, a very large chunk), and gets the general advice.
 */
export const HELD_UP_WAIT_SHARE = 0.01;

/**
 * Why the client's self-check marked a cell, in words: `the load generator's timing error estimate
 * p99 was 6.1 ms (…; bound 5 ms) on client thread 2 of 2 and its CPU 0.95 cores (bound 0.9), ready
 * to run but waiting for a core 12 % of the time`. The decode cells' failure line and the rate
 * cells' (judge-rate.ts) both say it.
 */
export function clientSelfCheckText(ev: ClientLimitedEvidence): string {
  const timing =
    ev.timingErrorP99Ms !== undefined
      ? `timing error estimate p99 was ${ev.timingErrorP99Ms.toFixed(1)} ms (event-loop delay p99 ${ev.eventLoopDelayP99Ms.toFixed(1)} ⊕ read lag p99 ${(ev.arrivalLagP99Ms ?? 0).toFixed(1)}, the root of their squares' sum; bound ${ev.boundMs} ms)`
      : `event-loop delay p99 was ${ev.eventLoopDelayP99Ms.toFixed(1)} ms (bound ${ev.boundMs} ms)`;
  const where = ev.thread !== undefined ? ` on client thread ${ev.thread} of ${ev.threads}` : '';
  return (
    `the load generator's ${timing}${where}` +
    `${ev.cpuCores !== undefined ? ` and its CPU ${ev.cpuCores.toFixed(2)} cores (bound ${ev.cpuBoundCores})` : ''}` +
    `${ev.coreWaitShare !== undefined ? `, ready to run but waiting for a core ${percent(ev.coreWaitShare)} of the time` : ''}` +
    `${overSeveralThreads(ev) ? ` (each figure the worst of its ${ev.threads} client threads)` : ''}`
  );
}

/**
 * What to do about a Client-limited cell: free cores when its thread was nearly idle and waited
 * (others held it up) or waited long for a core (none was free for more threads), else more
 * threads. A wider bound is offered only where it would change the verdict: a bound under
 * METHOD's 50 ms, with the loop delay alone under 50 ms (over it, the cell is marked whatever the bound).
 */
export function clientLimitedAdvice(ev: ClientLimitedEvidence | undefined, streams?: number): string {
  return `${clientLimitedFix(ev, streams)}, or set allowClientLimited`;
}

/**
 * Where a Client-limited cell's hold-up most likely was, from its self-check's figures:
 * `held-up` when its thread was nearly idle and waited for a core (other work on the machine held
 * its loop up), `no-free-core` when it waited long for a core (more threads would wait too),
 * `own-load` else (its own streams: spread them over more threads).
 */
export function clientHoldUp(ev: Pick<ClientLimitedEvidence, 'cpuCores' | 'threads' | 'coreWaitShare'> | undefined, streams?: number): 'held-up' | 'no-free-core' | 'own-load' {
  const waited = ev?.coreWaitShare;
  if (ev?.cpuCores !== undefined && nearlyIdle(ev.cpuCores, ev.threads ?? 1, streams) && (waited === undefined || waited >= HELD_UP_WAIT_SHARE)) return 'held-up';
  if (waited !== undefined && waited >= NO_FREE_CORE_WAIT_SHARE) return 'no-free-core';
  return 'own-load';
}

/**
 * A decode cell's self-check figures are one thread's (the furthest over the bound, named by
 * `thread`); a rate cell's on several threads are each the worst over them (`threads` and no
 * `thread`).
 */
function overSeveralThreads(ev: ClientLimitedEvidence): ev is ClientLimitedEvidence & { threads: number } {
  return ev.thread === undefined && ev.threads !== undefined;
}

/**
 * Too idle for its own streams to have made it late: `cores` (a decode cell's thread the figures
 * are of, a rate cell's busiest thread) under IDLE_CLIENT_CORES, or under MOSTLY_IDLE_CORES with
 * at most FEW_STREAMS_PER_THREAD streams a thread (`streams`: the cell's, spread over its
 * `threads`; unknown for a rate cell, whose streams in flight vary).
 */
function nearlyIdle(cores: number, threads: number, streams: number | undefined): boolean {
  if (cores < IDLE_CLIENT_CORES) return true;
  return streams !== undefined && Math.ceil(streams / threads) <= FEW_STREAMS_PER_THREAD && cores < MOSTLY_IDLE_CORES;
}

/** what else runs on a machine and may hold a client thread up */
export const OTHER_WORK = 'a server running here, the embedded simulator, Vitest, other processes';

/** who was idle, at what CPU, and whose loop was held up: the thread the figures are of, or every thread of a rate cell (its CPU figure is the busiest's) */
function idleThreads(ev: ClientLimitedEvidence, cores: number): string {
  return overSeveralThreads(ev)
    ? `its ${ev.threads} threads were mostly idle (the busiest at ${cores.toFixed(2)} cores), so most likely other work on this machine held up their loops (${OTHER_WORK}), not their own streams`
    : `its thread was mostly idle (${cores.toFixed(2)} cores), so most likely other work on this machine held up its loop (${OTHER_WORK}), not its own streams`;
}

/** clientLimitedAdvice without its last resort (allowClientLimited): a rate cell's line adds that once after all its fixes */
export function clientLimitedFix(ev: ClientLimitedEvidence | undefined, streams?: number): string {
  const hold = clientHoldUp(ev, streams);
  if (hold === 'held-up' && ev?.cpuCores !== undefined) {
    const widen = ev.boundMs < METHOD_LOOP_DELAY_MS && ev.eventLoopDelayP99Ms <= METHOD_LOOP_DELAY_MS ? `, raise the bound on a shared machine (LLM_BENCH_CLIENT_LIMIT_MS; METHOD.md's is ${METHOD_LOOP_DELAY_MS} ms)` : '';
    return (
      `${idleThreads(ev, ev.cpuCores)}: give the client free cores (a server on another machine, fewer jobs at once)${widen}`
    );
  }
  if (hold === 'no-free-core') {
    return 'this machine had no core free for it, so more client threads would wait too: give the client more cores (the server on another machine, fewer jobs at once), run fewer streams per process';
  }
  return 'spread the streams over more client threads (LLM_BENCH_CLIENT_THREADS), run fewer streams per process';
}

/** The cell rules of this file's header, as failure lines. */
function cellRuleFailures(key: string, result: CellResult, rules: CellRules): string[] {
  const failures: string[] = [];
  const figures = result.figures;
  if (result.status === 'client-limited' && !rules.allowClientLimited) {
    const ev = result.evidence.clientLimited;
    failures.push(`${key} is Client-limited: ${ev ? clientSelfCheckText(ev) : "the load generator's self-check was over its bounds"}, so its figures may be wrong; ${clientLimitedAdvice(ev, result.concurrency)}`);
  }
  if (result.status === 'stream-buffered' && !(rules.tolerances?.acceptStatuses ?? []).includes('stream-buffered')) {
    const b = result.evidence.streamBuffered;
    failures.push(
      `${key}: the stream was buffered on the way (${b ? `${Math.round(b.zeroGapShare * 100)} % of the gaps between a request's chunks under 0.5 ms or a quarter of its own rhythm, median burst ${b.burstTokens.median} tokens, largest ${b.burstTokens.max}` : 'bursts'}), ` +
        "so its TTFT and time between tokens are the proxy's, not the server's. Turn buffering off on the way (nginx: proxy_buffering off; no gzip on text/event-stream), " +
        'or accept the status in the threshold file (tolerances.acceptStatuses: ["stream-buffered"])',
    );
  }
  if (figures && figures.failedRequests > 0 && !rules.allowErrors && rules.budget?.max?.failedRequests === undefined) {
    const e = result.evidence.errors;
    const codes = e ? Object.entries(e.byCode).map(([code, n]) => `${n} ${code}`).join(', ') : '';
    failures.push(
      `${key} had ${figures.failedRequests} failed request${figures.failedRequests === 1 ? '' : 's'}${codes ? ` (${codes})` : ''}` +
        // the server's text as sent, on one line (a failure line is one line); the pages escape the whole line
        `${e?.firstMessage ? `; first: ${oneLine(e.firstMessage)}` : ''}. A cell with failed requests fails unless its threshold budget sets max.failedRequests or LLM_BENCH_ALLOW_ERRORS=1`,
    );
  }
  if (figures && figures.outputTokens === 0 && result.status !== 'client-limited') {
    const silent = result.evidence.noResponse;
    const why = silent ? `: ${silent.requests} of ${silent.of} requests got no response headers in up to ${Math.round(silent.longestWaitS)} s (the server, or a gateway, took them and answered nothing; check its log)` : '';
    failures.push(`${key} measured no output tokens in its window (${figures.failedRequests} failed requests)${why}`);
  }
  return failures;
}
