/**
 * Row group 4 of 4 of the speed matrix (bench/suite.ts): every 4th row starting with row 4, for
 * sharded runs (project matrix-sharded). See src/matrix/groups.ts for which rows a group takes.
 */
import { defineSpeedMatrix } from 'llm-speed-matrix';
import { ROW_GROUPS, suite } from '../suite.js';

await defineSpeedMatrix(suite, { rows: { index: 4, of: ROW_GROUPS } });
