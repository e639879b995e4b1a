/* eslint-disable */
/**
 * GENERATED from speed-matrix.schema.json by src/results/gen-types.ts — do not edit.
 * Change the schema, then run: npx tsx src/results/gen-types.ts
 */

/**
 * how requests arrive: constant (every 1/rate s), poisson (exponential gaps), gamma:b (gamma gaps of shape b and mean 1/rate, coefficient of variation 1/sqrt(b): vLLM bench serve's burstiness)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "ArrivalProcess".
 */
export type ArrivalProcess = string;
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "EngineKind".
 */
export type EngineKind = 'vllm' | 'sglang' | 'openai' | 'llamacpp' | 'tgi' | 'trtllm' | 'ollama';
/**
 * not-run: the cell could not start (notRunReason says why: the server was unreachable, its tokenizer failed); stream-buffered: the chunks arrived in bursts no engine produces (a proxy buffered the stream), so TTFT and time between tokens are the proxy's
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CellStatus".
 */
export type CellStatus =
  | 'valid'
  | 'over-capacity'
  | 'requests-queued'
  | 'warmup-timed-out'
  | 'errors'
  | 'client-limited'
  | 'stream-buffered'
  | 'not-run';
/**
 * saturated: the requests in the system grew through the window (the server could not keep up; evidence.saturation); over-capacity: the KV cache cannot hold what Little's law puts in flight (not run); client-limited: the client could not send on time (dispatch delay p99 over its bound, or the in-flight ceiling held requests back) or time its tokens (its self-check over the decode cells' bounds; evidence.clientLimited.causes); not-run: not measured (notRunReason says why)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "RateCellStatus".
 */
export type RateCellStatus =
  'valid' | 'saturated' | 'over-capacity' | 'client-limited' | 'errors' | 'not-run';

/**
 * One speed-matrix run: server facts, settings, prefill rows and sustained-decode cells (speed-matrix.json). Source of truth for src/shapes/result.gen.ts; figures are defined in docs/method.md.
 */
