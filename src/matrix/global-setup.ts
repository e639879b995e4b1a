/**
 * Global setup of the matrix project (runs in Vitest's main process): tells the cell tests whether
 * this run updates threshold files (`-u`), so a breach during an update does not fail the cell, and
 * when this Vitest invocation started (the per-request file's `run`: its bench files append to one file).
 * The reporter, the single writer, rewrites the files at the end of the run.
 */
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    speedMatrixUpdate: boolean;
    speedMatrixStartedAt: string;
  }
}

export default function setup(project: TestProject): void {
  project.provide('speedMatrixUpdate', project.vitest.config.snapshotOptions.updateSnapshot === 'all');
  // the process's start, not this call's: the same for every project of one invocation
  project.provide('speedMatrixStartedAt', new Date(performance.timeOrigin).toISOString());
}
