/**
 * Pure: task metas (in any order, with duplicates from reruns) → one SpeedMatrixResult.
 * Last one wins per cell key, per prefill context, per capacity row and for the run info. A capacity
 * row's adaptive cells (the search's own, marked `adaptive`) join the cells; they are never planned
 * cells, so they do not count toward a run's completeness. Open-loop rate cells (kind 'rate') are
 * kept per rate cell key (8K@2), last one wins, into `rateCells`, ordered by context then rate,
 * absent when there are none; nothing plans them, so they count toward no completeness either.
 * Planned cell and prefill
 * lists are the union over every run meta (a run split into files or shards may carry one probe per file).
 */
import { RESULT_SCHEMA_VERSION } from './migrate.js';
import { cellKey, contextLabel, compareCellKeys, parseContext, rateCellKey, testNames } from '../shapes/labels.js';
import type { CapacityRow, CellResult, PrefillRowResult, RateCapacityRow, RateCellResult, RunInfo, SpeedMatrixMeta, SpeedMatrixResult } from '../shapes/result.js';

export interface CollectOptions {
  /** true while the run is still going */
  partial: boolean;
  /** ISO time the run ended (final page) */
  endedAt?: string;
}

/** The result, or undefined when no meta carries run info (a 'run' meta, or a cell/prefill meta with `info`). */
export function collectResult(
  metas: readonly SpeedMatrixMeta[],
  options: CollectOptions,
): SpeedMatrixResult | undefined {
  let runInfo: RunInfo | undefined;
  let carriedInfo: RunInfo | undefined;
  const plannedCells = new Set<string>();
  const plannedPrefill = new Set<string>();
  const plannedOverCapacity = new Set<string>();
  const cells = new Map<string, CellResult>();
  const prefill = new Map<number, PrefillRowResult>();
  const capacity = new Map<number, CapacityRow>();
  const adaptive = new Map<string, CellResult>();
  const rateCells = new Map<string, RateCellResult>();
  const rateCapacity = new Map<number, RateCapacityRow>();
  const adaptiveRates = new Map<string, RateCellResult>();
  const plan = (i: RunInfo) => {
    for (const key of i.plannedCells ?? []) plannedCells.add(key);
    for (const key of i.plannedPrefill ?? []) plannedPrefill.add(key);
    for (const key of i.plannedOverCapacity ?? []) plannedOverCapacity.add(key);
  };

  for (const meta of metas) {
    switch (meta.kind) {
      case 'run':
        runInfo = meta.info;
        plan(meta.info);
        break;
      case 'cell':
        cells.set(cellKey(meta.cell.context, meta.cell.concurrency), meta.cell);
        break;
      case 'prefill':
        prefill.set(meta.row.context, meta.row);
        break;
      case 'rate':
        rateCells.set(rateCellKey(meta.cell.context, meta.cell.rate), meta.cell);
        break;
      case 'capacity':
        capacity.set(meta.row.context, meta.row);
        // a rerun's search replaces the row's earlier adaptive cells
        for (const [key, c] of adaptive) if (c.context === meta.row.context) adaptive.delete(key);
        for (const c of meta.cells) adaptive.set(cellKey(c.context, c.concurrency), c);
        break;
      case 'rate-capacity':
        rateCapacity.set(meta.row.context, meta.row);
        // a rerun's search replaces the context's earlier adaptive rate cells
        for (const [key, c] of adaptiveRates) if (c.context === meta.row.context) adaptiveRates.delete(key);
        for (const c of meta.cells) adaptiveRates.set(rateCellKey(c.context, c.rate), c);
        break;
    }
    // a cell or prefill meta may carry the run info too (a shard or merge without the run meta)
    if (meta.kind !== 'run' && meta.info) {
      carriedInfo = meta.info;
      plan(meta.info);
    }
  }
  const info = runInfo ?? carriedInfo;
  if (!info) return undefined;

  const resultInfo: RunInfo = { ...info };
  // a run split over files or shards started when its first part started
  const starts = metas.flatMap((m) => (m.info ? [m.info.startedAt] : []));
  const earliest = starts.reduce<string | undefined>((a, b) => (a === undefined || b < a ? b : a), undefined);
  if (earliest !== undefined) resultInfo.startedAt = earliest;
  if (plannedCells.size > 0) resultInfo.plannedCells = [...plannedCells].sort(compareCellKeys);
  if (plannedOverCapacity.size > 0) resultInfo.plannedOverCapacity = [...plannedOverCapacity].sort(compareCellKeys);
  if (plannedPrefill.size > 0) {
    resultInfo.plannedPrefill = [...plannedPrefill].sort((a, b) => parseContext(a) - parseContext(b));
  }

  const result: SpeedMatrixResult = {
    schemaVersion: RESULT_SCHEMA_VERSION,
    info: resultInfo,
    prefill: [...prefill.values()].sort((a, b) => a.context - b.context),
    // a matrix cell wins over an adaptive one of the same key (the search never measures a column)
    cells: [...cells.values(), ...[...adaptive].filter(([key]) => !cells.has(key)).map(([, c]) => c)].sort(
      (a, b) => a.context - b.context || a.concurrency - b.concurrency,
    ),
    partial: options.partial,
  };
  if (capacity.size > 0) result.capacity = { rows: [...capacity.values()].sort((a, b) => a.context - b.context) };
  // a configured rate cell wins over an adaptive one of the same key
  const allRates = [...rateCells.values(), ...[...adaptiveRates].filter(([key]) => !rateCells.has(key)).map(([, c]) => c)];
  if (allRates.length > 0) result.rateCells = allRates.sort((a, b) => a.context - b.context || a.rate - b.rate);
  if (rateCapacity.size > 0) result.rateCapacity = { rows: [...rateCapacity.values()].sort((a, b) => a.context - b.context) };
  if (options.endedAt !== undefined) result.endedAt = options.endedAt;
  // a finished run says why planned cells are not on the page
  if (!options.partial) {
    const notRun = result.cells.filter((c) => c.status === 'not-run' && !c.adaptive).map((c) => ({ key: cellKey(c.context, c.concurrency), reason: c.notRunReason ?? 'could not start' }));
    const have = new Set(result.cells.filter((c) => !c.adaptive).map((c) => cellKey(c.context, c.concurrency)));
    const haveRows = new Set(result.prefill.map((p) => p.contextLabel));
    const missing = [
      ...[...plannedPrefill].filter((k) => !haveRows.has(k)).map((k) => testNames.prefill(k)),
      ...[...plannedCells].filter((k) => !have.has(k)).sort(compareCellKeys),
    ];
    if (notRun.length > 0 || missing.length > 0) result.incomplete = { notRun, missing };
  }
  return result;
}

