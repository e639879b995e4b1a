/**
 * Ground truth for "capacity at an SLO" from the simulator's step model, independent of any
 * measured cell: every concurrency C = 1, 2, … of a context row is run in virtual time
 * (test/helpers/virtual-cell.ts: the engine's own arithmetic, no client, no timers), its figures are
 * computed with the product's definitions (computeCellFigures) and judged with the product's
 * sloVerdict. The true capacity is the largest C that meets the SLO below the first C that does not.
 *
 * Test code, not product code: an oracle for the accuracy tests. It lives here rather than in
 * src/sim because it depends on the SLO and matrix layers (sloVerdict, planCell), which the
 * simulator itself must not depend on.
 */
import type { CellResult, Slo, SloMiss } from '../../src/shapes/result.js';
import type { CellFigures } from '../../src/shapes/result.js';
import { planCell } from '../../src/matrix/plan.js';
import { contextLabel } from '../../src/shapes/labels.js';
import { computeGoodput } from '../../src/judge/goodput.js';
import { sloVerdict } from '../../src/judge/slo-verdict.js';
import type { SimProfile } from '../../src/sim/profiles.js';
import { runVirtualCell, virtualCellFigures, virtualTimelines, type VirtualCell } from '../helpers/virtual-cell.js';

export interface VirtualRowOptions {
  profile: SimProfile;
  /** prompt tokens of the row */
  context: number;
  /** the run's max output tokens (every request asks for it; it also decides Over capacity) */
  maxOutputTokens: number;
  windowMs: number;
  /** from the readiness gate to the window (the real gate holds ~200–450 ms: settle time + scrape cadence) */
  settleMs?: number;
  /** the real runner's gate timeout (a cell whose workers cannot all get a token measures anyway) */
  gateTimeoutMs?: number;
}

/** One concurrency of a virtual row: Over capacity (not run), or run in virtual time with its figures. */
export interface VirtualPoint {
  concurrency: number;
  overCapacity?: { requiredTokens: number; kvCapacityTokens: number };
  cell?: VirtualCell;
  figures?: CellFigures;
}

/**
 * A context row of the profile in virtual time, each concurrency computed once on demand (several
 * SLOs judge the same cells). Over capacity follows the product's rule (planCell) on the profile's
 * own KV capacity (whole blocks, as the sim reports it) and max running requests.
 */
export class VirtualRow {
  private readonly points = new Map<number, VirtualPoint>();
  constructor(readonly o: VirtualRowOptions) {}

  /** the KV capacity the sim reports (its blocks × block size) */
  get kvCapacityTokens(): number {
    const { kvCapacityTokens, blockSize } = this.o.profile;
    return Math.floor(kvCapacityTokens / blockSize) * blockSize;
  }

  at(concurrency: number): VirtualPoint {
    let p = this.points.get(concurrency);
    if (p) return p;
    const { profile, context, maxOutputTokens } = this.o;
    const planned = planCell(context, concurrency, maxOutputTokens, {
      kvCapacityTokens: this.kvCapacityTokens,
      maxRunningRequests: profile.maxRunningRequests,
    });
    if (planned.overCapacity) {
      p = { concurrency, overCapacity: planned.overCapacity };
    } else {
      const cell = runVirtualCell(profile, {
        context,
        concurrency,
        maxOutputTokens,
        windowMs: this.o.windowMs,
        settleMs: this.o.settleMs ?? 300,
        gateTimeoutMs: this.o.gateTimeoutMs ?? 10_000,
      });
      // the matrix's stall rule (LLM_BENCH_STALL_S unset): a request silent for max(5 s, 50 × median TBT) failed
      p = { concurrency, cell, figures: virtualCellFigures(cell, { stallLimit: 'cell' }) };
    }
    this.points.set(concurrency, p);
    return p;
  }

  /** The point as a cell result judged against `slo` (goodput computed for that SLO). */
  result(concurrency: number, slo: Slo): CellResult {
    const p = this.at(concurrency);
    const { context } = this.o;
    const base = { context, contextLabel: contextLabel(context), concurrency, finishedAt: new Date(0).toISOString() };
    let result: CellResult;
    if (p.overCapacity) {
      result = { ...base, status: 'over-capacity', statuses: ['over-capacity'], evidence: { capacity: p.overCapacity } };
    } else {
      const cell = p.cell!;
      const goodput = computeGoodput({
        timelines: virtualTimelines(cell),
        windowStartMs: cell.windowStartMs,
        windowEndMs: cell.windowEndMs,
        ttftFrom: 'sent-headers',
        ...(p.figures!.stallLimitMs !== undefined ? { stallLimitMs: p.figures!.stallLimitMs } : {}),
        slo,
      });
      result = { ...base, status: 'valid', statuses: ['valid'], evidence: {}, figures: p.figures!, goodput };
    }
    result.slo = sloVerdict(result, slo);
    return result;
  }
}

export interface TrueCapacity {
  /** the largest C meeting the SLO below the first that does not (0 when C = 1 does not) */
  capacity: number;
  /** every C up to maxConcurrency met the SLO (the search, too, only says "at least the largest column") */
  atLeast: boolean;
  /** the first C that does not meet the SLO, and the constraint that binds there */
  firstFailure?: number;
  binding?: SloMiss;
}

/**
 * The true capacity of a row at `slo` by a dense sweep C = 1 … maxConcurrency (stopping at the
 * first C that misses: the capacity is defined below it).
 */
export function trueCapacity(row: VirtualRow, slo: Slo, maxConcurrency: number): TrueCapacity {
  for (let c = 1; c <= maxConcurrency; c++) {
    const verdict = row.result(c, slo).slo!;
    if (!verdict.meets) return { capacity: c - 1, atLeast: false, firstFailure: c, ...(verdict.binding ? { binding: verdict.binding } : {}) };
  }
  return { capacity: maxConcurrency, atLeast: true };
}
