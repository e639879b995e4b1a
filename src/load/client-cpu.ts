/**
 * The load generator's own CPU over a span (METHOD.md "Client-limited": over 0.9 of a core, the
 * figures may be wrong). On Linux it reads the calling thread's CPU time from
 * /proc/thread-self/stat, so an embedded simulator in a worker thread of the same process is not
 * counted as the client; elsewhere it falls back to the whole process (process.cpuUsage).
 * Not pure: it samples the running process.
 */
import { readFileSync } from 'node:fs';
import { monoMs } from '../clock.js';

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

export interface CpuMeter {
  /** cores used since the start: CPU time / wall time */
  stop(): { cores: number; source: CpuSource };
}

export function startCpuMeter(): CpuMeter {
  const start = cpuTimeMs();
  const startWall = monoMs();
  return {
    stop() {
      const end = cpuTimeMs();
      const wall = monoMs() - startWall;
      return { cores: wall > 0 ? Math.max(0, end.ms - start.ms) / wall : 0, source: end.source };
    },
  };
}
