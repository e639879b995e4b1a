/**
 * The service-level objective a user writes (`slo` in the suite, src/config/suite-input.ts), as
 * plain interfaces whose fields carry their documentation, as the rest of the suite's input. zod
 * (schema.ts) checks at compile time that SloInput and what it accepts are the same.
 */
/** A lower bound on a figure: `{ min: 20 }`. */
export interface MinLimit {
  /**
   * The lowest value that meets it, in the figure's unit (> 0).
   * @example 20
   */
  min: number;
}

/** An upper bound on a figure: `{ max: 2000 }`. */
export interface MaxLimit {
  /**
   * The highest value that meets it, in the figure's unit (> 0).
   * @example 2000
   */
  max: number;
}

/** The median meets a lower bound (the same as a bare `{ min }`). */
export interface MedianMin {
  /**
   * The bound on the median.
   * @example { min: 20 }
   */
  median: MinLimit;
}
/** The 10th percentile meets a lower bound: 90 % of requests at least this fast. */
export interface P10Min {
  /**
   * The bound on the 10th percentile.
   * @example { min: 15 }
   */
  p10: MinLimit;
}
/** The 1st percentile meets a lower bound: 99 % of requests at least this fast. */
export interface P1Min {
  /**
   * The bound on the 1st percentile.
   * @example { min: 10 }
   */
  p1: MinLimit;
}
/** The median meets an upper bound (the same as a bare `{ max }`). */
export interface MedianMax {
  /**
   * The bound on the median.
   * @example { max: 1000 }
   */
  median: MaxLimit;
}
/** The 90th percentile meets an upper bound. */
export interface P90Max {
  /**
   * The bound on the 90th percentile.
   * @example { max: 2000 }
   */
  p90: MaxLimit;
}
/** The 99th percentile meets an upper bound. */
export interface P99Max {
  /**
   * The bound on the 99th percentile.
   * @example { max: 5000 }
   */
  p99: MaxLimit;
}

/** The 95th percentile meets an upper bound. */
export interface P95Max {
  /**
   * The bound on the 95th percentile.
   * @example { max: 150 }
   */
  p95: MaxLimit;
}

/** `{ min }` (on the median) or one quantile's: `{ p10: { min } }`. */
export type MinBoundInput = MinLimit | MedianMin | P10Min | P1Min;
/** `{ max }` (on the median) or one quantile's: `{ p90: { max } }`. */
export type MaxBoundInput = MaxLimit | MedianMax | P90Max | P99Max;
/** `{ max }` (on the median) or one quantile's, p95 among them: `{ p99: { max } }`. */
export type ItlBoundInput = MaxBoundInput | P95Max;

/**
 * The service-level objective capacity is measured against (docs/capacity.md): per context, the
 * most simultaneous requests whose cell meets every constraint given. `LLM_BENCH_SLO` wins over it.
 */
export interface SloInput {
  /**
   * Per-request output speed, in tokens per second (tok/s).
   * @default no constraint
   * @example { p10: { min: 20 } }
   */
  perRequestTokensPerSecond?: MinBoundInput;
  /**
   * Time to first token, in ms.
   * @default no constraint
   * @example { p90: { max: 2000 } }
   */
  ttftMs?: MaxBoundInput;
  /**
   * Time between tokens (per-request means), in ms.
   * @default no constraint
   * @example { p99: { max: 100 } }
   */
  timeBetweenTokensMs?: MaxBoundInput;
  /**
   * Inter-token latency over every gap of the cell (not per request: goodput does not judge it), in ms.
   * @default no constraint
   * @example { p99: { max: 200 } }
   */
  interTokenLatencyMs?: ItlBoundInput;
  /**
   * The cell's longest gap between two tokens of one request, in ms (judged on the cell).
   * @default no constraint
   * @example { max: 2000 }
   */
  maxGapMs?: MaxLimit;
  /**
   * Failed requests of the cell (count).
   * @default no constraint
   * @example { max: 0 }
   */
  failedRequests?: {
    /**
     * The most failed requests that meet it, a count (integer ≥ 0).
     * @example 0
     */
    max: number;
  };
  /**
   * Goodput: the share of the cell's requests that met the per-request constraints, a fraction.
   * @default no constraint
   * @example { min: 0.9 }
   */
  goodput?: {
    /**
     * The lowest share that meets it, a fraction in (0, 1].
     * @example 0.9
     */
    min: number;
  };
}
