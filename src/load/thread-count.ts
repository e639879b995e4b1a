/**
 * How many client threads a cell's streams run on (issue 24), and which of its workers each runs
 * (threadShares). Pure.
 *
 * `auto`: one thread per STREAMS_PER_THREAD streams (rounded up), at most the cores the server
 * leaves free: the machine's cores less one for the cell's own thread (gate, window, metrics),
 * less one for an embedded simulator's thread, and less half of the rest when the server is
 * another process on this machine (a loopback URL: its use of the cores is not known, so the
 * client takes no more than half). 1 means the cell's own thread, as before threads existed.
 * A number asks for that many (capped at one per stream); the cell's Client-limited verdict then
 * says whether they kept up.
 */

/**
 * Streams one client thread carries in `auto`: at 256 streams of 50 tok/s one thread's token
 * arrival error p99 stayed within half the Client-limited bound on a 2-core VM (docs/accuracy.md).
 */
export const STREAMS_PER_THREAD = 256;

export type ServerPlace = 'embedded' | 'local' | 'remote';

export interface ThreadCountInput {
  concurrency: number;
  asked: number | 'auto';
  /** os.availableParallelism() */
  cores: number;
  server: ServerPlace;
}

/** Cores the server leaves for client threads: the cores less the cell's own thread's, an embedded simulator's, and half the rest for a local server. May be 0 or less. */
function coresLeft(cores: number, server: ServerPlace): number {
  const left = cores - 1 - (server === 'embedded' ? 1 : 0);
  return server === 'local' ? Math.floor(left / 2) : left;
}

/** Cores `auto` may use for client threads, at least 1. */
export function freeClientCores(cores: number, server: ServerPlace): number {
  return Math.max(1, coresLeft(cores, server));
}

export function clientThreadCount(i: ThreadCountInput): number {
  if (i.asked !== 'auto') return Math.max(1, Math.min(i.asked, i.concurrency));
  const wanted = Math.ceil(i.concurrency / STREAMS_PER_THREAD);
  const n = Math.min(wanted, freeClientCores(i.cores, i.server));
  return n >= 2 ? n : 1;
}

/**
 * A run-start line when the asked client threads are more than the cores `auto` would use, so the
 * threads will share cores with each other, the cell's own thread or the server: said once, not
 * refused (the cells' Client-limited verdicts say whether they kept up). Undefined otherwise.
 */
export function threadsOverCoresNote(asked: number | 'auto', cores: number, server: ServerPlace): string | undefined {
  if (asked === 'auto' || asked < 2) return undefined;
  const free = freeClientCores(cores, server);
  if (asked <= free) return undefined;
  const left = coresLeft(cores, server);
  const held = ['one for the cell\'s own thread', ...(server === 'embedded' ? ['one for the embedded simulator'] : []), ...(server === 'local' ? ['half the rest for the server on this machine'] : [])];
  return (
    `${asked} client threads asked (LLM_BENCH_CLIENT_THREADS or the suite's clientThreads; capped at a cell's streams, a rate cell's at its in-flight ceiling), but this machine's ` +
    `${cores} core${cores === 1 ? '' : 's'} leave ${left >= 1 ? left : 'none'} for them (${held.join(', ')}): the threads will take turns on the cores, ` +
    `and each cell's Client-limited verdict says whether they kept up; ${free >= 2 ? `auto picks at most ${free}` : 'auto keeps a cell\'s streams on its own thread'}`
  );
}

/** Worker w's thread: C workers in N contiguous shares, the first C mod N one larger. */
export function threadShares(concurrency: number, threads: number): Array<{ firstWorker: number; workerCount: number }> {
  const base = Math.floor(concurrency / threads);
  const extra = concurrency % threads;
  const shares: Array<{ firstWorker: number; workerCount: number }> = [];
  let first = 0;
  for (let k = 0; k < threads; k++) {
    const count = base + (k < extra ? 1 : 0);
    shares.push({ firstWorker: first, workerCount: count });
    first += count;
  }
  return shares.filter((s) => s.workerCount > 0);
}
