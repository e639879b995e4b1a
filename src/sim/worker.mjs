// Bootstrap of the sim's worker thread: registers tsx so the TypeScript entry loads the same
// way under vitest, tsx and plain node (with tsx installed), then runs it.
import { register } from 'tsx/esm/api';

register();
await import('./worker-main.ts');