/** Cell keys the run plans: `info.plannedCells`, else contexts × concurrency of the settings. */
export function plannedCellKeys(info: RunInfo): string[] {
  if (info.plannedCells && info.plannedCells.length > 0) return [...info.plannedCells];
  return info.run.contexts.flatMap((context) => info.run.concurrency.map((c) => cellKey(context, c)));
}

/** Prefill keys the run plans: `info.plannedPrefill`, else the settings' prefill contexts. */
export function plannedPrefillKeys(info: RunInfo): string[] {
  if (info.plannedPrefill && info.plannedPrefill.length > 0) return [...info.plannedPrefill];
  return info.run.prefillContexts.map(contextLabel);
}

/** The finished cells, prefill rows and rate cells of a result, as labels (8K/4, prefill 8K, 8K@2). */
export function finishedKeys(result: SpeedMatrixResult): string[] {
  const cells = result.cells.filter((c) => c.status !== undefined).map((c) => `${c.contextLabel}/${c.concurrency}${c.adaptive ? ' (capacity search)' : ''}`);
  const rows = result.prefill.map((p) => testNames.prefill(p.contextLabel));
  const rates = (result.rateCells ?? []).map((c) => rateCellKey(c.context, c.rate));
  return [...rows, ...cells, ...rates];
}
