/**
 * One run owns its results folder. Two runs writing into one folder at once would each overwrite
 * the other's page after every cell, and the last to finish would win without a word. So a run
 * takes `.speed-matrix.lock` in the folder before anything is measured (the file holds its pid,
 * host and start time) and removes it when its process exits.
 *
 * - A lock held by a live process on this host: the second run stops at once, naming that pid and
 *   its start time, and says how to run beside it (another LLM_BENCH_OUT).
 * - A stale lock (its process is gone: kill -9, a crash, a reboot) is taken over: it is renamed
 *   aside first, which only one of two racing runs can do, and the new lock is created exclusively.
 * - A lock from another host (a shared folder) is treated as live: we cannot tell.
 * Synchronous, like the writer: the reporter calls it from onInit.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';

export const LOCK_FILE = '.speed-matrix.lock';

export interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
}

export interface ResultsLock {
  path: string;
  /** remove the lock if it is still ours; safe to call more than once */
  release(): void;
  /** set when a stale lock was taken over: whose it was */
  tookOverFrom?: LockInfo;
}

function readLock(path: string): LockInfo | undefined {
  try {
    const o = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockInfo>;
    if (typeof o.pid === 'number' && typeof o.host === 'string' && typeof o.startedAt === 'string') return o as LockInfo;
  } catch {
    // unreadable or half written: handled as stale below only when its process cannot be named
  }
  return undefined;
}

/** Whether the process that wrote `info` still runs (this host only; another host: assume it does). */
export function lockHolderAlive(info: LockInfo): boolean {
  if (info.host !== hostname()) return true;
  try {
    process.kill(info.pid, 0);
  } catch (error) {
    // EPERM: it exists, owned by someone else
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // the pid exists; on Linux make sure it is a Node process, not an unrelated one that reused the pid
  try {
    const cmdline = readFileSync(`/proc/${info.pid}/cmdline`, 'utf8');
    return /node|vitest/i.test(cmdline);
  } catch {
    return true;
  }
}

function create(path: string, info: LockInfo): boolean {
  try {
    writeFileSync(path, `${JSON.stringify(info)}\n`, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Take the lock of results folder `dir` (which exists), or throw a ConfigError naming the run that holds it. */
export function lockResultsDir(dir: string, now: Date = new Date()): ResultsLock {
  const path = join(dir, LOCK_FILE);
  const mine: LockInfo = { pid: process.pid, host: hostname(), startedAt: now.toISOString() };
  let tookOverFrom: LockInfo | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (create(path, mine)) {
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        const held = readLock(path);
        if (held && held.pid === mine.pid && held.host === mine.host && held.startedAt === mine.startedAt) rmSync(path, { force: true });
      };
      return { path, release, ...(tookOverFrom ? { tookOverFrom } : {}) };
    }
    const held = readLock(path);
    // this process already holds it (a second reporter instance of the same run)
    if (held && held.pid === process.pid && held.host === mine.host) return { path, release: () => {} };
    if (held && lockHolderAlive(held)) {
      throw new ConfigError(
        `another run is writing into ${dir}: pid ${held.pid} on ${held.host}, started ${held.startedAt} (${LOCK_FILE}). ` +
          'Wait for it to finish, or give this run a folder of its own, e.g. LLM_BENCH_OUT=reports/second-run; ' +
          `if that process is gone, remove ${path}`,
      );
    }
    // stale (or unreadable): move it aside; of two runs doing this at once, one rename succeeds
    const aside = `${path}.stale.${process.pid}.${attempt}`;
    try {
      renameSync(path, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // the other run moved it: try again
      throw error;
    }
    const moved = readLock(aside);
    if (moved && held && (moved.pid !== held.pid || moved.startedAt !== held.startedAt) && lockHolderAlive(moved)) {
      // we moved a live lock that another run had just created: put it back and stop
      try {
        renameSync(aside, path);
      } catch {
        // it is gone meanwhile; nothing to restore
      }
      continue;
    }
    rmSync(aside, { force: true });
    tookOverFrom = held;
  }
  const held = readLock(path);
  throw new ConfigError(
    `could not take ${path}${held ? ` (held by pid ${held.pid}, started ${held.startedAt})` : ''}; give this run a folder of its own, e.g. LLM_BENCH_OUT=reports/second-run`,
  );
}
