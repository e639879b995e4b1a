// Fixture for test/reporters/rate-cells.test.ts (the other file): the higher rates, carrying the
// run info as a shard without the probe does. Named *.fixture.ts so the unit project never runs it.
import { test } from 'vitest';
import { info, rates } from './rate-setup.js';

for (const cell of rates.filter((c) => c.rate >= 2)) {
  test(`8K @ ${cell.rate}/s`, ({ task }) => {
    task.meta.speedMatrix = { kind: 'rate', cell, info };
  });
}
