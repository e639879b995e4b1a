/**
 * Writes speed-matrix.json (validated against the schema) and the pages the caller rendered
 * (speed-matrix.md and speed-matrix.html, src/pages) into a folder, each atomically (temp file in
 * the same folder, then rename), creating the folder first. Synchronous on purpose: the reporter
 * calls it after every cell and two writes must never interleave.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';
import type { SpeedMatrixResult } from '../shapes/result.js';
import { assertValidResult } from './validate.js';

export const RESULT_JSON = 'speed-matrix.json';
export const RESULT_MD = 'speed-matrix.md';
export const RESULT_HTML = 'speed-matrix.html';

/** A result's pages, rendered by the caller (src/pages/result-pages.ts), written beside its JSON. */
export interface ResultPages {
  markdown: string;
  html: string;
}

/**
 * Create `dir` and its missing parents, one level at a time. Not `mkdirSync(dir, {recursive: true})`:
 * on Node 20 that never returns for a path under /proc (it spins on ENOENT). Here a level that cannot
 * be made is an error at once, so the depth of the path bounds the work.
 */
export function ensureDir(dir: string): void {
  const absolute = resolve(dir);
  try {
    mkdirSync(absolute);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if (!statSync(absolute).isDirectory()) throw new Error(`${absolute} exists and is not a folder`);
      return;
    }
    if (code !== 'ENOENT') throw error;
  }
  const parent = dirname(absolute);
  if (parent === absolute) throw new Error(`cannot create ${absolute}`);
  ensureDir(parent);
  // the parent exists now; a second ENOENT (a pseudo-filesystem such as /proc) is final, and a
  // folder made meanwhile by another process (a shard) is fine
  try {
    mkdirSync(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(absolute).isDirectory()) throw error;
  }
}

/**
 * Check before anything is measured that the results can be written to `dir`: create it, write a
 * file and remove it. A ConfigError naming LLM_BENCH_OUT otherwise, so a run never measures for
 * hours and then loses everything.
 */
export function checkResultsDir(dir: string): void {
  const probe = join(dir, `.speed-matrix-write-check.${process.pid}`);
  try {
    ensureDir(dir);
    writeFileSync(probe, 'ok');
    rmSync(probe, { force: true });
  } catch (error) {
    throw new ConfigError(
      `results cannot be written to ${dir} (${(error as Error).message}); set LLM_BENCH_OUT to a folder you can write, e.g. LLM_BENCH_OUT=reports`,
    );
  }
}

let tempCounter = 0;

/** A file that could not be written: its path and the cause; the file before the write is left as it was. */
export class WriteError extends Error {
  constructor(
    readonly path: string,
    readonly code: string | undefined,
    cause: string,
  ) {
    super(`could not write ${path} (${cause}); the previous results are left as they were`);
    this.name = 'WriteError';
  }
}

/** The WriteError for `path` from a failed write or rename (a full disk and a quota said in words). */
function writeErrorOf(path: string, error: unknown): WriteError {
  const e = error as NodeJS.ErrnoException;
  const cause = e.code === 'ENOSPC' ? 'ENOSPC: the disk is full' : e.code === 'EDQUOT' ? 'EDQUOT: over the disk quota' : e.message;
  return new WriteError(path, e.code, cause);
}

/**
 * Write several files together: every text goes to its temp file first, and only when all of them
 * are written are they renamed into place (a rename needs no space). So a full disk leaves the
 * previous set whole, never a new JSON beside an old page. A failure is a WriteError for the file
 * that could not be written.
 */
export function writeFilesTogether(files: readonly { path: string; text: string }[]): void {
  const temps: string[] = [];
  try {
    for (const f of files) {
      const temp = `${f.path}.${process.pid}.${++tempCounter}.tmp`;
      temps.push(temp);
      try {
        writeFileSync(temp, f.text);
      } catch (error) {
        throw writeErrorOf(f.path, error);
      }
    }
    files.forEach((f, i) => {
      try {
        renameSync(temps[i]!, f.path);
      } catch (error) {
        throw writeErrorOf(f.path, error);
      }
    });
  } catch (error) {
    for (const t of temps) rmSync(t, { force: true });
    throw error;
  }
}

/** Write `text` to `path` so a reader sees either the old file or the whole new one; a failure is a WriteError naming the file. */
export function writeFileAtomic(path: string, text: string): void {
  writeFilesTogether([{ path, text }]);
}

/** Validate, then write the JSON, the Markdown page and the HTML report together; returns their paths. Throws (writing nothing) when invalid or when one cannot be written. */
export function writeResults(outDir: string, result: SpeedMatrixResult, pages: ResultPages): { jsonPath: string; mdPath: string; htmlPath: string } {
  const json = `${JSON.stringify(result, null, 2)}\n`;
  assertValidResult(JSON.parse(json)); // what the file will hold (undefined fields dropped)
  ensureDir(outDir);
  const jsonPath = join(outDir, RESULT_JSON);
  const mdPath = join(outDir, RESULT_MD);
  const htmlPath = join(outDir, RESULT_HTML);
  writeFilesTogether([
    { path: jsonPath, text: json },
    { path: mdPath, text: pages.markdown },
    { path: htmlPath, text: pages.html },
  ]);
  return { jsonPath, mdPath, htmlPath };
}

/** Where setAsideEarlierPage moves an earlier run's files: speed-matrix.previous.json, .md, .html. */
export const PREVIOUS_PREFIX = 'speed-matrix.previous';

/**
 * A run that measured nothing leaves no page of its own; an earlier run's page in the same folder
 * would pass for this one's (issue 60). Its three files are moved aside to
 * speed-matrix.previous.* (replacing an older set), nothing deleted. Returns when that run started
 * (its JSON's `info.startedAt`, where readable) and the files moved; undefined when there was none.
 */
export function setAsideEarlierPage(dir: string): { startedAt?: string; moved: string[] } | undefined {
  const json = join(dir, RESULT_JSON);
  if (!existsSync(json)) return undefined;
  let startedAt: string | undefined;
  try {
    const info = (JSON.parse(readFileSync(json, 'utf8').replace(/^\uFEFF/, '')) as { info?: { startedAt?: unknown } }).info;
    if (typeof info?.startedAt === 'string') startedAt = info.startedAt;
  } catch {
    startedAt = undefined;
  }
  const moved: string[] = [];
  for (const [name, ext] of [[RESULT_JSON, 'json'], [RESULT_MD, 'md'], [RESULT_HTML, 'html']] as const) {
    const from = join(dir, name);
    if (!existsSync(from)) continue;
    const to = join(dir, `${PREVIOUS_PREFIX}.${ext}`);
    renameSync(from, to);
    moved.push(to);
  }
  return { ...(startedAt !== undefined ? { startedAt } : {}), moved };
}
