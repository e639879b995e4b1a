/**
 * How long this thread has waited, ready to run, for a core (Linux: /proc/thread-self/schedstat,
 * `on_cpu_ns run_queue_wait_ns timeslices`). A thread held off its core stamps whatever arrives
 * meanwhile late, however idle it is itself (issue 24). Elsewhere, and where the kernel keeps no
 * such count (the file reads `0 0 0`: a running thread has run for more than 0 ns wherever it is
 * counted), there is no reading. Not pure: it reads the running thread.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

export interface CoreWaitReading {
  /** ms waited for a core since the thread started */
  waitedMs: number;
  /** times the thread was put on a core since it started */
  slices: number;
}

/** readings of one thread, one after another */
export interface CoreWaitSource {
  read(): CoreWaitReading | undefined;
  close(): void;
}

const SCHEDSTAT = '/proc/thread-self/schedstat';

/**
 * The reading in the file's bytes [0, length) (three decimal numbers, space-separated), parsed in
 * place: a turn of the event loop reads it twice. Undefined where the kernel counts nothing or the
 * bytes are not that.
 */
export function parseSchedstat(b: Uint8Array, length: number = b.length): CoreWaitReading | undefined {
  const fields = [0, 0, 0];
  let f = 0;
  let digits = 0;
  for (let i = 0; i < length && f < 3; i++) {
    const c = b[i]!;
    if (c >= 0x30 && c <= 0x39) {
      fields[f] = fields[f]! * 10 + (c - 0x30);
      digits++;
    } else if (c === 0x20 || c === 0x0a) {
      if (digits === 0) return undefined;
      f++;
      digits = 0;
    } else {
      return undefined;
    }
  }
  if (digits > 0) f++;
  const [ran, waited, slices] = fields as [number, number, number];
  if (f < 2 || !(ran > 0)) return undefined;
  return { waitedMs: waited / 1e6, slices };
}

/** this thread's reading once (opens the file); undefined where there is none */
export function readCoreWait(): CoreWaitReading | undefined {
  try {
    return parseSchedstat(readFileSync(SCHEDSTAT));
  } catch {
    return undefined; // not Linux
  }
}

/**
 * Many readings of the thread that opened it, cheaply (one pread of a kept file, about 2 µs):
 * for a reading per turn of the event loop. `open` gives undefined where there is no reading.
 * Close it on the same thread when done: the file descriptor belongs to the process.
 */
export class CoreWaitReader implements CoreWaitSource {
  private readonly buf = Buffer.alloc(128);
  private constructor(private fd: number) {}

  static open(): CoreWaitReader | undefined {
    let fd: number;
    try {
      fd = openSync(SCHEDSTAT, 'r');
    } catch {
      return undefined; // not Linux
    }
    const reader = new CoreWaitReader(fd);
    if (reader.read() !== undefined) return reader;
    reader.close(); // the kernel counts nothing here
    return undefined;
  }

  read(): CoreWaitReading | undefined {
    if (this.fd < 0) return undefined;
    try {
      const n = readSync(this.fd, this.buf, 0, this.buf.length, 0);
      return parseSchedstat(this.buf, n);
    } catch {
      return undefined;
    }
  }

  close(): void {
    if (this.fd < 0) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    this.fd = -1;
  }
}
