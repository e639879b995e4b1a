/**
 * Vitest is a peer dependency: the user's project installs it, and this package uses that copy
 * (one Vitest per run, so the cells this package declares belong to the run the user started).
 * A project without it gets one line that names the fix, not a module-resolution trace.
 */
import { ConfigError } from '../errors.js';

/** The Vitest versions this package works with (kept equal to peerDependencies in package.json). */
export const VITEST_PEER_RANGE = '^4.1.0 || ^5.0.0';

/**
 * The fix names plain `vitest`: npm picks the newest release whose `engines` fit the Node that
 * runs it (Vitest 5 needs Node 22.12+, so Node 20 gets 4.x), and both majors are supported.
 */
export const MISSING_VITEST =
  `vitest is not installed in this project; llm-speed-matrix runs its cells under your Vitest (4.1+ or 5). ` +
  `Fix: npm i -D vitest`;

/**
 * Whether an installed Vitest version is one this package works with: 4.1 or later 4.x, or 5.x.
 * Returns the reason when it is not: 'old' (refuse, name the fix) or 'newer' (a major released
 * after this package; let it run, with a warning).
 */
export function vitestSupport(version: string): 'ok' | 'old' | 'newer' {
  const [major = NaN, minor = NaN] = version.split('.').map((part) => Number.parseInt(part, 10));
  if (!Number.isFinite(major) || !Number.isFinite(minor)) return 'old';
  if (major === 5 || (major === 4 && minor >= 1)) return 'ok';
  return major > 5 ? 'newer' : 'old';
}

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
