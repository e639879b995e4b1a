/**
 * Sending an open-loop schedule's requests at their due times (issue 22), wherever they are sent:
 * on the rate cell's own thread (rate-cell.ts) or on a client thread that got its share of the
 * schedule (stream-thread-main.ts, issue 24). Sends never wait on the server: each request in
 * flight has its own connection (a lane: one undici Client, pipelining 1), and only the lanes
 * bound the number in flight. A due request that finds every lane busy waits for one; that wait is
 * counted (`waited`) and shows in its dispatch delay, never hidden.
 */
import { monoMs } from '../clock.js';
import type { RequestTimeline } from '../shapes/timeline.js';
import type { WorkloadRequest } from '../shapes/workload.js';
import { requestBody, sendRequest, waitUntil, type LoadSession, type SendOptions } from './session.js';

/** A request of the schedule: its number in the cell's schedule, when it is due (monoMs) and what it sends. */
/** the request id of due request `d` of the rate cell whose ids start with `tag` */
export function dueRequestId(tag: string, d: Pick<DueRequest, 'index'>): string {
  return `${tag}-q${d.index}`;
}

/** Sends due request `d` of the cell tagged `tag` on one lane's client: the one send of a rate cell, on whichever thread. */
export function sendDue(session: LoadSession, tag: string, d: DueRequest, dispatcher: SendOptions['dispatcher'], signal: AbortSignal): Promise<RequestTimeline> {
  return sendRequest(session, { id: dueRequestId(tag, d), ...requestBody(d.request), dispatcher, signal });
}

export interface DueRequest {
  index: number;
  dueMs: number;
  request: WorkloadRequest;
}

/** A request of a rate cell: its timeline and when the schedule said to send it. */
export interface ScheduledTimeline {
  timeline: RequestTimeline;
  /** monoMs() time the schedule gave it */
  scheduledMs: number;
  /** it waited for the in-flight ceiling before it could be sent */
  waitedForCeiling: boolean;
}

export interface FollowInput {
  /** the next request in due order, or undefined at the schedule's end (a promise while it is not here yet) */
  next(): DueRequest | undefined | Promise<DueRequest | undefined>;
  /** requests the source still holds after the current one (counted unsent when the window closes on a wait for a lane) */
  remaining(): number;
  /** connections, so the most requests in flight at once */
  lanes: number;
  /** stream request `index` on lane `lane`; never rejects (failures are data) */
  send(d: DueRequest, lane: number, signal: AbortSignal): Promise<RequestTimeline>;
  /** aborted at the window's end: nothing more is sent, and what is in flight ends */
  signal: AbortSignal;
  onSent?(d: DueRequest): void;
  onEnded?(s: ScheduledTimeline): void;
  /**
   * the signal aborted while `d` (if any) waited for its due time or the source for its next: the
   * requests held then that count as unsent (a client thread counts those due before the window's
   * end); absent: none (on the cell's own thread the window's end and the sends share one loop)
   */
  unsentAtAbort?(d: DueRequest | undefined): number;
}

export interface FollowOutcome {
  /** every request sent, ended, in due order */
  requests: ScheduledTimeline[];
  /** due requests never sent: the lanes were busy until the window closed */
  unsent: number;
  /** the most requests in flight at once */
  peak: number;
  /** sends that waited for a lane */
  waited: number;
}

/** Free lanes, one request each at a time. */
class Lanes {
  private readonly free: number[] = [];
  private readonly waiters: Array<(lane: number) => void> = [];
  constructor(total: number) {
    for (let i = total - 1; i >= 0; i--) this.free.push(i);
  }
  /** a free lane now, or undefined when every lane is busy */
  tryTake(): number | undefined {
    return this.free.pop();
  }
  /** the next lane that comes free (-1: the window closed) */
  wait(): Promise<number> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  give(lane: number): void {
    const next = this.waiters.shift();
    if (next) next(lane);
    else this.free.push(lane);
  }
  /** wake every waiter with no lane (the window closed) */
  release(): void {
    for (const w of this.waiters.splice(0)) w(-1);
  }
}

/** Sends each request at its due time until the source ends or the signal aborts; resolves when every sent one has ended. */
export async function followSchedule(input: FollowInput): Promise<FollowOutcome> {
  const { signal } = input;
  const lanes = new Lanes(input.lanes);
  const requests: ScheduledTimeline[] = [];
  const pending: Array<Promise<void>> = [];
  let inFlight = 0;
  let peak = 0;
  let waited = 0;
  let unsent = 0;
  signal.addEventListener('abort', () => lanes.release(), { once: true });
  const send = (d: DueRequest, lane: number, waitedForCeiling: boolean): Promise<void> => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    input.onSent?.(d);
    return input.send(d, lane, signal).then((timeline) => {
      inFlight--;
      lanes.give(lane);
      const s = { timeline, scheduledMs: d.dueMs, waitedForCeiling };
      requests.push(s);
      input.onEnded?.(s);
    });
  };
  while (!signal.aborted) {
    const d = await input.next();
    if (d === undefined || signal.aborted) {
      if (signal.aborted) unsent = input.unsentAtAbort?.(d) ?? 0;
      break;
    }
    await waitUntil(d.dueMs, signal);
    if (signal.aborted) {
      unsent = input.unsentAtAbort?.(d) ?? 0;
      break;
    }
    let lane = lanes.tryTake();
    const mustWait = lane === undefined;
    if (mustWait) {
      waited++;
      lane = await lanes.wait();
      if (lane < 0 || signal.aborted) {
        unsent = 1 + input.remaining();
        break;
      }
    }
    pending.push(send(d, lane!, mustWait));
  }
  await Promise.all(pending);
  requests.sort((a, b) => a.scheduledMs - b.scheduledMs);
  return { requests, unsent, peak, waited };
}
