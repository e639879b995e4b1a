// Compiled by pack-check in a user's project: every entry point's types resolve and fit together.
import { defineSpeedMatrix, type SuiteInput, type SpeedMatrixResult, type CellStatus } from 'llm-speed-matrix';
import { withSpeedMatrix, speedMatrixProjects } from 'llm-speed-matrix/vitest';
import SpeedMatrixReporter from 'llm-speed-matrix/reporter';
import { startSim, type SimHandle } from 'llm-speed-matrix/sim';
import { defineConfig } from 'vitest/config';

const suite: SuiteInput = { name: 'check', matrix: { contexts: [0, 8192], concurrency: [1, 4] } };
// a partial matrix: the rest from the profile or the default matrix
const partial: SuiteInput = { matrix: { windowS: 10 }, timeouts: { headersMs: 300_000 } };
const define: (s: SuiteInput) => Promise<void> = defineSpeedMatrix;
const config = defineConfig(withSpeedMatrix({ test: { include: ['test/**/*.test.ts'] } }));
const projects: number = speedMatrixProjects().length;
const reporter = new SpeedMatrixReporter();
const sim: Promise<SimHandle> = startSim({ profile: 'tiny' });
const status: CellStatus = 'valid';
const firstCell = (r: SpeedMatrixResult): number => r.cells[0]?.concurrency ?? 0;
export { suite, partial, define, config, projects, reporter, sim, status, firstCell };
