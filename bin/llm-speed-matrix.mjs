#!/usr/bin/env node
// Entry of the `llm-speed-matrix` command: the compiled CLI in dist/ (no TypeScript at run time).
import { existsSync } from 'node:fs';

const cli = new URL('../dist/src/cli.js', import.meta.url);
if (!existsSync(cli)) {
  // only in a source checkout that was never built (the published package ships dist/)
  console.error('llm-speed-matrix: dist/ is missing. Fix: run `npm run build` in the llm-speed-matrix checkout.');
  process.exit(2);
}
const { main } = await import(cli.href);
process.exitCode = await main(process.argv.slice(2));
