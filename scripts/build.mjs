#!/usr/bin/env node
// Builds the package: TypeScript to dist/ (ESM JavaScript and .d.ts, with tsc: the package is a
// library of many small modules that users import by entry point, so a bundle would gain nothing
// and lose the .d.ts layout), then copies the JSON Schemas next to the modules that read them and
// into dist/schemas/ (exported as files), and the sim's worker bootstrap.
//
//   node scripts/build.mjs            build
//   node scripts/build.mjs --if-stale build only when a source is newer than the last build
//
// This repository's vitest.config.ts builds with --if-stale semantics before it imports the
// package, so `npx vitest …` here always runs the current sources through the built entry points.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const stamp = join(dist, '.built');
const SOURCES = ['src', 'reporters', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs'];

/** The newest modification time among the files the build reads. */
function newestSource(path = root, names = SOURCES) {
  let newest = 0;
  for (const name of names) {
    const full = join(path, name);
    const st = statSync(full, { throwIfNoEntry: false });
    if (!st) continue;
    newest = Math.max(newest, st.isDirectory() ? newestSource(full, readdirSync(full)) : st.mtimeMs);
  }
  return newest;
}

export function isStale() {
  return !existsSync(stamp) || statSync(stamp).mtimeMs < newestSource();
}

export function build({ quiet = false } = {}) {
  rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  const schemas = [
    ['src/results/speed-matrix.schema.json', 'speed-matrix.schema.json'],
    ['src/thresholds/thresholds.schema.json', 'thresholds.schema.json'],
  ];
  mkdirSync(join(dist, 'schemas'), { recursive: true });
  for (const [source, name] of schemas) {
    copyFileSync(join(root, source), join(dist, source));
    copyFileSync(join(root, source), join(dist, 'schemas', name));
  }
  // the sim's worker-thread bootstrap is plain JavaScript (it runs the compiled worker-main.js here)
  copyFileSync(join(root, 'src/sim/worker.mjs'), join(dist, 'src/sim/worker.mjs'));
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  if (!quiet) console.log('built dist/');
}

/** Build when dist/ is missing or older than a source; true when it built. */
export function ensureBuilt() {
  if (!isStale()) return false;
  console.error('[llm-speed-matrix] building dist/ from the sources (npm run build) …');
  build({ quiet: true });
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--if-stale')) ensureBuilt();
  else build();
}
