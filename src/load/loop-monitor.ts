/**
 * Event-loop delay of the load generator during a window (perf_hooks.monitorEventLoopDelay).
 * Node's histogram records the whole interval between its timer ticks (≈ resolution when idle);
 * the figures here are the delay beyond the resolution, in ms, so an idle loop reads ≈ 0.
 * Not pure (it samples the running process), but small.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export const DEFAULT_LOOP_MONITOR_RESOLUTION_MS = 10;

/** Event-loop delay in ms (the result file's clientEventLoopDelayMs: exactly these three fields). */
export interface EventLoopDelayStats {
  p50: number;
  p99: number;
  max: number;
}

export class EventLoopMonitor {
  private readonly resolutionMs: number;
  private histogram: IntervalHistogram | undefined;

  constructor(resolutionMs: number = DEFAULT_LOOP_MONITOR_RESOLUTION_MS) {
    if (!Number.isInteger(resolutionMs) || resolutionMs < 1) {
      throw new RangeError(`EventLoopMonitor resolutionMs must be an integer ≥ 1 (got ${resolutionMs}); omit it for ${DEFAULT_LOOP_MONITOR_RESOLUTION_MS}`);
    }
    this.resolutionMs = resolutionMs;
  }

  /** start (or restart, clearing earlier samples) */
  start(): void {
    this.histogram?.disable();
    this.histogram = monitorEventLoopDelay({ resolution: this.resolutionMs });
    this.histogram.enable();
  }

  /** timer ticks recorded since start (0 before start) */
  get samples(): number {
    return this.histogram?.count ?? 0;
  }

  /** the delays so far; undefined before start or without samples */
  read(): EventLoopDelayStats | undefined {
    const h = this.histogram;
    if (h === undefined || h.count === 0) return undefined;
    const excess = (ns: number): number => Math.max(0, ns / 1e6 - this.resolutionMs);
    return { p50: excess(h.percentile(50)), p99: excess(h.percentile(99)), max: excess(h.max) };
  }

  /** stop and return the delays; undefined when never started or no tick was recorded */
  stop(): EventLoopDelayStats | undefined {
    const h = this.histogram;
    if (h === undefined) return undefined;
    h.disable();
    const stats = this.read();
    this.histogram = undefined;
    return stats;
  }
}

/** Create a monitor and start it. */
export function startLoopMonitor(resolutionMs: number = DEFAULT_LOOP_MONITOR_RESOLUTION_MS): EventLoopMonitor {
  const m = new EventLoopMonitor(resolutionMs);
  m.start();
  return m;
}
