/**
 * The command line of the process that listens on a local TCP port, read from Linux's /proc, for
 * servers whose command line says what their endpoints do not: llama.cpp's `/props` gives each
 * slot's context but not whether the slots share one KV cache (`-kvu`, its default when `-np` is
 * not given), and that decides its KV capacity (src/engines/llamacpp.ts).
 *
 * Undefined wherever it cannot be told, never an error: not Linux, a process of another user, a
 * port forwarded from a container (the listener is then the forwarder, whose name is not the
 * program asked for), no listener, several processes that disagree, or more than `timeoutMs`.
 * Only the environment variables asked for are read, never the rest (it may hold keys).
 */
import { readdir, readFile, readlink } from 'node:fs/promises';
import { basename } from 'node:path';

export interface ListeningProcess {
  pid: number;
  /** argv as the process was started (`/proc/<pid>/cmdline`) */
  argv: string[];
  /** the variables asked for that it has; undefined where its environment could not be read */
  env: Record<string, string> | undefined;
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

/** `name=value` pairs of a `/proc/<pid>/environ`, only the names asked for. */
export function pickEnviron(environ: string, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of environ.split('\0')) {
    const eq = entry.indexOf('=');
    const name = eq < 0 ? entry : entry.slice(0, eq);
    if (eq > 0 && names.includes(name)) out[name] = entry.slice(eq + 1);
  }
  return out;
}

/** `expired.value` set: the caller has answered (its time limit), and the scan stops at its next process */
async function find(port: number, program: RegExp, envNames: readonly string[], expired: { value: boolean }): Promise<ListeningProcess | undefined> {
  const tables = await Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((p) => readFile(p, 'utf8').catch(() => '')));
  const inodes = new Set(tables.flatMap((t) => listeningInodes(t, port)).map((i) => `socket:[${i}]`));
  if (inodes.size === 0) return undefined;
  const found: ListeningProcess[] = [];
  for (const pid of (await readdir('/proc').catch(() => [] as string[])).filter((d) => /^\d+$/.test(d))) {
    if (expired.value) return undefined;
    // the program's name first: only its file descriptors are read
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (argv.at(-1) === '') argv.pop();
    if (argv.length === 0 || !program.test(basename(argv[0]!))) continue;
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    const links = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
    if (!links.some((l) => inodes.has(l))) continue;
    const environ = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => undefined);
    found.push({ pid: Number(pid), argv, env: environ === undefined ? undefined : pickEnviron(environ, envNames) });
  }
  // several processes holding the port (a fork, an old server on another family) must agree
  const first = found[0];
  if (!first || found.some((f) => f.argv.join('\0') !== first.argv.join('\0') || JSON.stringify(f.env) !== JSON.stringify(first.env))) return undefined;
  return first;
}

/**
 * The process named like `program` (its argv[0]'s base name) that listens on local TCP `port`,
 * with the environment variables `env` names; undefined where that cannot be told (the header).
 */
export async function listeningProcess(port: number, o: { program: RegExp; env?: readonly string[]; timeoutMs?: number }): Promise<ListeningProcess | undefined> {
  if (process.platform !== 'linux') return undefined;
  let timer: NodeJS.Timeout | undefined;
  const expired = { value: false };
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), o.timeoutMs ?? 2_000)));
  try {
    return await Promise.race([find(port, o.program, o.env ?? [], expired).catch(() => undefined), timeout]);
  } finally {
    // an answer given: a scan still going stops at its next process instead of running on unread
    expired.value = true;
    clearTimeout(timer);
  }
}
