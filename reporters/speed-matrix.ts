// placeholder until the speed-matrix reporter lands (being written now)
import type { Reporter } from 'vitest/node';
export default class SpeedMatrixReporter implements Reporter {}
