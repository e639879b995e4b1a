/** What the run's test modules hold: their speed-matrix metas, and how the matrix's tests ended, for the run's last line (`vitest bench` prints no such tally). */
import type {} from '../src/matrix/task-meta.js';
import type { TestModule } from 'vitest/node';
import type { TestTally } from '../src/pages/progress-lines.js';
import type { SpeedMatrixMeta } from '../src/shapes/result.js';

/** Every speedMatrix meta of the given modules, in module and test order. */
export function metasOf(testModules: ReadonlyArray<TestModule>): SpeedMatrixMeta[] {
  const metas: SpeedMatrixMeta[] = [];
  for (const module of testModules) {
    for (const testCase of module.children.allTests()) {
      const meta = testCase.meta().speedMatrix;
      if (meta) metas.push(meta);
    }
  }
  return metas;
}

/** The tests of the modules `inMatrix` picks: passed, failed (by name) and skipped; undefined with none. */
export function testTally(testModules: ReadonlyArray<TestModule>, inMatrix: (module: TestModule) => boolean): TestTally | undefined {
  const tally: TestTally = { passed: 0, failed: 0, skipped: 0, failedNames: [] };
  for (const module of testModules) {
    if (!inMatrix(module)) continue;
    for (const test of module.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') tally.passed++;
      else if (state === 'skipped') tally.skipped++;
      else if (state === 'failed') {
        tally.failed++;
        tally.failedNames.push(test.name);
      }
    }
  }
  return tally.passed + tally.failed + tally.skipped > 0 ? tally : undefined;
}
