/**
 * The Vitest task meta that carries a test's result to the reporter (`task.meta.speedMatrix`):
 * declared here, apart from src/shapes, because it is the one shape that needs Vitest's types.
 * Import it (type only) where a task's meta is written or read.
 */
import type {} from 'vitest'; // load vitest's types before augmenting them (file order must not matter)
import type { SpeedMatrixMeta } from '../shapes/result.js';

export type { SpeedMatrixMeta };

declare module 'vitest' {
  interface TaskMeta {
    speedMatrix?: SpeedMatrixMeta;
  }
}
