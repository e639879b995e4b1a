/**
 * The optional per-request file (LLM_BENCH_REQUESTS_FILE): JSON Lines, one request a line
 * (src/shapes/request-record.ts), appended by each cell after its window, so a cell's requests are
 * on disk as soon as it is measured and a crash later loses none of them.
 *
 * One file holds one run: the first bench file of a Vitest invocation empties a file of another
 * invocation's request lines (they name their run), and the later cells and bench files of the same
 * invocation append. A file that holds anything else is refused, never emptied. A resumed run (LLM_BENCH_RESUME) appends instead: the kept cells' lines are those of the
 * run it continues. Lines go out in batches, so a cell of many requests never builds one large string.
 */
import { appendFileSync, closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../errors.js';
import type { RequestRecord } from '../shapes/request-record.js';
import { ensureDir } from './write.js';

/** lines written at once */
const BATCH = 2000;

/** What the file holds: nothing (missing or empty), request lines of a run, or something else. */
function fileHolds(path: string): { kind: 'nothing' } | { kind: 'requests'; run: string } | { kind: 'other' } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return { kind: 'nothing' };
  }
  try {
    // the first line, whole (a line with a long error text runs past a few KB)
    const parts: Buffer[] = [];
    const buf = Buffer.alloc(65_536);
    for (let at = 0; at < 16 * buf.length; ) {
      const n = readSync(fd, buf, 0, buf.length, at);
      if (n === 0) break;
      const chunk = buf.subarray(0, n);
      const end = chunk.indexOf(0x0a);
      parts.push(Buffer.from(end >= 0 ? chunk.subarray(0, end) : chunk));
      if (end >= 0) break;
      at += n;
    }
    const line = Buffer.concat(parts).toString('utf8').trim();
    if (line === '') return { kind: 'nothing' };
    const o = JSON.parse(line) as Record<string, unknown>;
    return typeof o.run === 'string' && typeof o.id === 'string' && typeof o.cell === 'string' ? { kind: 'requests', run: o.run } : { kind: 'other' };
  } catch (error) {
    // a folder: the write that follows says it cannot be written
    return (error as NodeJS.ErrnoException).code === 'EISDIR' ? { kind: 'nothing' } : { kind: 'other' };
  } finally {
    closeSync(fd);
  }
}

export class RequestsFile {
  private ready = false;

  /**
   * @param path where the lines go (LLM_BENCH_REQUESTS_FILE)
   * @param run this invocation's start (every line's `run`)
   * @param keep a resumed run: append to what is there
   */
  constructor(
    readonly path: string,
    readonly run: string,
    private readonly keep: boolean,
  ) {}

  /**
   * Before the first cell (define.ts): the folder made, another run's request lines emptied. A
   * path that cannot be written, or a file that holds something other than request lines (a prompt
   * file, a result named by mistake), is a ConfigError naming it, before anything is measured.
   */
  prepare(): void {
    if (this.ready) return;
    const holds = fileHolds(this.path);
    if (holds.kind === 'other') {
      throw new ConfigError(`LLM_BENCH_REQUESTS_FILE: ${this.path} holds something other than request lines, so it is not overwritten; give a new file, or one an earlier run's request lines are in, e.g. LLM_BENCH_REQUESTS_FILE=reports/requests.jsonl`);
    }
    try {
      ensureDir(dirname(this.path));
      if (!this.keep && holds.kind === 'requests' && holds.run !== this.run) writeFileSync(this.path, '');
      else appendFileSync(this.path, '');
    } catch (error) {
      throw new ConfigError(`LLM_BENCH_REQUESTS_FILE: cannot write ${this.path} (${(error as Error).message}); give a path in a folder you can write, e.g. LLM_BENCH_REQUESTS_FILE=reports/requests.jsonl`);
    }
    this.ready = true;
  }

  /** Appends one cell's lines; returns how many. Throws what the file system throws (the cell says it and goes on). */
  append(lines: Iterable<RequestRecord>): number {
    this.prepare();
    let batch: string[] = [];
    let count = 0;
    for (const line of lines) {
      batch.push(JSON.stringify(line));
      count++;
      if (batch.length >= BATCH) {
        appendFileSync(this.path, `${batch.join('\n')}\n`);
        batch = [];
      }
    }
    if (batch.length > 0) appendFileSync(this.path, `${batch.join('\n')}\n`);
    return count;
  }
}
