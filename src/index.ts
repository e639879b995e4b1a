/**
 * Public surface of llm-speed-matrix: named exports only.
 */
export { defineSpeedMatrix, type DefineOptions } from './matrix/define.js';
export type {
  SuiteInput,
  TargetInput,
  MatrixInput,
  TimeoutsInput,
  HardwareInput,
  EngineInfoInput,
  SloInput,
  MinBoundInput,
  MaxBoundInput,
  WorkloadObject,
  SyntheticWorkloadInput,
  FileWorkloadInput,
  LengthsWorkloadInput,
  SharedPrefixWorkloadInput,
  MultiTurnWorkloadInput,
} from './config/suite-input.js';
export type { RowGroup } from './matrix/groups.js';
export { resolveSuite, type ResolvedSuite } from './config/resolve.js';
export { SpeedMatrixError } from './errors.js';
export { CellFailure, ConfigError } from './errors.js';
export { ThresholdsError } from './thresholds/load.js';
export { ProbeError } from './engines/openai.js';
export { HttpCallError } from './engines/http.js';
export { ClientError } from './client/errors.js';
export { startSim, SIM_PROFILES, getSimProfile, type SimOptions, type SimHandle } from './sim/index.js';
export { streamRequest } from './client/stream.js';
export { createWorkerDispatchers } from './client/pool.js';
export { computeCellFigures } from './metrics/figures.js';
export { detectEngine, getAdapter } from './engines/detect.js';
export { runCell } from './load/cell.js';
export type { CellFigures, PrefillFigures, CellStatus } from './shapes/result.js';
export type { SpeedMatrixResult, CellResult, PrefillRowResult, RunInfo } from './shapes/result.js';
export { contextLabel, parseContext, cellKey } from './shapes/labels.js';
export { redactSecrets } from './redact.js';
export { detectLocalHardware, isLocalTarget } from './meta/hardware.js';
export { compareResults } from './judge/compare.js';
