/**
 * Reading a speed-matrix result file for comparison: JSON, schema version, schema. Each error names
 * the file (and the variable or argument it came from), what is wrong and the fix.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import type { SpeedMatrixResult } from '../shapes/result.js';
import { validateResult } from '../results/validate.js';
import { migrateResultJson, OLDEST_READABLE_VERSION, RESULT_SCHEMA_VERSION } from '../results/migrate.js';

export { RESULT_SCHEMA_VERSION };

/** What a file holds before its schema version is checked. */
export interface ReadResultFile {
  path: string;
  json: unknown;
  schemaVersion: unknown;
}

/** Read and parse; `what` names the source in errors, e.g. `LLM_BENCH_BASELINE` or `base.json`. */
export function readResultJson(path: string, what: string): ReadResultFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `${what}: cannot read ${path} (${code === 'ENOENT' ? 'no such file' : (error as Error).message}); ` +
        'give the path of a speed-matrix.json written by an earlier run',
    );
  }
  let json: unknown;
  try {
    // a byte-order mark (an editor on Windows writes one) is no JSON
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ConfigError(`${what}: ${path} is not valid JSON (${(error as Error).message}); give a speed-matrix.json file`);
  }
  // an older readable version is read as the current one (results/migrate.ts says what changed)
  json = migrateResultJson(json);
  const schemaVersion = typeof json === 'object' && json !== null ? (json as { schemaVersion?: unknown }).schemaVersion : undefined;
  // a file with no schema version (package.json, say) is no result at all: said so, not a version mismatch
  const held = json as { info?: unknown; cells?: unknown } | null;
  if (schemaVersion === undefined && (typeof held !== 'object' || held === null || (held.info === undefined && held.cells === undefined))) {
    throw new ConfigError(`${what}: ${path} is not a speed-matrix result (no schemaVersion, info or cells); give the speed-matrix.json a run wrote (reports/ by default)`);
  }
  return { path, json, schemaVersion };
}

/** Check schema version and schema; returns the result. */
export function checkResultFile(file: ReadResultFile, what: string): SpeedMatrixResult {
  if (file.schemaVersion !== RESULT_SCHEMA_VERSION) {
    throw new ConfigError(
      `${what}: ${file.path} has schemaVersion ${JSON.stringify(file.schemaVersion)}, but this version of llm-speed-matrix ` +
        `reads schemaVersion ${OLDEST_READABLE_VERSION} to ${RESULT_SCHEMA_VERSION}; ${typeof file.schemaVersion === 'number' && file.schemaVersion > RESULT_SCHEMA_VERSION ? 'a newer llm-speed-matrix wrote it: upgrade this one' : 'give a speed-matrix.json written by this version (run that measurement again with it)'}`,
    );
  }
  const outcome = validateResult(file.json);
  if (!outcome.ok) {
    const shown = outcome.errors.slice(0, 8);
    const more = outcome.errors.length > shown.length ? `\n  … ${outcome.errors.length - shown.length} more` : '';
    throw new ConfigError(
      `${what}: ${file.path} is not a valid speed-matrix result:\n  ${shown.join('\n  ')}${more}\n` +
        'Give a speed-matrix.json written by llm-speed-matrix (schema: llm-speed-matrix/schemas/speed-matrix.schema.json).',
    );
  }
  return outcome.value;
}

/** Read, parse and validate a result file. */
export function loadResultFile(path: string, what: string): SpeedMatrixResult {
  return checkResultFile(readResultJson(path, what), what);
}
