/**
 * Writes speed-matrix.json (validated against the schema) and speed-matrix.md into a folder,
 * each atomically (temp file in the same folder, then rename), creating the folder first.
 * Synchronous on purpose: the reporter calls it after every cell and two writes must never interleave.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderMarkdown } from './render-md.js';
import type { SpeedMatrixResult } from './types.js';
import { assertValidResult } from './validate.js';

export const RESULT_JSON = 'speed-matrix.json';
export const RESULT_MD = 'speed-matrix.md';

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

/** Validate, then write both files; returns their paths. Throws (writing nothing) when invalid. */
export function writeResults(outDir: string, result: SpeedMatrixResult): { jsonPath: string; mdPath: string } {
  const json = `${JSON.stringify(result, null, 2)}\n`;
  assertValidResult(JSON.parse(json)); // what the file will hold (undefined fields dropped)
  mkdirSync(outDir, { recursive: true });
  const jsonPath = join(outDir, RESULT_JSON);
  const mdPath = join(outDir, RESULT_MD);
  writeFileAtomic(jsonPath, json);
  writeFileAtomic(mdPath, renderMarkdown(result));
  return { jsonPath, mdPath };
}
