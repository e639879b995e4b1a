/**
 * The arrival clock of response bytes, and how late this thread handles them (issue 24).
 *
 * Every socket read of a response body is stamped with `arrivalNow()`. The reads one turn of the
 * event loop handles were ready together when the loop woke up (one poll phase: the kernel had
 * them all), yet each is stamped when its turn comes, after every read before it: the k-th read
 * of a turn is late by about the time the k − 1 before it took. That in-turn lag is measured
 * here, exactly, for every read: the time since the first read of the same turn (a turn ends at
 * the check phase: setImmediate). At 1,024 streams whose tokens an engine writes in one step, one
 * thread handles a turn of 1,024 reads and the last is stamped ~15 ms late; the event-loop delay
 * (loop-monitor.ts), sampled on a timer, sees such a turn only when its tick falls inside it.
 *
 * Only a body's first read in a turn counts. libuv hands one socket's data to JS in several reads
 * of 64 KB when it has more (a 10 MB chunk is ~160 reads); the later ones wait on the same body's
 * own handling, not on other streams, and counting them would let one big body outweigh every
 * other read of the cell (a 2-stream cell with 10 MB chunks read p99 lags of 30 ms from its own
 * padding). Another body's read after them counts their time, as it should.
 *
 * The first read of a turn is late too when the thread, woken by it, waited for a core (a busy
 * machine: on 2 cores the server, Vitest and this thread take turns). On Linux that wait is read at
 * every turn's end and start (core-wait.ts) and added to the lag of every read of the turn: the
 * wait since the last turn ended, shared evenly over the times the thread was put on a core since
 * (the thread also wakes for timers, and a wait then delays no read). Without it, 64 streams on
 * one thread on a 2-core machine read true arrival error p99s of 3.87 and 6.06 ms as estimates of
 * 2.47 and 3.65 ms (docs/accuracy.md). A thread terminated with its meter open (a killed client
 * thread) leaves its schedstat descriptor open until the process exits.
 *
 * The lags are counted per thread (module state: each worker thread has its own) in 0.1 ms bins
 * while a meter is open; a cell opens one from its workers' start to its window's end.
 */
import { monoMs } from '../clock.js';
import { CoreWaitReader, type CoreWaitReading, type CoreWaitSource } from './core-wait.js';

/** bin width, ms */
const BIN_MS = 0.1;
/** bins up to 200 ms; later reads go to the last */
const BINS = 2001;

let turnStart = -1;
/** the turn's number: a reader that already read in this turn has this as its `turn` */
let turnSeq = 0;
let bins: Float64Array | undefined;
let maxLag = 0;
/** while a meter is open, on Linux: the thread's core wait, read at each turn's end and start */
let coreWait: CoreWaitSource | undefined;
let atTurnEnd: CoreWaitReading | undefined;
/** the wait for a core before this turn, ms (0 without a reading) */
let turnWait = 0;
const endTurn = (): void => {
  turnStart = -1;
  if (coreWait !== undefined) atTurnEnd = coreWait.read();
};

/** the wait for a core of the wake-up that began this turn: the wait since the last turn, per time on a core */
function waitBeforeTurn(): number {
  const now = coreWait?.read();
  if (now === undefined || atTurnEnd === undefined) return 0;
  return Math.max(0, now.waitedMs - atTurnEnd.waitedMs) / Math.max(1, now.slices - atTurnEnd.slices);
}

/** one response body's reads: its last turn (arrivalNow keeps it) */
export interface ArrivalReader {
  turn: number;
}

/** a reader that has not read yet */
export function arrivalReader(): ArrivalReader {
  return { turn: -1 };
}

/**
 * now (monoMs), the arrival time of a socket read; counts the read's lag while a meter is open,
 * when it is the reader's first read of this turn (every read without a reader)
 */
export function arrivalNow(reader?: ArrivalReader): number {
  const now = monoMs();
  if (turnStart < 0) {
    turnStart = now;
    turnSeq++;
    turnWait = bins !== undefined ? waitBeforeTurn() : 0;
    setImmediate(endTurn);
  }
  if (reader !== undefined) {
    if (reader.turn === turnSeq) return now;
    reader.turn = turnSeq;
  }
  if (bins !== undefined) {
    const lag = now - turnStart + turnWait;
    const i = Math.min(Math.floor(lag / BIN_MS), BINS - 1);
    bins[i] = bins[i]! + 1;
    if (lag > maxLag) maxLag = lag;
  }
  return now;
}

export interface ArrivalLagStats {
  /** reads counted */
  reads: number;
  p50: number;
  p99: number;
  max: number;
  /** the lags include the wait for a core before each turn (Linux, where the kernel counts it) */
  withCoreWait?: boolean;
}

export interface ArrivalLagMeter {
  /** the lags since the start; undefined without a read */
  stop(): ArrivalLagStats | undefined;
}

/**
 * Start counting this thread's read lags (one meter at a time per thread: a new one restarts the
 * count). `coreWait`: where the thread's core wait is read (tests); by default this thread's
 * schedstat, where there is one.
 */
export function startArrivalLagMeter(options: { coreWait?: CoreWaitSource } = {}): ArrivalLagMeter {
  const mine = new Float64Array(BINS);
  bins = mine;
  maxLag = 0;
  coreWait?.close();
  coreWait = options.coreWait ?? CoreWaitReader.open();
  atTurnEnd = undefined;
  const withCoreWait = coreWait !== undefined;
  return {
    stop() {
      if (bins === mine) {
        bins = undefined;
        coreWait?.close();
        coreWait = undefined;
        atTurnEnd = undefined;
      }
      let reads = 0;
      for (let i = 0; i < BINS; i++) reads += mine[i]!;
      if (reads === 0) return undefined;
      const at = (q: number): number => {
        const want = q * reads;
        let seen = 0;
        for (let i = 0; i < BINS; i++) {
          seen += mine[i]!;
          // the bin's upper edge: a conservative reading
          if (seen >= want) return Math.min((i + 1) * BIN_MS, maxLag);
        }
        return maxLag;
      };
      return { reads, p50: at(0.5), p99: at(0.99), max: maxLag, withCoreWait };
    },
  };
}
