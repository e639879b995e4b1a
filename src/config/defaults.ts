/**
 * The embedded simulator's profiles by name (src/sim/profiles.ts SIM_PROFILES is keyed by exactly
 * these, so the two cannot drift): resolve.ts checks a chosen profile against them, before a run starts.
 */
export const SIM_PROFILE_NAMES = ['tiny', 'sglang-h200', 'vllm-arc-b65x4', 'bare'] as const;
export type SimProfileName = (typeof SIM_PROFILE_NAMES)[number];

/**
 * The longest a timer may wait (Node's setTimeout: 2^31 − 1 ms, about 24.8 days). A longer delay
 * fires after 1 ms instead, with only a warning, so every duration a user gives is checked against
 * this and every timeout computed from them is capped at it.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** A time limit as a timer can wait it: a longer one (an hour's windows, many repeats, a capacity search) is capped, not a timer that fires at once. */
export function timerLimitMs(ms: number): number {
  return Math.min(ms, MAX_TIMER_MS);
}

/** the longest window a cell may have, seconds (the suite's matrix.windowS, LLM_BENCH_DURATION_S) */
export const MAX_WINDOW_S = 3600;

/**
 * the shortest window a cell may have, seconds: the server's running and waiting counts are sampled
 * about once a second (METHOD.md), so a shorter window has none of them, and its few tokens make
 * no rate (a 0.01 s window read Valid cells of one token)
 */
export const MIN_WINDOW_S = 1;

/**
 * The smallest output cap a cell can use: a request of one output token has no time between tokens
 * and no per-request decode rate (METHOD.md measures those from the second token on); prompt speed
 * alone is what the prefill rows measure.
 */
export const MIN_OUTPUT_TOKENS = 2;
export const MIN_OUTPUT_TOKENS_WHY = 'a request of one output token has no time between tokens and no per-request tok/s (prompt speed alone is what the prefill rows measure)';

/** the longest wait a user may give (timeouts, LLM_BENCH_STALL_S, LLM_BENCH_RETRY_S): a day, well within MAX_TIMER_MS */
export const DAY_MS = 86_400_000;

/** Every default of a run, named once. */
export const DEFAULTS = {
  /** window of a cell, seconds (METHOD.md) */
  windowS: 30,
  /** window when the target is the embedded simulator and none was chosen: a quick first page */
  simWindowS: 5,
  /**
   * the embedded simulator runs beside the client: on a machine with fewer cores than this (its
   * thread, the client's, Vitest's) a Client-limited cell is shown but does not fail the run,
   * unless the suite sets allowClientLimited (resolve.ts). On 2 cores a 64-stream cell's timing
   * error estimate read 4.5–5.2 ms against the 5 ms bound (docs/accuracy.md).
   */
  simSharedMinCores: 4,
  maxOutputTokens: 4096,
  endpoint: 'chat' as const,
  /** no response headers within this ⇒ request failed (headers-timeout) */
  headersTimeoutMs: 120_000,
  /**
   * no body bytes for this long ⇒ the transport gives up on the request (stall). Long, because a
   * server that sends its headers before the first token sends nothing while it prefills
   */
  stallTimeoutMs: 60_000,
  /** inside a window, a request silent after its first token for max(this, stallLimitTbtMultiple × median TBT), at most the window, stalled */
  stallLimitMinMs: 5_000,
  stallLimitTbtMultiple: 50,
  /** the warm-up request stalled when silent this long after its first token (LLM_BENCH_STALL_S overrides) */
  warmupStallMs: 10_000,
  /** setup calls (probe, tokenize) keep trying a server that does not answer this long: a restart fits */
  unreachableRetryMs: 30_000,
  /** drain barrier: wait at most this for the server to go idle before a cell */
  drainTimeoutMs: 120_000,
  /** the drain barrier gives up on a server that refuses connections or answers 5xx to everything for this long (the cell is Not run; later cells check once) */
  serverDownGiveUpMs: 15_000,
  /** a progress line this often while the drain barrier waits */
  drainProgressMs: 5_000,
  /** readiness gate: base timeout, plus gatePerContextTokenMs × context × concurrency */
  gateTimeoutMs: 60_000,
  gatePerContextTokenMs: 0.05,
  /** readiness gate: hold this long with everything running before opening the window */
  gateSettleMs: 500,
  /** server metrics sampling inside the window */
  metricsIntervalMs: 1000,
  /**
   * the client's timing error estimate p99 (√ of event-loop delay p99² + read lag p99²,
   * worst client thread) above this marks the cell Client-limited: 5 ms, calibrated in
   * docs/accuracy.md (METHOD.md says 50 ms of loop delay; the README says why this is tighter)
   */
  clientLimitedLoopDelayMs: 5,
  /** the load generator's CPU above this many cores over the same span marks the cell Client-limited (METHOD.md) */
  clientLimitedCpuCores: 0.9,
  /** threshold -u headroom */
  headroom: 0.1,
  outDir: 'reports',
  /** open-loop rate cells (matrix.rates): the arrival process of every schedule */
  rateArrival: 'poisson',
  /** open-loop rate cells: linear ramp-up before each window, seconds (0: none) */
  rateRampS: 0,
  /** open-loop rate cells: the client's ceiling on requests in flight */
  rateMaxInFlight: 512,
  /** open-loop rate cells: seed of every schedule (each cell's own derives from it) */
  rateSeed: 1,
  simProfile: 'sglang-h200',
  /**
   * workloads (config/workload-input.ts): each kind's keys when not given. `lengths`' `out` has
   * none here: it is the run's maxOutputTokens, fixed (resolve.ts)
   */
  workload: {
    seed: 1,
    lengthsIn: 'normal(1024,256)',
    groups: 4,
    prefixTokens: 3072,
    suffixTokens: 1024,
    turns: 5,
    userTokens: 256,
    systemTokens: 256,
    think: '1s',
    /** the most turns a conversation may have */
    maxTurns: 100,
    /** a normal distribution's default upper clamp: mean + this many standard deviations, rounded */
    normalMaxSds: 4,
  },
} as const;
