/**
 * The load generator's self-check over a span (issue 24): its thread's event-loop delay
 * (loop-monitor.ts), the read lag of its response reads (client/arrival-clock.ts) and its CPU
 * (client-cpu.ts), started and stopped together. One per stream keeper: the cell's own thread
 * (cell-streams.ts), each client thread (stream-thread-main.ts), a rate cell (rate-cell.ts).
 */
import { startArrivalLagMeter, type ArrivalLagStats } from '../client/arrival-clock.js';
import { startCpuMeter, type CpuReading } from './client-cpu.js';
import { startLoopMonitor, type EventLoopDelayStats } from './loop-monitor.js';

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
