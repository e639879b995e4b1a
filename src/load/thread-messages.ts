/**
 * What a cell's client threads and the cell's coordinator say to each other (stream-threads.ts on
 * the cell's thread, stream-thread-main.ts in each worker thread). Every message is plain data
 * (structured clone): a timeline's typed arrays travel as they are.
 */
import type { EndpointKind, EngineKind, HttpTarget, ServerFacts } from '../shapes/engine.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { WorkloadRequest } from '../shapes/workload.js';
import type { EventLoopDelayStats } from './loop-monitor.js';
import type { CpuReading } from './client-cpu.js';
import type { ArrivalLagStats } from '../client/arrival-clock.js';
import type { DueRequest, ScheduledTimeline } from './schedule-follower.js';
import type { ConnectionCounts } from '../client/pool.js';

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
  /**
   * a rate cell's thread (rate-threads.ts): it follows its share of the schedule on `lanes`
   * connections (firstWorker/workerCount then name its lanes), opened as requests need them
   */
  rate?: { lanes: number };
}

/** a ready thread whose event loop runs says 'alive' this often, so the cell's thread can tell a stuck one (stream-threads.ts) */
export const THREAD_ALIVE_EVERY_MS = 1_000;

/** coordinator → thread */
export type ToThread =
  /** start the workers, each with its first REQUESTS_AHEAD requests (stream-threads.ts), in order */
  | { kind: 'go'; first: Array<{ w: number; request: WorkloadRequest }> }
  /** worker w's next request (sent when one of its requests started, so REQUESTS_AHEAD wait ahead) */
  | { kind: 'request'; w: number; request: WorkloadRequest }
  /**
   * a closed-loop cell's window is open and closes at `endMs` (monoMs): from then the thread sends
   * no new request and its meters stop, on its own timer, as the cell's thread does without threads
   * ('stop' comes by message, a few ms later where the cell's thread is busy)
   */
  | { kind: 'window'; endMs: number }
  /**
   * the window has closed: stop the meters, abort everything, end the workers, report; a rate
   * cell's thread counts what it held due before `windowEndMs` and never sent as unsent
   */
  | { kind: 'stop'; windowEndMs?: number }
  /** the clock check: answer with this thread's clock at once ('clock') */
  | { kind: 'clock' }
  /** a rate cell's thread: start following the schedule (its requests come in 'due' messages) */
  | { kind: 'rate-go' }
  /** a rate cell's thread: its next requests of the schedule, in due order, sent ahead of their time */
  | { kind: 'due'; items: DueRequest[] };

/** what a thread reports of its requests, a turn of its event loop at a time (FromThread 'batch') */
export type RequestNews = Extract<FromThread, { kind: 'sent' | 'first' | 'ended' | 'rate-sent' | 'rate-ended' }>;

/** thread → coordinator */
export type FromThread =
  /** the request news of one turn of the thread's event loop, in order */
  | { kind: 'batch'; news: RequestNews[] }
  /**
   * connections opened; `monoMs` is the thread's clock when it sent this;
   * `lazy`: none were opened ahead (a rate cell's lanes open as requests need them)
   */
  | { kind: 'ready'; monoMs: number; opened: number; failed: number; firstError?: string; lazy?: boolean }
  /** the answer to 'clock': this thread's monoMs when it read the question */
  | { kind: 'clock'; monoMs: number }
  /** every THREAD_ALIVE_EVERY_MS from the clock check on: the thread's event loop runs */
  | { kind: 'alive' }
  /** request `id` of worker w was handed to undici */
  | { kind: 'sent'; w: number; id: string }
  /** worker w's request has its first token */
  | { kind: 'first'; w: number }
  /** a request ended; `failingInARow` is worker w's count after it */
  | { kind: 'ended'; w: number; timeline: RequestTimeline; failingInARow: number }
  /** a rate cell's request `id` was handed to undici */
  | { kind: 'rate-sent'; id: string }
  /** a rate cell's request ended */
  | { kind: 'rate-ended'; s: ScheduledTimeline }
  /** every worker has ended; the thread's own meters over its span, and its connections */
  | {
      kind: 'done';
      loopDelayMs?: EventLoopDelayStats;
      arrivalLagMs?: ArrivalLagStats;
      cpu: CpuReading;
      /** the thread's pool's connections (pool.ts connectionCounts) */
      connections: ConnectionCounts;
      learnedClose?: { requestId: string; idleMs: number };
      /** a rate cell's thread: the most in flight at once on its lanes, sends that waited for one, due requests never sent */
      schedule?: { peak: number; waited: number; unsent: number };
    }
  /** the thread cannot go on (a setup failure, an exception) */
  | { kind: 'error'; message: string };
