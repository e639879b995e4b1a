/* eslint-disable */
/**
 * GENERATED from speed-matrix.schema.json by src/results/gen-types.ts — do not edit.
 * Change the schema, then run: npx tsx src/results/gen-types.ts
 */

/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "EngineKind".
 */
export type EngineKind = 'vllm' | 'sglang' | 'openai' | 'llamacpp' | 'tgi' | 'trtllm' | 'ollama';
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CellStatus".
 */
export type CellStatus =
  'valid' | 'over-capacity' | 'requests-queued' | 'warmup-timed-out' | 'errors' | 'client-limited';

/**
 * One speed-matrix run: server facts, settings, prefill rows and sustained-decode cells (speed-matrix.json). Source of truth for src/results/speed-matrix.gen.ts; figures are defined in the README's method section.
 */
export interface SpeedMatrixResult {
  /**
   * bumped on any incompatible change
   */
  schemaVersion: 1;
  info: RunInfo;
  /**
   * ordered by context
   */
  prefill: PrefillRowResult[];
  /**
   * ordered by context, then concurrency
   */
  cells: CellResult[];
  /**
   * ISO time the run ended
   */
  endedAt?: string;
  /**
   * true while the run is still going (a partial page)
   */
  partial: boolean;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "RunInfo".
 */
export interface RunInfo {
  /**
   * <model> on <GPU> ×<count>
   */
  title: string;
  /**
   * true when the target was the embedded simulated server
   */
  simulated: boolean;
  simProfile?: string;
  /**
   * target URL with credentials removed
   */
  targetUrl: string;
  /**
   * ISO time
   */
  startedAt: string;
  hardware: HardwareInfo;
  engine: EngineInfo;
  run: RunSettings;
  server: ServerFacts;
  /**
   * launch command, secrets redacted
   */
  launchCommand?: string;
  /**
   * cell keys (<contextLabel>/<concurrency>) the run will produce, over-capacity ones included
   */
  plannedCells?: string[];
  /**
   * context labels of the prefill rows the run will produce
   */
  plannedPrefill?: string[];
  /**
   * threshold file of this target (rewritten by the reporter under -u)
   */
  thresholdsPath?: string;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "HardwareInfo".
 */
export interface HardwareInfo {
  /**
   * e.g. Discrete GPU
   */
  type?: string;
  gpu?: string;
  gpuCount?: number;
  vram?: string;
  cpu?: string;
  ram?: string;
  os?: string;
  /**
   * where the values came from: config, detected (nvidia-smi), simulated
   */
  source: string;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "EngineInfo".
 */
export interface EngineInfo {
  engine: string;
  version?: string;
  quantization?: string;
  backend?: string;
  repository?: string;
  build?: string;
  commit?: string;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "RunSettings".
 */
export interface RunSettings {
  servedModel: string;
  revision?: string;
  tool: {
    name: string;
    version: string;
  };
  decodeTest: 'fixed-duration';
  prefillMode: 'measured-during-decode-warm-up' | 'separate';
  /**
   * window length per cell, seconds
   */
  windowS: number;
  maxOutputTokens: number;
  endpoint: 'chat' | 'completions';
  /**
   * target prompt tokens per row
   */
  contexts: number[];
  concurrency: number[];
  prefillContexts: number[];
}
/**
 * what the probe found, each value with where it came from
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "ServerFacts".
 */
export interface ServerFacts {
  engine: SourcedEngineKind;
  version?: SourcedString;
  model: SourcedString;
  maxModelLen?: SourcedNumber;
  kvCapacityTokens?: SourcedNumber;
  maxRunningRequests?: SourcedNumber;
  metricsPath?: string;
  tokenizePath?: string;
  launchArgs?: SourcedRecord;
  blockSize?: SourcedNumber;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "SourcedEngineKind".
 */
export interface SourcedEngineKind {
  value: EngineKind;
  source: string;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "SourcedString".
 */
export interface SourcedString {
  value: string;
  source: string;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "SourcedNumber".
 */
export interface SourcedNumber {
  value: number;
  source: string;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "SourcedRecord".
 */
export interface SourcedRecord {
  value: {
    [k: string]: unknown | undefined;
  };
  source: string;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "PrefillRowResult".
 */
export interface PrefillRowResult {
  /**
   * target tokens, e.g. 8192
   */
  context: number;
  /**
   * e.g. 8K
   */
  contextLabel: string;
  status: 'valid' | 'errors' | 'over-capacity';
  figures?: PrefillFigures;
  error?: string;
  finishedAt: string;
  /**
   * threshold verdicts, filled by the prefill test
   */
  thresholdFailures?: string[];
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "PrefillFigures".
 */
export interface PrefillFigures {
  promptTokens: number;
  ttftMs: number;
  /**
   * promptTokens / (ttftMs / 1000)
   */
  promptTokensPerSecond: number;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CellResult".
 */
export interface CellResult {
  context: number;
  contextLabel: string;
  concurrency: number;
  status: CellStatus;
  /**
   * every status that applied (e.g. queued + errors)
   */
  statuses: CellStatus[];
  evidence: CellEvidence;
  figures?: CellFigures;
  /**
   * event-loop delay of the load generator during the window
   */
  clientEventLoopDelayMs?: {
    p50: number;
    p99: number;
    max: number;
  };
  /**
   * the cell's prompt as the server counted it
   */
  promptTokens?: number;
  finishedAt: string;
  /**
   * threshold verdicts, filled by the cell test
   */
  thresholdFailures?: string[];
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CellEvidence".
 */
export interface CellEvidence {
  /**
   * Over capacity: C × (context + max output) vs KV capacity
   */
  capacity?: {
    requiredTokens: number;
    kvCapacityTokens: number;
  };
  /**
   * Requests queued: the samples that showed it
   */
  queued?: {
    maxWaiting?: number;
    meanRunning?: number;
    concurrency: number;
  };
  warmupTimedOut?: {
    phase: 'drain' | 'gate';
    waitedMs: number;
  };
  errors?: {
    count: number;
    byCode: {
      [k: string]: number | undefined;
    };
    firstMessage?: string;
  };
  clientLimited?: {
    eventLoopDelayP99Ms: number;
    boundMs: number;
  };
  activeDisagreement?: {
    server: number;
    client: number;
  };
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CellFigures".
 */
export interface CellFigures {
  /**
   * output tokens whose arrival time is inside the window
   */
  outputTokens: number;
  tokenSource: 'usage' | 'chunk-token-ids' | 'chunks';
  /**
   * observed window length
   */
  measuredForS: number;
  /**
   * outputTokens / measuredForS
   */
  totalTokensPerSecond: number;
  /**
   * median over requests of 1000 / request's mean time between tokens
   */
  perRequestTokensPerSecond?: number;
  timeBetweenTokensMs?: Distribution;
  ttftMs?: Distribution;
  /**
   * mean of the server's running-requests metric inside the window
   */
  serverActiveRequests?: number;
  /**
   * client's time-weighted in-flight request count over the window
   */
  clientActiveRequests: number;
  /**
   * the one shown as Average active requests: server when available, else client
   */
  averageActiveRequests: number;
  averageActiveRequestsSource: 'server' | 'client';
  /**
   * server and client active counts differ by more than 10 %
   */
  activeRequestsDisagree: boolean;
  /**
   * max of the server's waiting-requests metric inside the window
   */
  maxWaitingRequests?: number;
  completedRequests: number;
  failedRequests: number;
  /**
   * requests started by the cell's workers (scout excluded)
   */
  startedRequests: number;
  /**
   * server-reported prompt tokens of the cell's requests (median)
   */
  promptTokens?: number;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "Distribution".
 */
export interface Distribution {
  median: number;
  p90: number;
  p99: number;
  samples: number;
}
