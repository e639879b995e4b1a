/**
 * LLM_BENCH_RESUME=reports/speed-matrix.json: continue a partial run. Its finished cells and prefill
 * rows are kept as they were (resumed: true) and only the rest are measured, so an eight-hour matrix
 * killed at hour six loses one cell, not six hours. It refuses, naming each difference, when the
 * partial run measured something else: another target, model or engine, another matrix, window, max
 * output, endpoint, repeat count, SLO, workload or simulator profile (resumeDifferences).
 */
import { ConfigError } from '../errors.js';
import { matrixDifferences } from '../judge/compare.js';
import { loadResultFile } from '../compare/load.js';
import { cellKey } from '../shapes/labels.js';
import type { CellResult, PrefillRowResult, RunInfo, SpeedMatrixResult } from '../shapes/result.js';

export const RESUME_VARIABLE = 'LLM_BENCH_RESUME';

export interface Resume {
  path: string;
  previous: SpeedMatrixResult;
  /** measured cells by key ("8K/16"): every cell but a not-run, over-capacity or Errors one */
  cells: Map<string, CellResult>;
  /** measured prefill rows by context label (a failed one is measured again) */
  prefill: Map<string, PrefillRowResult>;
}

/** What differs between the partial run and this one, each as "name: the partial run x, this run y". */
export function resumeDifferences(previous: RunInfo, next: RunInfo): string[] {
  const out = matrixDifferences(previous, next, 'matrix', ['the partial run', 'this run']);
  const check = (name: string, x: string | undefined, y: string | undefined) => {
    if (x !== y) out.push(`${name}: the partial run ${x ?? 'none'}, this run ${y ?? 'none'}`);
  };
  // the embedded simulator listens on a new port every run: its profile and overrides name it
  if (previous.simulated && next.simulated) {
    check('simulator profile', previous.simProfile, next.simProfile);
    check('simulator overrides', JSON.stringify(previous.simOverrides ?? {}), JSON.stringify(next.simOverrides ?? {}));
  } else check('target', previous.targetUrl, next.targetUrl);
  check('served model', previous.run.servedModel, next.run.servedModel);
  check('engine', previous.engine.engine, next.engine.engine);
  check('repeats', String(previous.run.repeat ?? 1), String(next.run.repeat ?? 1));
  check('simulated', String(previous.simulated), String(next.simulated));
  // a kept cell's goodput was judged against the partial run's SLO
  check('SLO (LLM_BENCH_SLO)', previous.run.slo?.text, next.run.slo?.text);
  return out;
}

/** Read and check the partial run against this one (`info`); errors name LLM_BENCH_RESUME, the file and the fix. */
export function loadResume(path: string, info: RunInfo): Resume {
  const previous = loadResultFile(path, RESUME_VARIABLE);
  const differences = resumeDifferences(previous.info, info);
  if (differences.length > 0) {
    throw new ConfigError(
      `${RESUME_VARIABLE}: ${path} measured something else, so this run cannot continue it:\n  ${differences.join('\n  ')}\n` +
        `Run with its settings, or drop ${RESUME_VARIABLE} to start afresh`,
    );
  }
  // a cell that did not start, or did not fit then (the capacity may have changed), is planned afresh;
  // so is one with failed requests (Errors), as a failed prefill row is: a run resumed after its server
  // died mid-cell would keep that cell's failures, and fail, whatever the server does now
  const cells = new Map(
    // the capacity search's own cells are not matrix cells: the search runs again
    previous.cells
      .filter((c) => c.status !== 'not-run' && c.status !== 'over-capacity' && !c.statuses.includes('errors') && !c.adaptive)
      .map((c) => [cellKey(c.context, c.concurrency), c]),
  );
  // a prefill row whose request failed is measured again
  const prefill = new Map(previous.prefill.filter((p) => p.status === 'valid').map((p) => [p.contextLabel, p]));
  return { path, previous, cells, prefill };
}
