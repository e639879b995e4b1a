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
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
// the last build's start time and sources (outside dist/, which is packed as it is)
const stamp = join(root, '.dist-built.json');
/** the workload sample (docs/workloads.md), shipped for `init` */
const SAMPLE = 'bench/workloads/sample.jsonl';
const SOURCES = ['src', 'reporters', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs', SAMPLE];

/** Every file the build reads, and the newest modification time among them. */
function sources() {
  const files = [];
  let newest = 0;
  const walk = (path) => {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) for (const name of readdirSync(path).sort()) walk(join(path, name));
    else {
      files.push(relative(root, path));
      newest = Math.max(newest, st.mtimeMs);
    }
  };
  for (const name of SOURCES) walk(join(root, name));
  return { files, newest };
}

/** Stale: no build yet, a source changed since the last build started, or a source was added or removed. */
export function isStale() {
  if (!existsSync(stamp) || !existsSync(join(dist, 'src', 'index.js'))) return true;
  let built;
  try {
    built = JSON.parse(readFileSync(stamp, 'utf8'));
  } catch {
    return true;
  }
  const now = sources();
  return now.newest > built.startedMs || now.files.join('\n') !== (built.files ?? []).join('\n');
}

/**
 * Build into a fresh folder and move it into place at the end, so a process reading dist/
 * meanwhile never sees it half written; the stamp holds the start time and the sources read.
 */
export function build({ quiet = false } = {}) {
  const startedMs = Date.now();
  const { files } = sources();
  const next = join(root, `.dist-${process.pid}`);
  rmSync(next, { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', next], {
    stdio: 'inherit',
  });
  const schemas = [
    ['src/results/speed-matrix.schema.json', 'speed-matrix.schema.json'],
    ['src/thresholds/thresholds.schema.json', 'thresholds.schema.json'],
  ];
  mkdirSync(join(next, 'schemas'), { recursive: true });
  for (const [source, name] of schemas) {
    copyFileSync(join(root, source), join(next, source));
    copyFileSync(join(root, source), join(next, 'schemas', name));
  }
  // the worker-thread bootstraps are plain JavaScript (they run the compiled entries here): the
  // sim's, and a cell's client threads'
  copyFileSync(join(root, 'src/sim/worker.mjs'), join(next, 'src/sim/worker.mjs'));
  copyFileSync(join(root, 'src/load/stream-thread.mjs'), join(next, 'src/load/stream-thread.mjs'));
  // the sample prompt file `init` writes into a project (at the same path relative to src/init/ as here)
  mkdirSync(join(next, dirname(SAMPLE)), { recursive: true });
  copyFileSync(join(root, SAMPLE), join(next, SAMPLE));
  rmSync(dist, { recursive: true, force: true });
  renameSync(next, dist);
  writeFileSync(stamp, `${JSON.stringify({ startedMs, files })}\n`);
  if (!quiet) console.log('built dist/');
}

/** Build when dist/ is missing or stale; true when it built. */
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
