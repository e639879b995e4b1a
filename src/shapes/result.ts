/**
 * Contract of the speed-matrix result (the JSON file and the Vitest task meta).
 * The source of truth is the JSON Schema src/results/speed-matrix.schema.json; the interfaces are
 * generated from it into src/shapes/result.gen.ts (`npx tsx src/results/gen-types.ts`) and
 * re-exported here under their names, the figures of a cell and of a prefill row among them (as
 * defined in docs/method.md; a figure that cannot be computed is `undefined`, never 0).
 *
 * ServerFacts (src/shapes/engine.ts) stays hand-written; the assertion at the end of this file makes
 * `tsc` fail if it and the generated shape stop being mutually assignable. The Vitest task meta
 * that carries these shapes is declared in src/matrix/task-meta.ts (this folder imports nothing).
 */
import type * as Gen from './result.gen.js';
import type * as Engines from './engine.js';

export type {
  SpeedMatrixResult,
  RunInfo,
  HardwareInfo,
  EngineInfo,
  RunSettings,
  PrefillRowResult,
  CellEvidence,
  ClientLimitedEvidence,
  CellResult,
  CellRepeats,
  PrefillRepeats,
  FigureSpread,
  Slo,
  Goodput,
  CellSeries,
  SloMiss,
  SloVerdict,
  CapacityRow,
  RateCapacityRow,
  CellFigures,
  CellStatus,
  Distribution,
  Percentiles,
  InterTokenLatency,
  LongestGap,
  GapHistogram,
  PrefillFigures,
  ArrivalProcess,
  LengthSummary,
  PrefixCacheFigures,
  TurnFigures,
  WorkloadFigures,
  WorkloadInfo,
  RateSettings,
  RateCellStatus,
  RateFigures,
  RateCellEvidence,
  RateCellResult,
} from './result.gen.js';

/**
 * What each generated Vitest test stores in `task.meta.speedMatrix`. Cell and prefill metas may
 * carry the run info too (so a shard or a merged report without the probe test still has it);
 * a 'run' meta's info wins over theirs.
 */
export type SpeedMatrixMeta =
  | { kind: 'run'; info: Gen.RunInfo }
  | { kind: 'prefill'; row: Gen.PrefillRowResult; info?: Gen.RunInfo }
  | { kind: 'cell'; cell: Gen.CellResult; info?: Gen.RunInfo }
  /** an open-loop rate cell (matrix.rates) */
  | { kind: 'rate'; cell: Gen.RateCellResult; info?: Gen.RunInfo }
  /** a context row's capacity at the SLO, with the adaptive cells its search measured */
  | { kind: 'capacity'; row: Gen.CapacityRow; cells: Gen.CellResult[]; info?: Gen.RunInfo }
  /** a context's highest open-loop rate at the SLO, with the adaptive rate cells its search measured */
  | { kind: 'rate-capacity'; row: Gen.RateCapacityRow; cells: Gen.RateCellResult[]; info?: Gen.RunInfo };

// ---- drift guards: generated (schema) shapes ⇄ hand-written shapes ----------------------------
/** true when A and B are assignable to each other (the same JSON shape). */
export type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

export type SchemaDriftChecks = [
  Assert<MutuallyAssignable<Gen.ServerFacts, Engines.ServerFacts>>,
  Assert<MutuallyAssignable<Gen.EngineKind, Engines.EngineKind>>,
];
