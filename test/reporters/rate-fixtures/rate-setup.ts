// Shared by the rate fixtures: the run info with rate settings, and the 8K rate cells.
import { sglangInfo } from '../../results/fixtures/sglang-h200.js';
import { RATE_SETTINGS, rateCellsFixture } from '../../results/fixtures/rate-cells.js';

export const info = {
  ...sglangInfo(),
  run: { ...sglangInfo().run, contexts: [8192], concurrency: [1], prefillContexts: [], rates: { ...RATE_SETTINGS } },
  plannedCells: ['8K/1'],
};
delete (info as { plannedPrefill?: string[] }).plannedPrefill;
export const rates = rateCellsFixture().filter((c) => c.context === 8192);
