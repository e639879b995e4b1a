/**
 * DRAFT contract of the speed-matrix result (the JSON file and the Vitest task meta).
 * The JSON Schema in src/results/speed-matrix.schema.json becomes the source of truth; the
 * types here are then generated from it (src/results/speed-matrix.gen.ts) and this file
 * re-exports them under these names.
 */
import type { CellFigures, CellStatus, PrefillFigures } from '../metrics/types.js';
import type { ServerFacts } from '../engines/types.js';

export interface HardwareInfo {
  type?: string; // "Discrete GPU"
  gpu?: string;
  gpuCount?: number;
  vram?: string;
  cpu?: string;
  ram?: string;
  os?: string;
  /** where the values came from: "config", "detected (nvidia-smi)", "simulated" */
  source: string;
}

export interface EngineInfo {
  engine: string;
  version?: string;
  quantization?: string;
  backend?: string;
  repository?: string;
  build?: string;
  commit?: string;
}

export interface RunSettings {
  servedModel: string;
  revision?: string;
  tool: { name: string; version: string };
  decodeTest: 'fixed-duration';
  prefillMode: 'measured-during-decode-warm-up' | 'separate';
  windowS: number;
  maxOutputTokens: number;
  endpoint: 'chat' | 'completions';
  contexts: number[];
  concurrency: number[];
  prefillContexts: number[];
}

export interface RunInfo {
  title: string; // "<model> on <GPU> ×<count>"
  /** true when the target was the embedded simulated server */
  simulated: boolean;
  simProfile?: string;
  /** target URL with credentials removed */
  targetUrl: string;
  startedAt: string; // ISO
  hardware: HardwareInfo;
  engine: EngineInfo;
  run: RunSettings;
  server: ServerFacts;
  /** launch command, secrets redacted */
  launchCommand?: string;
}

export interface PrefillRowResult {
  context: number; // target tokens, e.g. 8192
  contextLabel: string; // "8K"
  status: 'valid' | 'errors' | 'over-capacity';
  figures?: PrefillFigures;
  error?: string;
  finishedAt: string;
}

export interface CellEvidence {
  /** Over capacity: C × (context + max output) vs KV capacity */
  capacity?: { requiredTokens: number; kvCapacityTokens: number };
  /** Requests queued: the samples that showed it */
  queued?: { maxWaiting?: number; meanRunning?: number; concurrency: number };
  warmupTimedOut?: { phase: 'drain' | 'gate'; waitedMs: number };
  errors?: { count: number; byCode: Record<string, number>; firstMessage?: string };
  clientLimited?: { eventLoopDelayP99Ms: number; boundMs: number };
  activeDisagreement?: { server: number; client: number };
}

export interface CellResult {
  context: number;
  contextLabel: string;
  concurrency: number;
  /** main status; `statuses` lists every one that applied (e.g. queued + errors) */
  status: CellStatus;
  statuses: CellStatus[];
  evidence: CellEvidence;
  /** absent for cells not run (Over capacity) */
  figures?: CellFigures;
  /** event-loop delay of the load generator during the window */
  clientEventLoopDelayMs?: { p50: number; p99: number; max: number };
  /** the cell's prompt as the server counted it */
  promptTokens?: number;
  finishedAt: string;
  /** threshold verdicts, filled by the cell test */
  thresholdFailures?: string[];
}

export interface SpeedMatrixResult {
  schemaVersion: 1;
  info: RunInfo;
  prefill: PrefillRowResult[];
  cells: CellResult[];
  endedAt?: string;
  /** true while the run is still going (a partial page) */
  partial: boolean;
}

/** What each generated Vitest test stores in `task.meta.speedMatrix`. */
export type SpeedMatrixMeta =
  | { kind: 'run'; info: RunInfo }
  | { kind: 'prefill'; row: PrefillRowResult }
  | { kind: 'cell'; cell: CellResult };

declare module 'vitest' {
  interface TaskMeta {
    speedMatrix?: SpeedMatrixMeta;
  }
}
