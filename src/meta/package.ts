/**
 * The package's own files, found the same way from the sources (src/…, run through tsx or Vitest)
 * and from the build (dist/src/…, run by users): the package root is the nearest folder above this
 * module whose package.json is this package's.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_NAME = 'llm-speed-matrix';

let root: string | undefined;

/** The folder holding this package's package.json. */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate) && (JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string }).name === PACKAGE_NAME) return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error(`${PACKAGE_NAME}: its own package.json was not found above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

/** The package's name and version, read once from its package.json (the one place they are written). */
export function packageInfo(): { name: string; version: string } {
  const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { name: string; version: string };
  return { name: pkg.name, version: pkg.version };
}
