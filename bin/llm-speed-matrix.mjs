#!/usr/bin/env node
// Entry of the `llm-speed-matrix` command: the compiled CLI in dist/ (no TypeScript at run time).
import { existsSync } from 'node:fs';

const cli = new URL('../dist/src/cli.js', import.meta.url);
const build = new URL('../scripts/build.mjs', import.meta.url);
// a source checkout (the published package ships dist/ and no scripts/): bring dist/ up to date
// first, as this repository's vitest.config.ts does, so `sim` and `report` work in a fresh clone
if (existsSync(build) && existsSync(new URL('../src/cli.ts', import.meta.url))) {
  if (!existsSync(new URL('../node_modules/typescript', import.meta.url))) {
    if (!existsSync(cli)) {
      console.error('llm-speed-matrix: dist/ is missing and TypeScript is not installed. Fix: run `npm ci` in the llm-speed-matrix checkout.');
      process.exit(2);
    }
  } else {
    const { ensureBuilt } = await import(build.href);
    ensureBuilt();
  }
}
if (!existsSync(cli)) {
  console.error('llm-speed-matrix: dist/ is missing. Fix: run `npm run build` in the llm-speed-matrix checkout.');
  process.exit(2);
}
const { main } = await import(cli.href);
process.exitCode = await main(process.argv.slice(2));
