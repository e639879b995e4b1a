/**
 * Vitest is a peer dependency: the user's project installs it, and this package uses that copy
 * (one Vitest per run, so the cells this package declares belong to the run the user started).
 * A project without it gets one line that names the fix, not a module-resolution trace.
 */
import { ConfigError } from '../config/errors.js';

/** The Vitest versions this package works with (kept equal to peerDependencies in package.json). */
export const VITEST_PEER_RANGE = '^4.1.0';

export const MISSING_VITEST =
  `vitest is not installed in this project; llm-speed-matrix runs its cells under your Vitest. ` +
  `Fix: npm i -D vitest@${VITEST_PEER_RANGE}`;

/** True when the error is Node's "package not found" for `vitest` itself. */
export function isMissingVitest(error: unknown): boolean {
  const e = error as { code?: string; message?: string } | undefined;
  return e?.code === 'ERR_MODULE_NOT_FOUND' && /['"]vitest['"]/.test(e.message ?? '');
}

/** The Vitest test API, loaded when a matrix is defined (so the rest of the package imports without it). */
export async function importVitest(): Promise<typeof import('vitest')> {
  try {
    return await import('vitest');
  } catch (error) {
    if (isMissingVitest(error)) throw new ConfigError(MISSING_VITEST, { cause: error });
    throw error;
  }
}
