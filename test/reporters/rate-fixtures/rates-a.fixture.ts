// Fixture for test/reporters/rate-cells.test.ts (a row-group file, as a shard would run it): the
// probe, one decode cell and the lower rates, in reverse order (the result orders them).
// Named *.fixture.ts so the unit project never runs it.
import { test } from 'vitest';
import { sglangCells } from '../../results/fixtures/sglang-h200.js';
import { info, rates } from './rate-setup.js';

test('probe', ({ task }) => {
  task.meta.speedMatrix = { kind: 'run', info };
});
test('8K × 1', ({ task }) => {
  task.meta.speedMatrix = { kind: 'cell', cell: sglangCells()[0]! };
});
for (const cell of rates.filter((c) => c.rate < 2).reverse()) {
  test(`8K @ ${cell.rate}/s`, ({ task }) => {
    task.meta.speedMatrix = { kind: 'rate', cell, info };
  });
}
