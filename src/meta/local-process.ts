/**
 * The command line of the process that listens on a local TCP port, read from Linux's /proc, for
 * servers whose command line says what their endpoints do not: llama.cpp's `/props` gives each
 * slot's context but not whether the slots share one KV cache (`-kvu`, its default when `-np` is
 * not given), and that decides its KV capacity (src/engines/llamacpp.ts).
 *
 * Undefined wherever it cannot be read, never an error: not Linux, a process of another user, a
 * port forwarded from a container (the listener is then the forwarder, which the caller's check
 * of the program's name turns away), no listener found. Bounded: one pass over /proc's processes.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';

export interface ListeningProcess {
  pid: number;
  /** argv as the process was started (`/proc/<pid>/cmdline`) */
  argv: string[];
}

/** Inodes of the sockets listening on `port`, from `/proc/net/tcp` and `tcp6`. */
export function listeningInodes(table: string, port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    const local = cols[1];
    if (local === undefined || cols[3] !== '0A' || cols[9] === undefined) continue;
    if (local.slice(local.indexOf(':') + 1).toUpperCase() === hexPort && cols[9] !== '0') out.push(cols[9]);
  }
  return out;
}

/** The process listening on local TCP `port`, or undefined (see the file's header). */
export async function listeningProcess(port: number): Promise<ListeningProcess | undefined> {
  if (process.platform !== 'linux') return undefined;
  const tables = await Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((p) => readFile(p, 'utf8').catch(() => '')));
  const inodes = new Set(tables.flatMap((t) => listeningInodes(t, port)).map((i) => `socket:[${i}]`));
  if (inodes.size === 0) return undefined;
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((d) => /^\d+$/.test(d));
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      if (!inodes.has(link)) continue;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      const argv = cmdline.split('\0');
      if (argv.at(-1) === '') argv.pop();
      return argv.length > 0 ? { pid: Number(pid), argv } : undefined;
    }
  }
  return undefined;
}
