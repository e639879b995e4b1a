/**
 * The optional per-request file (LLM_BENCH_REQUESTS_FILE): JSON Lines, one request a line
 * (src/shapes/request-record.ts), appended by each cell after its window, so a cell's requests are
 * on disk as soon as it is measured and a crash later loses none of them.
 *
 * One file holds one run: the first cell of a Vitest invocation empties a file another invocation
 * wrote (its lines name their run), and the later cells and bench files of the same invocation
 * append. A resumed run (LLM_BENCH_RESUME) appends instead: the kept cells' lines are those of the
 * run it continues. Lines go out in batches, so a cell of many requests never builds one large string.
 */
import { appendFileSync, closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../errors.js';
import type { RequestRecord } from '../shapes/request-record.js';
import { ensureDir } from './write.js';

/** lines written at once */
const BATCH = 2000;

/** The `run` of the file's first line, or undefined for an empty, missing or foreign file. */
function firstLineRun(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const line = buf.subarray(0, n).toString('utf8').split('\n', 1)[0]!;
    const run = (JSON.parse(line) as { run?: unknown }).run;
    return typeof run === 'string' ? run : undefined;
  } catch {
    return undefined;
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
   * Before the first cell (define.ts): the folder made, another run's file emptied. An unwritable
   * path is a ConfigError naming it, before anything is measured.
   */
  prepare(): void {
    if (this.ready) return;
    try {
      ensureDir(dirname(this.path));
      if (!this.keep && firstLineRun(this.path) !== this.run) writeFileSync(this.path, '');
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
