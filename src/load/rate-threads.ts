/**
 * A rate cell's schedule over N client threads (issue 24): each thread (stream-thread-main.ts,
 * rate mode) sends its share of the schedule at the due times on its own lanes with the follower
 * the cell's own thread uses without threads (schedule-follower.ts). The in-flight ceiling
 * (maxInFlight) is split into one share of lanes per thread, and the requests in proportion to the
 * lanes (requestThreads: with even shares request i goes to thread i mod N), so each thread
 * carries its lanes' part of the rate whatever the arrival process. A thread whose lanes are all
 * busy makes its due request wait (counted) even when another thread has one free.
 *
 * The cell's thread makes every request (the workload's `promptFor`) and hands it to its thread
 * LOOKAHEAD_MS before it is due, FEED_EVERY_MS at a time, so a thread never waits for a request and
 * no message is due at a send. It keeps the set in flight from the threads' news (for the metrics
 * samples), and each request's timeline and scheduled time when it ends. Clock, readiness, a dead
 * or stuck thread: as for a closed-loop cell's threads (stream-threads.ts ThreadSetBase).
 */
import { monoMs } from '../clock.js';
import type { WorkloadRequest } from '../shapes/workload.js';
import type { ArrivalSchedule } from './arrivals.js';
import type { DueRequest, ScheduledTimeline } from './schedule-follower.js';
import { requestOf, type CellRequestInput, type LoadSession } from './session.js';
import { ThreadSetBase, type ThreadSetOptions, type ThreadsOutcome } from './stream-threads.js';
import { threadShares } from './thread-count.js';
import type { RequestNews } from './thread-messages.js';
import { maxOf } from '../extent.js';

/** a request reaches its thread this long before it is due */
export const LOOKAHEAD_MS = 500;
/** the cell's thread hands out the next requests this often */
export const FEED_EVERY_MS = 50;

export interface RateThreadsOptions extends ThreadSetOptions {
  threads: number;
  /** the cell's in-flight ceiling, split over the threads */
  maxInFlight: number;
}

export interface RateThreadsOutcome extends ThreadsOutcome {
  /** every request sent, ended, in due order */
  requests: ScheduledTimeline[];
  /** due requests never sent: the ceiling held them to the window's end, or they were never handed out */
  unsent: number;
  /** the most in flight at once, as the cell's thread saw the news (the sum of the threads' own peaks is not a moment) */
  peak: number;
  /** sends that waited for a lane, over the threads */
  waited: number;
}

/**
 * The thread of each request, as a cycle over the lanes: request i goes to thread
 * `cycle[i mod cycle.length]`. The threads take turns, each as many times in a cycle as it has
 * lanes, so its share of the requests is its share of the ceiling: lanes of [2, 2, 1, 1] give
 * [0, 1, 2, 3, 0, 1] (a thread of one lane given as many requests as one of two would wait for
 * it while the cell is far under its ceiling); even shares give i mod N.
 */
export function requestThreads(shares: ReadonlyArray<{ workerCount: number }>): number[] {
  const cycle: number[] = [];
  const most = maxOf([0, ...shares.map((s) => s.workerCount)]);
  for (let round = 0; round < most; round++) for (const [k, s] of shares.entries()) if (s.workerCount > round) cycle.push(k);
  return cycle;
}

export class RateThreads extends ThreadSetBase {
  /** request ids in flight on every thread, as their news says */
  readonly inFlight = new Set<string>();
  private readonly ended: ScheduledTimeline[] = [];
  private peak = 0;
  private feeder: NodeJS.Timeout | undefined;
  /** the next schedule entry not handed out yet */
  private nextIndex = 0;
  private schedule: ArrivalSchedule | undefined;
  /** request i's thread: cycle[i mod its length] (requestThreads) */
  private readonly cycle: number[];

  constructor(
    session: LoadSession,
    private readonly o: RateThreadsOptions,
  ) {
    const shares = threadShares(o.maxInFlight, Math.min(o.threads, o.maxInFlight));
    super(session, o, shares, 'lanes');
    this.cycle = requestThreads(shares);
  }

  /** the threads sending (the ceiling caps them at one per lane) */
  get threadCount(): number {
    return this.running.length;
  }

  protected onNews(_k: number, m: RequestNews): void {
    if (m.kind === 'rate-sent') {
      this.inFlight.add(m.id);
      if (this.inFlight.size > this.peak) this.peak = this.inFlight.size;
    } else if (m.kind === 'rate-ended') {
      this.inFlight.delete(m.s.timeline.id);
      this.ended.push(m.s);
    }
  }

  /**
   * Start the schedule at `startMs` (monoMs): the first LOOKAHEAD_MS of requests are handed out
   * now, the rest FEED_EVERY_MS at a time, until `stop()`.
   */
  go(startMs: number, schedule: ArrivalSchedule, promptFor: (index: number) => CellRequestInput, maxOutputTokens: number): void {
    if (this.failure) return;
    this.schedule = schedule;
    const n = this.running.length;
    const feed = (): void => {
      const until = monoMs() + LOOKAHEAD_MS;
      const items: DueRequest[][] = Array.from({ length: n }, () => []);
      const { atMs } = schedule;
      while (this.nextIndex < atMs.length && startMs + atMs[this.nextIndex]! < until) {
        const index = this.nextIndex;
        let request: WorkloadRequest;
        try {
          request = requestOf(promptFor(index), maxOutputTokens);
        } catch (e) {
          this.fail(this.threadOf(index), `could not be given request ${index} of the schedule (${e instanceof Error ? e.message : String(e)})`);
          return;
        }
        items[this.threadOf(index)]!.push({ index, dueMs: startMs + atMs[index]!, request });
        this.nextIndex++;
      }
      for (let k = 0; k < n; k++) if (items[k]!.length > 0) this.post(k, { kind: 'due', items: items[k]! });
    };
    feed();
    for (let k = 0; k < n; k++) this.post(k, { kind: 'rate-go' });
    this.feeder = setInterval(() => {
      if (this.failure) clearInterval(this.feeder);
      else feed();
    }, FEED_EVERY_MS);
  }

  private threadOf(index: number): number {
    return this.cycle[index % this.cycle.length]!;
  }

  /** the window has closed at `windowEndMs`: no more requests are handed out, and every thread stops */
  override stop(windowEndMs?: number): void {
    clearInterval(this.feeder);
    super.stop(windowEndMs);
  }

  override async terminateAll(): Promise<void> {
    clearInterval(this.feeder);
    await super.terminateAll();
  }

  /** everything the threads reported, once every thread has ended; `windowEndMs`: what was due by then and never handed out is unsent */
  async result(windowEndMs: number, startMs: number): Promise<RateThreadsOutcome> {
    const t = await this.finished;
    let unsent = 0;
    let waited = 0;
    for (let k = 0; k < this.running.length; k++) {
      const s = this.doneOf(k)?.schedule;
      unsent += s?.unsent ?? 0;
      waited += s?.waited ?? 0;
    }
    const atMs = this.schedule?.atMs;
    if (atMs) for (let i = this.nextIndex; i < atMs.length && startMs + atMs[i]! < windowEndMs; i++) unsent++;
    const requests = [...this.ended].sort((a, b) => a.scheduledMs - b.scheduledMs);
    return { ...t, requests, unsent, peak: this.peak, waited };
  }
}

export function startRateThreads(session: LoadSession, o: RateThreadsOptions): RateThreads {
  return new RateThreads(session, o);
}
