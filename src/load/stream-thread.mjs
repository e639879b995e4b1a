// Bootstrap of a cell's client thread (stream-thread-main.ts). In the built package (dist/) it runs
// the compiled entry; in this repository's sources it registers tsx (a dev dependency) so the
// TypeScript entry loads the same way under vitest, tsx and plain node (as src/sim/worker.mjs).
import { existsSync } from 'node:fs';

const compiled = new URL('./stream-thread-main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./stream-thread-main.ts');
}