export interface SpeedMatrixResult {
  /**
   * bumped on any incompatible change. 2: open-loop rate cells (rateCells, RunSettings.rates); a version-1 file reads as version 2 without them (compare/load.ts)
   */
  schemaVersion: 2;
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
   * open-loop rate cells (matrix.rates), ordered by context, then rate; absent when the run had none
   */
  rateCells?: RateCellResult[];
  /**
   * ISO time the run ended
   */
  endedAt?: string;
  /**
   * true while the run is still going (a partial page)
   */
  partial: boolean;
  /**
   * capacity at the SLO per context (runs with an SLO)
   */
  capacity?: {
    rows: CapacityRow[];
  };
  /**
   * the highest open-loop rate that meets the SLO per context (runs with an SLO and matrix.rates)
   */
  rateCapacity?: {
    rows: RateCapacityRow[];
  };
  /**
   * why a finished run's page lacks planned cells; absent when nothing is missing
   */
  incomplete?: {
    /**
     * planned cells that could not start, with why
     */
    notRun: {
      key: string;
      reason: string;
    }[];
    /**
     * planned cells and prefill rows (prefill <label>) with no result: the run stopped or was filtered before them
     */
    missing: string[];
  };
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
   * the planned cells the plan found Over capacity before the run (not run: no window), for the progress lines' time left; absent when none
   */
  plannedOverCapacity?: string[];
  /**
   * context labels of the prefill rows the run will produce
   */
  plannedPrefill?: string[];
  /**
   * threshold file of this target (rewritten by the reporter under -u)
   */
  thresholdsPath?: string;
  /**
   * result file the cells were compared with (LLM_BENCH_BASELINE)
   */
  baselinePath?: string;
  /**
   * this run continued a partial run: its finished cells and rows were kept (resumed: true), the rest measured
   */
  resumedFrom?: {
    /**
     * the partial result this run continued (LLM_BENCH_RESUME)
     */
    path: string;
    /**
     * when that run started
     */
    startedAt: string;
  };
  /**
   * simulator profile parameters overridden for this run (LLM_BENCH_SIM_OVERRIDES)
   */
  simOverrides?: {
    [k: string]: unknown | undefined;
  };
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
  /**
   * how the engine was chosen: the detection evidence, or that the config set it
   */
  detectedBy?: string;
  /**
   * set when detection was unsure or fell back to the generic adapter
   */
  detectionNote?: string;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "RunSettings".
 */
export interface RunSettings {
  slo?: Slo;
  /**
   * the all-measurements table's columns after METHOD.md's set, in order (LLM_BENCH_COLUMNS); absent: METHOD's set alone
   */
  columns?: ('ttft' | 'tbt' | 'itl' | 'maxGap' | 'tpot' | 'e2e' | 'requestsPerSecond')[];
  /**
   * LLM_BENCH_PERCENTILES, ascending: each latency distribution (TTFT, TBT, ITL, TPOT, E2E) reports these in its percentiles beside METHOD's median, p90 and p99, and the all-measurements table's latency columns show them; absent: METHOD's quantiles alone
   *
   * @minItems 1
   * @maxItems 10
   */
  percentiles?:
    | [number]
    | [number, number]
    | [number, number, number]
    | [number, number, number, number]
    | [number, number, number, number, number]
    | [number, number, number, number, number, number]
    | [number, number, number, number, number, number, number]
    | [number, number, number, number, number, number, number, number]
    | [number, number, number, number, number, number, number, number, number]
    | [number, number, number, number, number, number, number, number, number, number];
  servedModel: string;
  revision?: string;
  tool: {
    name: string;
    version: string;
  };
  decodeTest: 'fixed-duration';
  /**
   * measured-during-decode-warm-up: every prefill context is also a decode row, whose cache its cold request warms; separate: none is; mixed: some are (each row says, warmsDecodeRow)
   */
  prefillMode: 'measured-during-decode-warm-up' | 'separate' | 'mixed';
  /**
   * window length per cell, seconds
   */
  windowS: number;
  maxOutputTokens: number;
  endpoint: 'chat' | 'completions';
  /**
   * where the TTFT clock starts: when the request headers were written to the socket (undici:client:sendHeaders), or when the request was handed to the client
   */
  ttftStart?: 'request-written' | 'request-sent';
  /**
   * target prompt tokens per row
   */
  contexts: number[];
  concurrency: number[];
  prefillContexts: number[];
  /**
   * times each cell and prefill row was measured (LLM_BENCH_REPEAT); figures are the medians; absent = 1
   */
  repeat?: number;
  /**
   * false when the engine cannot force the output length (no ignore_eos: TGI, Ollama): requests may stop early and the figures count what was produced; absent = forced
   */
  outputLengthForced?: boolean;
  rates?: RateSettings;
  workload?: WorkloadInfo;
}
/**
 * the run's service-level objective (LLM_BENCH_SLO or the suite's slo): what a cell must meet to count toward capacity, and what each request is judged on for goodput
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "Slo".
 */
export interface Slo {
  /**
   * canonical form, e.g. perRequest>=20,ttftP90<=2000,tbtP99<=100,itlP99<=200,maxGapMs<=2000,errors<=0
   */
  text: string;
  perRequestTokensPerSecond?: {
    /**
     * median, or a low quantile of the requests' tok/s (p10: 90 % of requests at least this fast)
     */
    stat: 'median' | 'p10' | 'p1';
    min: number;
  };
  ttftMs?: {
    stat: 'median' | 'p90' | 'p99';
    max: number;
  };
  timeBetweenTokensMs?: {
    stat: 'median' | 'p90' | 'p99';
    max: number;
  };
  /**
   * the cell's inter-token latency over every gap (CellFigures.interTokenLatencyMs), judged on the cell, not on each request
   */
  interTokenLatencyMs?: {
    stat: 'median' | 'p90' | 'p95' | 'p99';
    max: number;
  };
  /**
   * the cell's longest gap between two tokens of one request, or a silence still running at the window's end (CellFigures.longestGap.ms), judged on the cell
   */
  maxGapMs?: {
    max: number;
  };
  failedRequests?: {
    max: number;
  };
  goodput?: {
    /**
     * share of the cell's requests
     */
    min: number;
  };
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "RateSettings".
 */
export interface RateSettings {
  /**
   * offered rates, requests/s, one rate cell per context and rate
   */
  rates: number[];
  arrival: ArrivalProcess;
  /**
   * seed of every schedule (a cell's own seed derives from it, its context and its rate)
   */
  seed: number;
  /**
   * linear ramp-up before each window, seconds (0: none); ramp requests are sent and lie outside the window
   */
  rampS: number;
  /**
   * the client's ceiling on requests in flight; a due request that finds it reached waits (counted)
   */
  maxInFlight: number;
  /**
   * a sweep (rates 'sweep'): per context, points rates spread evenly from the synchronous rate (the decode cell at concurrency 1's completed requests/s) to the throughput limit (the highest over the context's decode cells), rounded to 3 significant digits; rates is then []
   */
  sweep?: {
    points: number;
  };
}
/**
 * the run's workload; absent = synthetic (files written before issue 23)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "WorkloadInfo".
 */
export interface WorkloadInfo {
  kind: 'synthetic' | 'file' | 'lengths' | 'sharedPrefix' | 'multiTurn';
  /**
   * canonical text, every parameter and the seed written (what compare, the baseline gate and threshold files compare)
   */
  text: string;
  file?: {
    /**
     * the file's name (no folder)
     */
    name: string;
    sha256: string;
    /**
     * prompt lines in the file
     */
    lines: number;
    /**
     * lines that can be sent
     */
    used: number;
    /**
     * lines skipped: prompt + output longer than the server's max model length
     */
    skipped: number;
    /**
     * lines without an output length of their own whose max_tokens is their reply's token count (ShareGPT's gpt turn, a messages line's trailing answer), as vLLM's ShareGPT loader sizes them; needs a counter
     */
    outputFromReplies?: number;
  };
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
  /**
   * the context is also a decode row: this cold request warms that row's prompt cache
   */
  warmsDecodeRow?: boolean;
  /**
   * taken from the partial run LLM_BENCH_RESUME named, not measured again
   */
  resumed?: boolean;
  calibration?: PromptCalibration;
  figures?: PrefillFigures;
  error?: string;
  finishedAt: string;
  /**
   * threshold verdicts, filled by the prefill test
   */
  thresholdFailures?: string[];
  /**
   * regressions against the baseline (LLM_BENCH_BASELINE), filled by the prefill test
   */
  baselineFailures?: string[];
  repeats?: PrefillRepeats;
}
/**
 * how the row's prompt was sized (METHOD.md run sequence 2)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "PromptCalibration".
 */
export interface PromptCalibration {
  /**
   * exact: through the server's tokenizer; estimated: from usage.prompt_tokens of probe requests (no tokenizer)
   */
  mode: 'exact' | 'estimated';
  /**
   * the token count aimed at (the context, trimmed to fit the max model length)
   */
  targetTokens: number;
  /**
   * max(64, 0.5 % of the target)
   */
  toleranceTokens: number;
  /**
   * the server-counted prompt landed within the tolerance of the target
   */
  withinTolerance: boolean;
  /**
   * what counted the prompt tokens: the server's tokenize endpoint, its usage.prompt_tokens (estimated mode), or the local tokenizer (target.tokenizer / LLM_BENCH_TOKENIZER)
   */
  countedBy?: 'tokenize-endpoint' | 'server-usage' | 'local-tokenizer';
  /**
   * local tokenizer: the chat template's tokens (server usage.prompt_tokens of the shortest prompt minus its local count), added to the content's count; absent: the content alone was counted
   */
  templateTokens?: number;
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
  /**
   * set when the server reported no usage.prompt_tokens: promptTokens is the local tokenizer's count of the prompt (LLM_BENCH_TOKENIZER; the chat template's own tokens only where calibration measured them). Absent: the server's usage.
   */
  promptTokensFrom?: 'local-tokenizer';
}
/**
 * a prefill row measured several times (LLM_BENCH_REPEAT), each time with its own cold prompt: its figures are the medians of the repeats that succeeded; the spread of the gated figures
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "PrefillRepeats".
 */
export interface PrefillRepeats {
  /**
   * requests sent
   */
  count: number;
  /**
   * requests that gave no figures (error, no first token or no prompt token count)
   */
  failed: number;
  spread: {
    promptTokensPerSecond?: FigureSpread;
    ttftMs?: FigureSpread;
  };
}
/**
 * one figure over the repeats of a cell or prefill row
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "FigureSpread".
 */
export interface FigureSpread {
  /**
   * the figure of each repeat, in run order
   */
  values: number[];
  min: number;
  max: number;
  /**
   * (max − min) / 2 / median; absent when the median is 0
   */
  relativeHalfRange?: number;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CellResult".
 */
export interface CellResult {
  goodput?: Goodput;
  slo?: SloVerdict;
  /**
   * measured by the capacity search between two matrix columns (not a planned cell of the matrix)
   */
  adaptive?: boolean;
  series?: CellSeries;
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
  clientCpu?: ClientCpu;
  /**
   * event-loop delay of the load generator during the window
   */
  clientEventLoopDelayMs?: {
    p50: number;
    p99: number;
    max: number;
  };
  clientArrivalLagMs?: ClientReadLag;
  /**
   * the cell's prompt as the server counted it
   */
  promptTokens?: number;
  calibration?: PromptCalibration;
  finishedAt: string;
  workload?: WorkloadFigures;
  /**
   * threshold verdicts, filled by the cell test
   */
  thresholdFailures?: string[];
  /**
   * regressions against the baseline (LLM_BENCH_BASELINE), filled by the cell test
   */
  baselineFailures?: string[];
  repeats?: CellRepeats;
  serverCrossCheck?: ServerCrossCheck;
  /**
   * why a not-run cell could not start
   */
  notRunReason?: string;
  /**
   * taken from the partial run LLM_BENCH_RESUME named, not measured again
   */
  resumed?: boolean;
  /**
   * how the cell's load used connections
   */
  connections?: {
    /**
     * TCP connections the cell's load clients opened (preconnect and scout included)
     */
    opened: number;
    /**
     * of opened: connections opened for a worker's next request as its stream ended (serverClosesAfterResponse) that no request took, because the window ended first; absent in results before it was counted
     */
    preparedUnused?: number;
    /**
     * requests the cell sent (scouts and workers; a resend counts once)
     */
    requests: number;
    /**
     * the server closed kept-alive connections right after a streamed response (llama.cpp does), so requests said Connection: close and each worker's next connection was opened as its stream ended
     */
    serverClosesAfterResponse: boolean;
  };
}
/**
 * the share of a cell's requests, and of its output tokens in the window, that met the SLO's per-request constraints (each request judged on its own tok/s, TTFT and TBT p99; a failed request never meets)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "Goodput".
 */
export interface Goodput {
  requests: {
    met: number;
    /**
     * requests with a first token by the window's end (and two token chunks in it when a speed constraint is set), plus failed ones
     */
    judged: number;
    share: number;
  };
  tokens: {
    met: number;
    /**
     * output tokens in the window
     */
    total: number;
    share: number;
  };
}
/**
 * the cell against the run's SLO; binding: the miss furthest past its bound (relative), absent when the cell meets it
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "SloVerdict".
 */
export interface SloVerdict {
  meets: boolean;
  misses: SloMiss[];
  binding?: SloMiss;
}
/**
 * one SLO constraint a cell did not meet
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "SloMiss".
 */
export interface SloMiss {
  /**
   * kvCapacity: the cell is Over capacity; unmeasured: the cell has no figures to judge (not run, Client-limited); saturated: an open-loop rate cell was Saturated (its queue grew through the window, so it misses any latency SLO given time)
   */
  constraint:
    | 'perRequestTokensPerSecond'
    | 'ttftMs'
    | 'timeBetweenTokensMs'
    | 'interTokenLatencyMs'
    | 'maxGapMs'
    | 'failedRequests'
    | 'goodput'
    | 'kvCapacity'
    | 'unmeasured'
    | 'saturated';
  /**
   * e.g. TTFT p90
   */
  label: string;
  /**
   * the cell's value; absent when it has none
   */
  value?: number;
  bound?: number;
  /**
   * e.g. TTFT p90 2,340 ms > 2,000 ms
   */
  detail: string;
}
/**
 * what the HTML report draws for one cell (its last repeat): the server's metrics sampled in the window, and each request's mean time between tokens
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CellSeries".
 */
export interface CellSeries {
  /**
   * server metric samples from the window's start to its end; a metric the server does not report is absent
   */
  metrics?: {
    /**
     * seconds since the window opened
     */
    atS: number[];
    running?: (number | null)[];
    waiting?: (number | null)[];
    /**
     * KV-cache usage, 0..1
     */
    kvUsage?: (number | null)[];
  };
  /**
   * each request's mean time between tokens in the window (ms), the values the cell's TBT figures are quantiles of
   */
  requestTbtMs: number[];
  gapHistogram?: GapHistogram;
}
/**
 * the cell's inter-token gaps counted in fixed log-spaced bins: counts[0] below edgesMs[0], counts[i] in [edgesMs[i-1], edgesMs[i]), the last at or above the last edge (its size does not grow with the token count)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "GapHistogram".
 */
export interface GapHistogram {
  edgesMs: number[];
  counts: number[];
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CellEvidence".
 */
export interface CellEvidence {
  /**
   * the cell's streams arrived bunched (src/metrics/bunching.ts): the share of gaps between a request's chunks under 0.5 ms or a quarter of the request's own rhythm (its mean gap without its longest, at most 2 ms), and the tokens per burst
   */
  streamBuffered?: {
    gaps: number;
    zeroGapShare: number;
    burstTokens: {
      median: number;
      p90: number;
      p99: number;
      max: number;
      bursts: number;
    };
    oneBurstRequests: number;
    requests: number;
  };
  /**
   * the server (or a gateway) accepted requests and answered nothing: no response headers at all (an engine streams them before the first token, even for a queued request)
   */
  noResponse?: {
    /**
     * requests in flight in the window that got no response headers in 5 s or more
     */
    requests: number;
    /**
     * requests in flight in the window
     */
    of: number;
    longestWaitS: number;
  };
  /**
   * the median TTFT is longer than the window: the window holds mostly waiting, its TTFT comes from few first tokens, and its total tok/s from streams that started before it; a window longer than the TTFT measures the steady state
   */
  windowShorterThanTtft?: {
    ttftMedianMs: number;
    windowS: number;
    /**
     * first tokens inside the window: the TTFT figures rest on these
     */
    ttftSamples: number;
  };
  /**
   * the server ignored max_tokens: requests streamed past the cap the run asked for (counted as streamed; the output lengths are not the run's)
   */
  maxTokensIgnored?: {
    /**
     * requests that streamed more tokens than their max_tokens
     */
    requests: number;
    /**
     * requests that asked for a max_tokens and streamed a token
     */
    of: number;
    /**
     * the request that ran furthest past its cap
     */
    example: {
      tokens: number;
      asked: number;
    };
  };
  /**
   * metric samples that could not be taken, left out of Average active and the Requests-queued rule (their counters kept): the server's figures are over the rest, or the client's own where none is left
   */
  metricSamplesSetAside?: {
    /**
     * samples whose scrape came back after lateOverMs
     */
    late: number;
    /**
     * samples that read 0 running while one of the client's streams was receiving tokens through the scrape
     */
    zeroWhileStreaming: number;
    /**
     * the window's samples with a running or waiting count
     */
    of: number;
    /**
     * the bound a late scrape passed: the larger of 100 ms and 4 × the window's usual scrape
     */
    lateOverMs: number;
  };
  /**
   * the server's final usage disagrees with the streamed tokens; the counts come from the stream (its text with a local tokenizer, token ids, or chunks)
   */
  usageDisagrees?: {
    /**
     * requests whose final usage.completion_tokens differs from the counted tokens by more than max(2, 2 %)
     */
    requests: number;
    /**
     * requests that reported a final usage.completion_tokens
     */
    of: number;
    /**
     * the same usage.completion_tokens over requests of different counted lengths
     */
    constant: boolean;
    example: {
      usage: number;
      counted: number;
    };
  };
  /**
   * Over capacity: C × (context + max output) vs KV capacity
   */
  capacity?: {
    requiredTokens: number;
    kvCapacityTokens: number;
    /**
     * tokens one request holds: the row's context and the run's max output tokens, or where a workload sends its own lengths, its largest request's prompt and max_tokens; requiredTokens is the concurrency times this
     */
    requestTokens?: number;
  };
  /**
   * Requests queued: the samples that showed it, or the client-side evidence (source client)
   */
  queued?: {
    maxWaiting?: number;
    meanRunning?: number;
    /**
     * mean of the client's in-flight requests at the sample times
     */
    meanClientInFlight?: number;
    concurrency: number;
    /**
     * client: the server exposes neither a running nor a waiting figure, and the client's own timelines showed it (client-side evidence: meanRunning, meanWaiting, maxWaiting, peakRunning, heldAtPeakShare are the client's); absent or server: the server's samples showed it
     */
    source?: 'server' | 'client';
    /**
     * client-side: mean requests waiting for their first token
     */
    meanWaiting?: number;
    /**
     * client-side: most requests running at once (held for at least 0.5 % of the window)
     */
    peakRunning?: number;
    /**
     * client-side: share of the window the running count was at its peak (within 10 %) while a request waited
     */
    heldAtPeakShare?: number;
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
  clientLimited?: ClientLimitedEvidence;
  activeDisagreement?: {
    server: number;
    client: number;
  };
  /**
   * requests whose send on a reused keep-alive connection failed before any response byte (the server had closed it) and that were sent once more on a fresh connection; not failures, their TTFT starts at the resend
   */
  connectionRetries?: {
    /**
     * requests of the cell sent once more on a fresh connection
     */
    count: number;
    /**
     * why the first of them failed on its reused connection
     */
    firstReason?: string;
  };
  /**
   * the cell's completed requests (inside the window) by how their streams ended; present only when some ended otherwise than by a complete data: [DONE] event. Not a status: these requests are completed, not failures
   */
  streamEndings?: {
    /**
     * completed requests ended by a complete data: [DONE] event (or the engine's final chunk)
     */
    done: number;
    /**
     * completed requests without [DONE]: the body ended cleanly after a chunk with a real finish_reason
     */
    closeAfterFinish: number;
    /**
     * completed requests whose data: [DONE] had no blank line after it (maybe no line end), dispatched when the body ended cleanly
     */
    unterminatedLast: number;
  };
}
/**
 * why the client could not time the cell's tokens: its self-check against its bounds (judge/status.ts clientLimitedEvidence); on a decode cell its worst thread's, on a rate cell (evidence.clientLimited.client) each figure the worst over its threads, which may be two threads' (threads given where there were several, thread absent)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "ClientLimitedEvidence".
 */
export interface ClientLimitedEvidence {
  eventLoopDelayP99Ms: number;
  /**
   * the bound on timingErrorP99Ms (suite clientLimitedLoopDelayMs; on the loop delay alone where no read lag was measured)
   */
  boundMs: number;
  /**
   * read lag p99: how late the client handled response reads (the reads before them in their turn, plus its wait for a core before the turn where measured)
   */
  arrivalLagP99Ms?: number;
  /**
   * the client's timing error estimate p99: √(eventLoopDelayP99Ms² + arrivalLagP99Ms²)
   */
  timingErrorP99Ms?: number;
  /**
   * the load generator's CPU, cores, from the workers' start to the window's end
   */
  cpuCores?: number;
  /**
   * CPU above which the cell is Client-limited (0.9)
   */
  cpuBoundCores?: number;
  /**
   * the share of the same span that thread waited, ready to run, for a core (Linux /proc/thread-self/schedstat): other work on the machine holding it off
   */
  coreWaitShare?: number;
  /**
   * the cell's streams ran on this many client threads: on a decode cell the figures above are those of one of them (thread), on a rate cell each is the worst over them
   */
  threads?: number;
  /**
   * the thread furthest over its bounds (1-based), whose figures these are (decode cells)
   */
  thread?: number;
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
  /**
   * where output tokens came from, weakest over the window's requests: continuous usage, per-chunk token ids, the streamed text counted with the local tokenizer (target.tokenizer / LLM_BENCH_TOKENIZER), or one per chunk
   */
  tokenSource: 'usage' | 'chunk-token-ids' | 'local-tokenizer' | 'chunks';
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
  interTokenLatencyMs?: InterTokenLatency;
  longestGap?: LongestGap;
  tpotMs?: Distribution1;
  e2eLatencyMs?: Distribution2;
  /**
   * completed requests per second: completedRequests / measuredForS (vLLM's request throughput over the window)
   */
  requestsPerSecond?: number;
  /**
   * mean of the server's running-requests metric inside the window; from llama.cpp's decode counters (runningFrom decode-counters), its busy slots per decode call times the share of the window in which the client had a request in flight (a count per decode call sees no idle time); from llama.cpp's GET /slots (runningFrom slots), its busy slots sampled, every slot in a sample taken while the client had more requests in flight than the slots
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
  /**
   * where the running figure that Requests queued is judged on came from: decode-counters (llama.cpp n_decode_total × n_busy_slots_per_decode), samples (the server's running-requests metric, sampled), slots (llama.cpp GET /slots busy slots, sampled; for Requests queued a sample with a slot idle reads what the client had in flight, up to the slots), client (the server exposes no running or waiting figure: the client's own timelines); absent when the server has a waiting figure only
   */
  runningFrom?: 'decode-counters' | 'samples' | 'slots' | 'client';
  /**
   * client-side: time-weighted mean over the window of requests between their first and their last token
   */
  clientRunningRequests?: number;
  /**
   * client-side: time-weighted mean over the window of requests sent (headers written) and without a first token
   */
  clientWaitingRequests?: number;
  /**
   * client-side: most requests waiting for their first token at once inside the window
   */
  clientMaxWaitingRequests?: number;
  completedRequests: number;
  /**
   * requests of the cell that failed up to the window's end, stalls included (see stallLimitMs)
   */
  failedRequests: number;
  /**
   * why a figure is absent (the page shows the reason, never a bare dash)
   */
  notComputed?: {
    timeBetweenTokensMs?: string;
    ttftMs?: string;
  };
  /**
   * a request silent this long after its first token, inside the window, stalled and counts as failed (code stall): LLM_BENCH_STALL_S, else min(window, max(5 s, 50 × median time between tokens))
   */
  stallLimitMs?: number;
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
  percentiles?: Percentiles;
}
/**
 * the percentiles LLM_BENCH_PERCENTILES chose (info.run.percentiles), each by its name (p50, p95, p99.9), type 7 as the fixed keys beside it; absent unless the setting is given
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "Percentiles".
 */
export interface Percentiles {
  /**
   * This interface was referenced by `Percentiles`'s JSON-Schema definition
   * via the `patternProperty` "^p(100|[1-9]?[0-9](\.[0-9]+)?)$".
   */
  [k: string]: number | undefined;
}
/**
 * inter-token latency (ms) over every gap between consecutive token-carrying chunks of a request whose later chunk arrived inside the window (a gap straddling the window's start counts; the first token's wait is no gap); one gap per chunk, as vLLM's benchmark_serving counts ITL. Quantiles of type 7 (as the other distributions); max exact
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "InterTokenLatency".
 */
export interface InterTokenLatency {
  median: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
  /**
   * gaps counted
   */
  gaps: number;
  percentiles?: Percentiles;
}
/**
 * the cell's longest gap between two tokens of one request (the ITL max): which request, when its later chunk arrived, how long, and how many median gaps long
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "LongestGap".
 */
export interface LongestGap {
  /**
   * the request's X-Request-Id
   */
  requestId: string;
  /**
   * seconds from the window's start to the gap's later chunk
   */
  atS: number;
  ms: number;
  /**
   * ms / the ITL median; null when the median gap is 0 (chunks bunched on the way)
   */
  medianGaps: number | null;
  /**
   * true: a silence still running when the window closed (from the request's last token chunk to the window's end, atS), longer than every closed gap; it is no ITL gap, so ITL's max is the longest closed one
   */
  open?: boolean;
}
/**
 * time per output token after the first, vLLM's definition: over the requests completed inside the window, (end-to-end latency − TTFT) / (tokens − 1), requests of 2 or more tokens
 */
export interface Distribution1 {
  median: number;
  p90: number;
  p99: number;
  samples: number;
  percentiles?: Percentiles;
}
/**
 * end-to-end latency over the requests completed inside the window: from the TTFT start to the last token chunk (vLLM's latency)
 */
export interface Distribution2 {
  median: number;
  p90: number;
  p99: number;
  samples: number;
  percentiles?: Percentiles;
}
/**
 * the load generator's CPU during the cell (a rate cell's: from its schedule's start to the window's end)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "ClientCpu".
 */
export interface ClientCpu {
  /**
   * CPU time / wall time from the workers' start to the window's end
   */
  cores: number;
  /**
   * thread: the load generator's own thread (Linux); process: the whole process, an embedded simulator's thread included
   */
  source: 'thread' | 'process';
  /**
   * the share of the span the load generator's thread waited, ready to run, for a core (Linux /proc/thread-self/schedstat; with client threads the most any waited): other work on the machine holding it off, which makes its timestamps late however idle it is
   */
  coreWaitShare?: number;
  /**
   * the cell's streams ran on this many client threads (LLM_BENCH_CLIENT_THREADS); cores is the busiest thread's
   */
  threads?: number;
}
/**
 * how late the load generator handled response reads (read lag, ms; the worst client thread's): the reads before them in their turn of the event loop, plus the thread's wait for a core before that turn (withCoreWait), from the workers' start to the window's end
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "ClientReadLag".
 */
export interface ClientReadLag {
  reads: number;
  p50: number;
  p99: number;
  max: number;
  /**
   * the lags include the thread's wait for a core before each turn (Linux, where the kernel counts it)
   */
  withCoreWait?: boolean;
}
/**
 * what a non-synthetic workload's cell sent and what the cache did (issue 23); absent on synthetic cells
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "WorkloadFigures".
 */
export interface WorkloadFigures {
  inputTokens?: LengthSummary;
  outputTokens?: LengthSummary;
  prefixCache?: PrefixCacheFigures;
  /**
   * multi-turn: per turn, first turn first
   */
  turns?: TurnFigures[];
}
/**
 * token lengths of the requests that completed in the window, as the server counted them (usage) or the tokenizer did
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "LengthSummary".
 */
export interface LengthSummary {
  requests: number;
  mean: number;
  sd: number;
  min: number;
  p50: number;
  p90: number;
  max: number;
}
/**
 * the prefix-cache hit rate over the window (docs/workloads.md)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "PrefixCacheFigures".
 */
export interface PrefixCacheFigures {
  /**
   * hitTokens / queriedTokens over the window
   */
  hitRate: number;
  /**
   * prompt tokens served from the prefix cache
   */
  hitTokens: number;
  /**
   * prompt tokens looked up (sent)
   */
  queriedTokens: number;
  /**
   * server-counters: the server's hit and query counters (vLLM prefix_cache_hits/queries, SGLang cached_tokens/prompt_tokens, the simulator's); processed-tokens: 1 − prompt tokens the server processed / prompt tokens sent (llama.cpp); usage: the requests' usage.prompt_tokens_details.cached_tokens
   */
  source: 'server-counters' | 'processed-tokens' | 'usage';
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "TurnFigures".
 */
export interface TurnFigures {
  turn: number;
  /**
   * completed requests of this turn in the window
   */
  requests: number;
  ttftMs?: Distribution;
  /**
   * mean prompt tokens of the turn (the history so far plus the new user message)
   */
  promptTokensMean?: number;
}
/**
 * a cell measured several times (LLM_BENCH_REPEAT): its figures are the medians of the repeats; the spread of the gated figures
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CellRepeats".
 */
export interface CellRepeats {
  count: number;
  spread: {
    totalTokensPerSecond?: FigureSpread;
    perRequestTokensPerSecond?: FigureSpread;
    ttftMs?: FigureSpread;
    timeBetweenTokensMs?: FigureSpread;
  };
}
/**
 * server-reported counts and speeds stored beside the client's figures; disagree when any differs by more than the tolerance
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "ServerCrossCheck".
 */
export interface ServerCrossCheck {
  /**
   * relative tolerance, 0.1 = 10 %
   */
  tolerance: number;
  disagree: boolean;
  items: CrossCheckItem[];
}
/**
 * one figure as the server reported it beside the client's own
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CrossCheckItem".
 */
export interface CrossCheckItem {
  figure: 'outputTokensPerSecond' | 'ttftMedianMs' | 'perRequestTokensPerSecond';
  /**
   * the server's value
   */
  server: number;
  /**
   * the client's value over the same span
   */
  client: number;
  /**
   * |server − client| / client (0 when both are 0)
   */
  relativeDifference: number;
  /**
   * relativeDifference over the tolerance (for TTFT: the client median outside the server histogram's bucket widened by the tolerance)
   */
  disagree: boolean;
  /**
   * where the server value came from, e.g. Δvllm:generation_tokens_total between two scrapes
   */
  source: string;
  /**
   * length of the compared span (first to last metrics sample inside the window)
   */
  spanS?: number;
  /**
   * observations behind the server value (requests, histogram counts)
   */
  samples?: number;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "RateCellResult".
 */
export interface RateCellResult {
  context: number;
  contextLabel: string;
  /**
   * offered rate, requests/s
   */
  rate: number;
  arrival: ArrivalProcess;
  /**
   * this cell's schedule seed
   */
  seed: number;
  rampS?: number;
  status: RateCellStatus;
  statuses: RateCellStatus[];
  evidence: RateCellEvidence;
  figures?: RateFigures;
  goodput?: Goodput;
  slo?: SloVerdict;
  /**
   * measured by the rate capacity search between two configured rates (not a planned rate cell)
   */
  adaptive?: boolean;
  clientEventLoopDelayMs?: {
    p50: number;
    p99: number;
    max: number;
  };
  clientCpu?: ClientCpu;
  clientArrivalLagMs?: ClientReadLag;
  /**
   * client threads the schedule was sent from, the in-flight ceiling split into a share of lanes per thread and the requests in proportion to the lanes (request i from thread i mod N where the ceiling divides evenly) (issue 24; LLM_BENCH_CLIENT_THREADS); absent: the cell's own thread. The client figures are then the worst thread's
   */
  clientThreads?: number;
  promptTokens?: number;
  /**
   * why a not-run rate cell was not measured: it could not start (the server unreachable, its row longer than the model takes), a lower rate of its context was already Saturated, or its window held no request of its schedule
   */
  notRunReason?: string;
  thresholdFailures?: string[];
  baselineFailures?: string[];
  workload?: WorkloadFigures;
  finishedAt: string;
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "RateCellEvidence".
 */
export interface RateCellEvidence {
  /**
   * the Saturated test, always recorded for a measured cell
   */
  saturation?: {
    /**
     * one-sided Mann-Kendall p-value of an increasing trend over the block means (Saturated needs p < 0.01)
     */
    p: number;
    /**
     * growth of the requests in the system over the span tested (Sen's slope x that span: the window after its fill-up)
     */
    growth: number;
    /**
     * the growth Saturated needs: max(2, 20 % of the mean in the system)
     */
    growthBound: number;
    meanInSystem: number;
    /**
     * time-weighted mean of the requests in the system per block of the span tested (blocks at least a request's latency wide, at most 10); when not judged, 10 blocks of the whole window
     */
    blockMeans: number[];
    /**
     * where the test began, ms after the window opened: the fill-up left out (a request's latency L without queueing after the first request's scheduled time; after a ramp of R, L·min(1, L/R)). Absent in results written before it was
     */
    fromMs?: number;
    /**
     * why Saturated was not judged: fewer than 6 blocks a request's latency wide fit in the window after the fill-up; with what to change. Absent when it was judged
     */
    notJudged?: string;
  };
  overCapacity?: {
    /**
     * Little's law: rate x the service time of one request
     */
    expectedInFlight: number;
    requiredTokens: number;
    kvCapacityTokens: number;
    /**
     * tokens the mean request holds: the row's context and the run's max output tokens, or a workload's mean prompt and max_tokens; requiredTokens is the requests in flight (rounded up) times this, rounded up
     */
    requestTokens?: number;
    /**
     * the service time of one request, seconds
     */
    serviceS: number;
    /**
     * where the service time came from, e.g. the decode cell at this context and concurrency 1
     */
    serviceFrom: string;
  };
  clientLimited?: {
    dispatchDelayP99Ms: number;
    /**
     * the bound on dispatchDelayP99Ms (10 ms)
     */
    boundMs: number;
    ceilingWaited: number;
    unsent: number;
    /**
     * which of the rules marked the cell: the dispatch delay over its bound, requests held back by the in-flight ceiling (waited or never sent), the client's token timing or CPU over the decode cells' bounds (then `client` has its figures)
     *
     * @minItems 1
     */
    causes?: [
      'dispatch-delay' | 'in-flight-ceiling' | 'client-self-check',
      ...('dispatch-delay' | 'in-flight-ceiling' | 'client-self-check')[]
    ];
    client?: ClientLimitedEvidence;
  };
  errors?: {
    failed: number;
    byCode: {
      [k: string]: number | undefined;
    };
    firstMessage?: string;
  };
}
/**
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "RateFigures".
 */
export interface RateFigures {
  interTokenLatencyMs?: InterTokenLatency;
  longestGap?: LongestGap;
  /**
   * requests scheduled inside the window / window, requests/s
   */
  offeredRate: number;
  /**
   * requests sent inside the window / window, requests/s
   */
  sentRate: number;
  /**
   * requests that ended normally inside the window / window, requests/s (the achieved rate)
   */
  completedRate: number;
  /**
   * output tokens that arrived inside the window / window (as for a decode cell)
   */
  totalTokensPerSecond: number;
  perRequestTokensPerSecond?: Distribution3;
  ttftFromScheduleMs?: Distribution4;
  ttftFromSendMs?: Distribution5;
  e2eFromScheduleMs?: Distribution6;
  e2eFromSendMs?: Distribution7;
  tbtMs?: Distribution8;
  dispatchDelayMs?: Distribution9;
  outputTokens: number;
  /**
   * requests scheduled inside the window
   */
  scheduled: number;
  sent: number;
  completed: number;
  failedRequests: number;
  /**
   * requests due before the window closed that the in-flight ceiling kept from being sent
   */
  unsent: number;
  /**
   * requests that waited for the in-flight ceiling before being sent
   */
  ceilingWaited: number;
  /**
   * requests scheduled and not yet ended (time-weighted mean, and the most at once) over the window
   */
  inSystem: {
    mean: number;
    max: number;
  };
  /**
   * the server's waiting requests over the window's metrics samples, where it has metrics
   */
  serverWaiting?: {
    mean: number;
    max: number;
  };
}
/**
 * per completed request with 2 or more tokens: 1000 / its mean time between tokens
 */
export interface Distribution3 {
  median: number;
  p90: number;
  p99: number;
  samples: number;
  percentiles?: Percentiles;
}
/**
 * first token − scheduled time, per request scheduled in the window that got a token
 */
export interface Distribution4 {
  median: number;
  p90: number;
  p99: number;
  samples: number;
  percentiles?: Percentiles;
}
/**
 * first token − send, same requests
 */
export interface Distribution5 {
  median: number;
  p90: number;
  p99: number;
  samples: number;
  percentiles?: Percentiles;
}
/**
 * last token − scheduled time, per request scheduled in the window that completed
 */
export interface Distribution6 {
  median: number;
  p90: number;
  p99: number;
  samples: number;
  percentiles?: Percentiles;
}
/**
 * last token − send, same requests
 */
export interface Distribution7 {
  median: number;
  p90: number;
  p99: number;
  samples: number;
  percentiles?: Percentiles;
}
/**
 * per completed request, its mean time between tokens
 */
export interface Distribution8 {
  median: number;
  p90: number;
  p99: number;
  samples: number;
  percentiles?: Percentiles;
}
/**
 * send − scheduled time, per request scheduled in the window and sent
 */
export interface Distribution9 {
  median: number;
  p90: number;
  p99: number;
  samples: number;
  percentiles?: Percentiles;
}
/**
 * how many simultaneous requests one context row holds at the SLO; binding: the constraint the first failing cell (bindingConcurrency) missed by most; goodput: at the capacity (its cell)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "CapacityRow".
 */
export interface CapacityRow {
  context: number;
  contextLabel: string;
  /**
   * the largest concurrency whose cell met the SLO, below the first that did not (0: not even 1; with a binding whose constraint is unmeasured, the lowest concurrency could not be judged and pages say not found)
   */
  capacity: number;
  /**
   * true when every column measured met the SLO: capacity is at least this (the largest column), not a measured limit
   */
  atLeast: boolean;
  binding?: SloMiss;
  /**
   * the concurrency of that first failing cell
   */
  bindingConcurrency?: number;
  goodput?: Goodput;
  /**
   * every concurrency judged for this row, in ascending order: the matrix columns and the adaptive cells
   */
  searched: {
    concurrency: number;
    meets: boolean;
    adaptive: boolean;
  }[];
  /**
   * cells measured by the search (bisection and confirmation)
   */
  adaptiveCells: number;
  /**
   * the search stops when the gap between passing and failing is at most this: max(1, 5 % of the passing concurrency)
   */
  resolution: number;
  /**
   * the final measured cell at the capacity; a capacity whose confirmation failed is shown as unconfirmed
   */
  confirmation?: {
    concurrency: number;
    meets: boolean;
    binding?: SloMiss;
  };
  thresholdFailures?: string[];
  baselineFailures?: string[];
}
/**
 * the highest open-loop rate one context holds at the SLO; binding: the constraint the first failing rate cell (bindingRate) missed by most; goodput: at the capacity (its cell)
 *
 * This interface was referenced by `SpeedMatrixResult`'s JSON-Schema
 * via the `definition` "RateCapacityRow".
 */
export interface RateCapacityRow {
  context: number;
  contextLabel: string;
  /**
   * the highest rate (requests/s) whose cell met the SLO, below the first that did not (0: not even the lowest rate; with a binding whose constraint is unmeasured, the lowest rate could not be judged and pages say not found)
   */
  capacity: number;
  /**
   * true when every rate measured met the SLO: the capacity is at least this (the highest rate), not a measured limit
   */
  atLeast: boolean;
  binding?: SloMiss;
  /**
   * the rate of that first failing cell, requests/s
   */
  bindingRate?: number;
  goodput?: Goodput;
  /**
   * every rate judged for this context, ascending: the configured rates and the adaptive cells
   */
  searched: {
    rate: number;
    meets: boolean;
    adaptive: boolean;
  }[];
  /**
   * rate cells measured by the search (bisection and confirmation)
   */
  adaptiveCells: number;
  /**
   * the search stops when the gap between passing and failing rates is at most this: 5 % of the passing rate, requests/s
   */
  resolution: number;
  /**
   * the final measured rate cell at the capacity; a capacity whose confirmation failed is shown as unconfirmed
   */
  confirmation?: {
    rate: number;
    meets: boolean;
    binding?: SloMiss;
  };
  thresholdFailures?: string[];
  baselineFailures?: string[];
}
