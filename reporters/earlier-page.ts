/**
 * A matrix run that measured nothing (its bench file failed before any cell: a bad setting, a
 * server that is not there): an earlier run's page in the results folder would pass for this one's
 * (issue 60), so it is moved aside to speed-matrix.previous.* (src/results/write.ts), and said. Not
 * a file the user named: the one LLM_BENCH_RESUME continues, or LLM_BENCH_BASELINE.
 */
import { realpathSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

/** A path with its links resolved, as it is where it does not exist. */
function realPath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
import { RESULT_JSON, setAsideEarlierPage } from '../src/results/write.js';

/** The line to log, or undefined when there was nothing to set aside (or it is a file the user named: to resume, or the baseline). */
export function setAsideEarlierRun(dir: string, named: { paths: ReadonlyArray<string | undefined>; root: string }): string | undefined {
  const here = realPath(join(dir, RESULT_JSON));
  if (named.paths.some((p) => p !== undefined && realPath(resolve(named.root, p)) === here)) return undefined;
  try {
    const aside = setAsideEarlierPage(dir);
    if (!aside) return undefined;
    return `this run measured nothing (its error above says why), so the page in ${dir}, an earlier run's${aside.startedAt ? ` (started ${aside.startedAt})` : ''}, is now ${aside.moved.map((p) => basename(p)).join(', ')}: no page there passes for this run's`;
  } catch (error) {
    return `this run measured nothing, and the earlier run's page in ${dir} could not be moved aside (${(error as Error).message}): it is not this run's`;
  }
}
