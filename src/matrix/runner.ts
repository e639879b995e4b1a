/**
 * Test runner for the matrix project. In `vitest bench` mode Vitest's default runner only runs
 * bench() tasks; giving the matrix project the plain TestRunner makes each cell an ordinary test
 * that can fail, be skipped, and carry meta (see shared docs VITEST.md).
 */
import { TestRunner } from 'vitest';
export default TestRunner;
