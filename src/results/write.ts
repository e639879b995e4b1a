/**
 * Writes speed-matrix.json (validated against the schema), speed-matrix.md and speed-matrix.html into a folder,
 * each atomically (temp file in the same folder, then rename), creating the folder first.
 * Synchronous on purpose: the reporter calls it after every cell and two writes must never interleave.
 */
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../config/errors.js';
import { renderMarkdown } from './render-md.js';
import { renderHtml, RESULT_HTML } from '../report/html.js';
import type { SpeedMatrixResult } from './types.js';
import { assertValidResult } from './validate.js';

export const RESULT_JSON = 'speed-matrix.json';
export const RESULT_MD = 'speed-matrix.md';

/** where results go when LLM_BENCH_OUT is not set (relative to the Vitest root) */
export const DEFAULT_RESULTS_DIR = 'reports';

/** The results folder: the reporter's option, else LLM_BENCH_OUT, else reports/, resolved against `root`. */
export function resultsDir(root: string, option: string | undefined, env: NodeJS.ProcessEnv): string {
  return resolve(root, option ?? (env.LLM_BENCH_OUT?.trim() || DEFAULT_RESULTS_DIR));
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

/** Write `text` to `path` so a reader sees either the old file or the whole new one. */
export function writeFileAtomic(path: string, text: string): void {
  const temp = `${path}.${process.pid}.${++tempCounter}.tmp`;
  try {
    writeFileSync(temp, text);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** Validate, then write the JSON, the Markdown page and the HTML report; returns their paths. Throws (writing nothing) when invalid. */
export function writeResults(outDir: string, result: SpeedMatrixResult): { jsonPath: string; mdPath: string; htmlPath: string } {
  const json = `${JSON.stringify(result, null, 2)}\n`;
  assertValidResult(JSON.parse(json)); // what the file will hold (undefined fields dropped)
  ensureDir(outDir);
  const jsonPath = join(outDir, RESULT_JSON);
  const mdPath = join(outDir, RESULT_MD);
  writeFileAtomic(jsonPath, json);
  writeFileAtomic(mdPath, renderMarkdown(result));
  const htmlPath = join(outDir, RESULT_HTML);
  writeFileAtomic(htmlPath, renderHtml(result));
  return { jsonPath, mdPath, htmlPath };
}
