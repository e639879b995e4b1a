#!/usr/bin/env node
// Entry of the `llm-speed-matrix` command. The sources are TypeScript; tsx loads them on Node 20,
// which cannot strip types itself.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
