/**
 * A simulator and an opened run for the tests of the enclosing block or file: opened before them by
 * `open` (by default openFastTinyRun, test/accuracy/harness.ts), closed after; read `.sim` and `.run`
 * inside the tests.
 */
import { afterAll, beforeAll } from 'vitest';
import type { SimHandle } from '../../src/sim/index.js';
import { openFastTinyRun, type OpenedAccuracyRun } from '../accuracy/harness.js';

export function simRunForTheBlock(open: () => Promise<{ sim: SimHandle; run: OpenedAccuracyRun }> = openFastTinyRun): { readonly sim: SimHandle; readonly run: OpenedAccuracyRun } {
  const held = {} as { sim: SimHandle; run: OpenedAccuracyRun };
  beforeAll(async () => {
    Object.assign(held, await open());
  }, 30_000);
  afterAll(async () => {
    await held.run?.opened.close();
    await held.sim?.close();
  });
  return held;
}
