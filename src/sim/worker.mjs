// Bootstrap of the sim's worker thread. In the built package (dist/) it runs the compiled entry;
// in this repository's sources it registers tsx (a dev dependency) so the TypeScript entry loads
// the same way under vitest, tsx and plain node.
import { existsSync } from 'node:fs';

const compiled = new URL('./worker-main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./worker-main.ts');
}
