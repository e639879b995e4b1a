/**
 * A bench file run in a project that withSpeedMatrix did not make (a user's config without the
 * line): defineSpeedMatrix fails the file with the fix, instead of a run that skips every cell
 * and exits 0 with no page. This unit project has no matrix global setup, so it is such a place.
 */
import { expect, inject, test } from 'vitest';
import { defineSpeedMatrix } from '../../src/index.js';

test('outside the matrix projects, defineSpeedMatrix names withSpeedMatrix as the fix and reaches no server', async () => {
  expect((inject as (key: string) => unknown)('speedMatrixUpdate')).toBeUndefined();
  // an unreachable URL: had it got that far, the error would be a connection failure instead
  await expect(defineSpeedMatrix({ target: { url: 'http://127.0.0.1:9/' } })).rejects.toThrow(
    /runs outside the matrix projects: your Vitest config has no withSpeedMatrix.*Fix: .*withSpeedMatrix\(/,
  );
});
