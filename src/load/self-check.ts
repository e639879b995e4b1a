/**
 * The load generator's self-check over a span (issue 24): its thread's event-loop delay
 * (loop-monitor.ts), the read lag of its response reads (client/arrival-clock.ts) and its CPU
 * (client-cpu.ts), started and stopped together. One per stream keeper: the cell's own thread
 * (cell-streams.ts), each client thread (stream-thread-main.ts), a rate cell (rate-cell.ts).
 * With client threads, worstOfThreads reads the cell's figures from every thread's.
 */
import { startArrivalLagMeter, type ArrivalLagStats } from '../client/arrival-clock.js';
import { startCpuMeter, type CpuReading } from './client-cpu.js';
import { startLoopMonitor, type EventLoopDelayStats } from './loop-monitor.js';
import { maxOf } from '../extent.js';

export interface SelfCheck {
  loopDelayMs?: EventLoopDelayStats;
  arrivalLagMs?: ArrivalLagStats;
  cpu: CpuReading;
}

export interface SelfCheckMeter {
  /** the figures since the start; the first call stops the meters, later calls return the same */
  stop(): SelfCheck;
}

export function startSelfCheck(): SelfCheckMeter {
  const loop = startLoopMonitor();
  const cpu = startCpuMeter();
  const lag = startArrivalLagMeter();
  let measured: SelfCheck | undefined;
  return {
    stop() {
      if (!measured) {
        const loopDelayMs = loop.stop();
        const arrivalLagMs = lag.stop();
        measured = { ...(loopDelayMs ? { loopDelayMs } : {}), ...(arrivalLagMs ? { arrivalLagMs } : {}), cpu: cpu.stop() };
      }
      return measured;
    },
  };
}

/** What each thread measured of itself from the workers' start to the window's end. */
export interface ThreadSelfCheck {
  thread: number;
  loopDelayMs?: EventLoopDelayStats;
  /** how late the thread handled response reads that were ready together (client/arrival-clock.ts) */
  arrivalLagMs?: ArrivalLagStats;
  cpuCores: number;
  /** the share of the span it waited, ready to run, for a core (client-cpu.ts; Linux) */
  coreWaitShare?: number;
}

/**
 * What the cell's Client-limited verdict reads of its threads: the worst thread's event-loop delay
 * and read lag (each thread's own p99: they are not pooled), and the busiest thread's CPU.
 */
export function worstOfThreads(perThread: readonly ThreadSelfCheck[]): { loopDelayMs?: EventLoopDelayStats; arrivalLagMs?: ArrivalLagStats; clientCpu: { cores: number; source: 'thread'; coreWaitShare?: number } } {
  const worstLoop = perThread.reduce<ThreadSelfCheck | undefined>((w, x) => ((x.loopDelayMs?.p99 ?? -1) > (w?.loopDelayMs?.p99 ?? -1) ? x : w), undefined);
  const worstLag = perThread.reduce<ArrivalLagStats | undefined>((w, x) => ((x.arrivalLagMs?.p99 ?? -1) > (w?.p99 ?? -1) ? x.arrivalLagMs : w), undefined);
  const waits = perThread.flatMap((x) => (x.coreWaitShare !== undefined ? [x.coreWaitShare] : []));
  return {
    ...(worstLoop?.loopDelayMs ? { loopDelayMs: worstLoop.loopDelayMs } : {}),
    ...(worstLag ? { arrivalLagMs: worstLag } : {}),
    clientCpu: { cores: maxOf([0, ...perThread.map((x) => x.cpuCores)]), source: 'thread', ...(waits.length > 0 ? { coreWaitShare: maxOf(waits) } : {}) },
  };
}
