/** How long the matrix's measured cells took, and which are left, for the progress line's time left (progress-lines.ts timeLeftText). */
import type { TestCase } from 'vitest/node';
import type { CellResult, SpeedMatrixResult } from '../src/shapes/result.js';
import { plannedCellCounts, timeLeftText } from '../src/pages/progress-lines.js';

export class CellTimes {
  private sumMs = 0;
  private count = 0;
  /** the names of the matrix's tests this process runs (collected, not left out by -t); empty until a file is collected */
  private readonly runnable = new Set<string>();

  /** a matrix file's tests, as collected: those -t leaves out (mode skip or todo) and another shard's files never run here */
  collected(tests: Iterable<TestCase>): void {
    for (const test of tests) if (test.options.mode !== 'skip' && test.options.mode !== 'todo') this.runnable.add(test.name);
  }

  /** a finished cell and its test's duration: counted when it was measured here (not Over capacity, not run, kept from a resumed run, or a capacity search's) */
  add(cell: CellResult, durationMs: number | undefined): void {
    if (durationMs === undefined || !(durationMs > 0)) return;
    if (cell.adaptive === true || cell.resumed === true || cell.status === 'over-capacity' || cell.status === 'not-run') return;
    this.sumMs += durationMs;
    this.count++;
  }

  /**
   * The progress line's N/M count and time left (`about 9 min left`, undefined before a cell was
   * measured or with none left), for the cells of this process (progress-lines.ts plannedCellCounts)
   */
  progress(result: Pick<SpeedMatrixResult, 'info' | 'cells'>): { planned: number; left: string | undefined } {
    const counts = plannedCellCounts(result, this.runnable.size > 0 ? this.runnable : undefined);
    const more = result.info.run.rates !== undefined || result.info.run.slo !== undefined;
    return { planned: counts.planned, left: timeLeftText(this.count > 0 ? this.sumMs / this.count : undefined, counts.left, more) };
  }
}
