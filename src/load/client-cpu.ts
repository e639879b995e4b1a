/**
 * The load generator's own CPU over a span (METHOD.md "Client-limited": over 0.9 of a core, the
 * figures may be wrong). On Linux it reads the calling thread's CPU time from
 * /proc/thread-self/stat, so an embedded simulator in a worker thread of the same process is not
 * counted as the client; elsewhere it falls back to the whole process (process.cpuUsage).
 * On Linux it also reads how long the thread was ready to run but waited for a core
 * (/proc/thread-self/schedstat, the run-queue wait): a thread held off its core by other work on
 * the machine stamps what arrives meanwhile late, however idle it is itself.
 * Not pure: it samples the running process.
 */
import { readFileSync } from 'node:fs';
import { monoMs } from '../clock.js';
import { readCoreWait } from '../client/core-wait.js';

/** Linux clock ticks per second (USER_HZ): 100 on every architecture Node runs on */
const CLOCK_TICKS_PER_S = 100;

export type CpuSource = 'thread' | 'process';

/** CPU time (user + system) of this thread in ms, or of the process where the thread's cannot be read. */
export function cpuTimeMs(): { ms: number; source: CpuSource } {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // fields after the command name, which is in parentheses and may hold spaces
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    if (Number.isFinite(ticks)) return { ms: (ticks * 1000) / CLOCK_TICKS_PER_S, source: 'thread' };
  } catch {
    // not Linux
  }
  const u = process.cpuUsage();
  return { ms: (u.user + u.system) / 1000, source: 'process' };
}

/** ms this thread has waited, ready to run, for a core since it started (Linux); undefined elsewhere (client/core-wait.ts) */
export function coreWaitMs(): number | undefined {
  return readCoreWait()?.waitedMs;
}

export interface CpuReading {
  /** CPU time / wall time since the start */
  cores: number;
  source: CpuSource;
  /** the share of the wall time the thread waited, ready to run, for a core (Linux) */
  coreWaitShare?: number;
}

export interface CpuMeter {
  stop(): CpuReading;
}

export function startCpuMeter(): CpuMeter {
  const start = cpuTimeMs();
  const startWait = coreWaitMs();
  const startWall = monoMs();
  return {
    stop() {
      const end = cpuTimeMs();
      const endWait = coreWaitMs();
      const wall = monoMs() - startWall;
      const waited = startWait !== undefined && endWait !== undefined && wall > 0 ? { coreWaitShare: Math.max(0, endWait - startWait) / wall } : {};
      return { cores: wall > 0 ? Math.max(0, end.ms - start.ms) / wall : 0, source: end.source, ...waited };
    },
  };
}
