/**
 * What a cell's client threads and the cell's coordinator say to each other (stream-threads.ts on
 * the cell's thread, stream-thread-main.ts in each worker thread). Every message is plain data
 * (structured clone): a timeline's typed arrays travel as they are.
 */
import type { EndpointKind, EngineKind, HttpTarget, ServerFacts, ServerRequestTimings } from '../shapes/engine.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { WorkloadRequest } from '../shapes/workload.js';
import type { EventLoopDelayStats } from './loop-monitor.js';
import type { CpuSource } from './client-cpu.js';
import type { ArrivalLagStats } from '../client/arrival-clock.js';

/** What a thread needs to send the cell's requests as the cell's own thread would. */
export interface ThreadSetup {
  /** this thread's number (0-based) and the cell's thread count */
  thread: number;
  threads: number;
  /** the cell's workers this thread runs: w = first … first + count − 1 */
  firstWorker: number;
  workerCount: number;
  cellTag: string;
  engine: EngineKind;
  target: HttpTarget;
  facts: ServerFacts;
  model: string;
  endpoint: EndpointKind;
  timeouts: { headersMs: number; stallMs: number; unreachableRetryMs: number };
  runId: string;
  /** what the run had learned of the server's connections when the cell started */
  closesAfterResponse: boolean;
  /** the local tokenizer's file (session.localTokenizer), loaded again in the thread */
  localTokenizerPath?: string;
}

/** coordinator → thread */
export type ToThread =
  /** start the workers, each with its first REQUESTS_AHEAD requests (stream-threads.ts), in order */
  | { kind: 'go'; first: Array<{ w: number; request: WorkloadRequest }> }
  /** worker w's next request (sent when one of its requests started, so REQUESTS_AHEAD wait ahead) */
  | { kind: 'request'; w: number; request: WorkloadRequest }
  /** the window has closed: stop the meters, abort everything, end the workers, report */
  | { kind: 'stop' };

/** what a thread reports of its requests, a turn of its event loop at a time (FromThread 'batch') */
export type RequestNews = Extract<FromThread, { kind: 'sent' | 'first' | 'ended' }>;

/** thread → coordinator */
export type FromThread =
  /** the request news of one turn of the thread's event loop, in order */
  | { kind: 'batch'; news: RequestNews[] }
  /** connections opened; `monoMs` is the thread's clock when it sent this (the offset check) */
  | { kind: 'ready'; monoMs: number; opened: number; failed: number; firstError?: string }
  /** request `id` of worker w was handed to undici */
  | { kind: 'sent'; w: number; id: string }
  /** worker w's request has its first token */
  | { kind: 'first'; w: number }
  /** a request ended; `failingInARow` is worker w's count after it */
  | { kind: 'ended'; w: number; timeline: RequestTimeline; failingInARow: number; serverTimings?: ServerRequestTimings }
  /** every worker has ended; the thread's own meters over its span, and its connections */
  | {
      kind: 'done';
      loopDelayMs?: EventLoopDelayStats;
      arrivalLagMs?: ArrivalLagStats;
      cpu: { cores: number; source: CpuSource };
      connectionsOpened: number;
      learnedClose?: { requestId: string; idleMs: number };
    }
  /** the thread cannot go on (a setup failure, an exception) */
  | { kind: 'error'; message: string };
