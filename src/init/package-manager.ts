/**
 * Which package manager a project uses, so the workflow `init` writes installs, caches and runs
 * with the project's own tool (an `npm ci` in a pnpm project fails with EUSAGE).
 *
 * The rule, first match wins:
 *   1. package.json `packageManager` ("pnpm@10.4.1+sha512…", "yarn@4.5.0", "npm@11", "bun@1.2"),
 *      which Corepack and pnpm/action-setup also read;
 *   2. a lock file: pnpm-lock.yaml, yarn.lock, bun.lock / bun.lockb, package-lock.json /
 *      npm-shrinkwrap.json (in that order when a folder holds several);
 *   3. npm without a lock file (`npm install`, no cache: setup-node's npm cache needs a lock file).
 * Yarn 2+ ("berry", `packageManager: yarn@2+` or a .yarnrc.yml) installs with `--immutable`,
 * Yarn 1 with `--frozen-lockfile`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type PackageManagerName = 'npm' | 'pnpm' | 'yarn' | 'bun';

export interface PackageManager {
  name: PackageManagerName;
  /** where the answer came from, for init's report: "packageManager field", "pnpm-lock.yaml", … */
  source: string;
  /** the major version from the packageManager field, when it names one */
  major?: number;
  /** the project has a lock file (a frozen install and a cache need one) */
  locked: boolean;
  /** the CI install command */
  install: string;
  /** the prefix that runs a dependency's bin: `npx`, `pnpm exec`, `yarn`, `bunx` */
  exec: string;
  /** actions/setup-node's `cache:` value, when setup-node can cache this manager */
  cache?: 'npm' | 'pnpm' | 'yarn';
}

const LOCK_FILES: [string, PackageManagerName][] = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
];

function lockOf(dir: string, name: PackageManagerName): string | undefined {
  return LOCK_FILES.find(([file, pm]) => pm === name && existsSync(join(dir, file)))?.[0];
}

/** `packageManager` from package.json: name and major, or undefined when absent or not one of the four. */
export function parsePackageManagerField(value: unknown): { name: PackageManagerName; major?: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(npm|pnpm|yarn|bun)(?:@(\d+))?/.exec(value.trim());
  if (!m) return undefined;
  return { name: m[1] as PackageManagerName, ...(m[2] !== undefined ? { major: Number(m[2]) } : {}) };
}

export function detectPackageManager(dir: string): PackageManager {
  let field: ReturnType<typeof parsePackageManagerField>;
  try {
    field = parsePackageManagerField((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { packageManager?: unknown }).packageManager);
  } catch {
    field = undefined;
  }
  let name: PackageManagerName;
  let source: string;
  if (field) {
    name = field.name;
    source = 'the packageManager field';
  } else {
    const found = LOCK_FILES.find(([file]) => existsSync(join(dir, file)));
    name = found?.[1] ?? 'npm';
    source = found?.[0] ?? 'no lock file';
  }
  const locked = lockOf(dir, name) !== undefined;
  const berry = name === 'yarn' && ((field?.major ?? 1) >= 2 || existsSync(join(dir, '.yarnrc.yml')));
  const pm: PackageManager = { name, source, locked, ...(field?.major !== undefined ? { major: field.major } : {}), install: '', exec: '' };
  switch (name) {
    case 'npm':
      return { ...pm, install: locked ? 'npm ci' : 'npm install', exec: 'npx', ...(locked ? { cache: 'npm' } : {}) };
    case 'pnpm':
      return { ...pm, install: locked ? 'pnpm install --frozen-lockfile' : 'pnpm install', exec: 'pnpm exec', ...(locked ? { cache: 'pnpm' } : {}) };
    case 'yarn':
      return {
        ...pm,
        install: locked ? (berry ? 'yarn install --immutable' : 'yarn install --frozen-lockfile') : 'yarn install',
        exec: 'yarn',
        ...(locked ? { cache: 'yarn' } : {}),
      };
    case 'bun':
      // setup-node has no bun cache; bun's own install is fast
      return { ...pm, install: locked ? 'bun install --frozen-lockfile' : 'bun install', exec: 'bunx' };
  }
}
