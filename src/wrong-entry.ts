/**
 * Where `exports` sends every path of this package that is not an entry point: a deep import such
 * as `llm-speed-matrix/src/matrix/runner.js` or `llm-speed-matrix/reporters/speed-matrix` fails
 * here with the list of the paths that exist, instead of Node's ERR_PACKAGE_PATH_NOT_EXPORTED.
 */
import { ConfigError } from './errors.js';

export const ENTRY_POINTS = [
  "'llm-speed-matrix' (defineSpeedMatrix, the types)",
  "'llm-speed-matrix/vitest' (withSpeedMatrix for vitest.config.ts)",
  "'llm-speed-matrix/reporter'",
  "'llm-speed-matrix/sim'",
  "'llm-speed-matrix/schemas/speed-matrix.schema.json'",
  "'llm-speed-matrix/schemas/thresholds.schema.json'",
];

const error = new ConfigError(`that path is not an entry point of llm-speed-matrix. Fix: import one of ${ENTRY_POINTS.join(', ')}`);
error.stack = `${error.name}: ${error.message}`;
throw error;
