/**
 * The threshold file of one target (thresholds/<name>.json): budgets per cell and per prefill row,
 * reviewed in pull requests. Parsed with zod strict objects so a typo is an error, never ignored.
 * thresholds.schema.json (for editors) is generated from these schemas: `npx tsx src/thresholds/gen-schema.ts`.
 */
import { z } from 'zod';
import { DEFAULTS } from '../config/defaults.js';

/**
 * Cell figures a budget may name (CellFigures; ttftMs and timeBetweenTokensMs are their medians,
 * itlP99Ms the p99 of interTokenLatencyMs and maxGapMs its max, the longest gap).
 */
export const CELL_FIGURES = [
  'totalTokensPerSecond',
  'perRequestTokensPerSecond',
  'ttftMs',
  'timeBetweenTokensMs',
  'itlP99Ms',
  'maxGapMs',
  'averageActiveRequests',
  'outputTokens',
  'completedRequests',
  'failedRequests',
] as const;
export type CellFigureName = (typeof CELL_FIGURES)[number];

/** Prefill figures a budget may name (PrefillFigures). */
export const PREFILL_FIGURES = ['promptTokensPerSecond', 'ttftMs'] as const;
export type PrefillFigureName = (typeof PREFILL_FIGURES)[number];

export const CELL_STATUSES = [
  'valid', 'over-capacity', 'requests-queued', 'warmup-timed-out', 'errors', 'client-limited', 'stream-buffered',
] as const;
export const PREFILL_STATUSES = ['valid', 'errors', 'over-capacity'] as const;

/** `<contextLabel>/<concurrency>`, K = 1024: "0/1", "8K/16", "123K/8" */
export const CELL_KEY_PATTERN = /^(0|[1-9][0-9]*K?)\/[1-9][0-9]*$/;
/** a context label: "0", "8K", "1000" */
export const PREFILL_KEY_PATTERN = /^(0|[1-9][0-9]*K?)$/;

const figure = z.number().finite().nonnegative();

function figureBudget<const T extends readonly string[]>(names: T, description: string) {
  const shape = Object.fromEntries(names.map((n) => [n, figure.optional()])) as { [K in T[number]]: z.ZodOptional<typeof figure> };
  return z.strictObject(shape).describe(description);
}

export const CellBudgetSchema = z
  .strictObject({
    status: z.enum(CELL_STATUSES).optional().describe('expected main status of the cell'),
    min: figureBudget(CELL_FIGURES, 'lowest acceptable value per figure (higher is better)').optional(),
    max: figureBudget(CELL_FIGURES, 'highest acceptable value per figure (lower is better)').optional(),
  })
  .describe('budget of one sustained-decode cell');

export const PrefillBudgetSchema = z
  .strictObject({
    status: z.enum(PREFILL_STATUSES).optional().describe('expected status of the prefill row'),
    min: figureBudget(PREFILL_FIGURES, 'lowest acceptable value per figure').optional(),
    max: figureBudget(PREFILL_FIGURES, 'highest acceptable value per figure').optional(),
  })
  .describe('budget of one prefill row');

/** Figures the baseline comparison gates (cells: ttftMs and timeBetweenTokensMs are their medians). */
export const REGRESSION_CELL_FIGURES = ['totalTokensPerSecond', 'perRequestTokensPerSecond', 'ttftMs', 'timeBetweenTokensMs'] as const;
export const REGRESSION_PREFILL_FIGURES = ['promptTokensPerSecond', 'ttftMs'] as const;
/** Figures the baseline comparison gates on an open-loop rate cell: ttftFromScheduleMs and tbtMs are medians. */
export const REGRESSION_RATE_FIGURES = ['completedRate', 'totalTokensPerSecond', 'ttftFromScheduleMs', 'ttftFromScheduleP99Ms', 'tbtMs'] as const;

/** A figure's regression tolerance: a fraction (0.05 = 5 %), or a fraction plus an absolute floor in the figure's unit. */
function toleranceSchema(maxRelative: number | undefined) {
  const relative = (example: string) => {
    const base = z.number().min(0);
    return (maxRelative === undefined ? base : base.max(maxRelative, FALL_ABOVE_ONE)).describe(`relative tolerance, e.g. ${example}`);
  };
  return z.union([
    relative('0.05 = 5 %'),
    z.strictObject({
      relative: relative('0.10 = 10 %'),
      absolute: z
        .number()
        .min(0)
        .optional()
        .describe('a change no larger than this (in the figure\'s unit: ms or tok/s) is never a regression'),
    }),
  ]);
}

/** a throughput (or capacity) falls by at most all of itself: a relative tolerance above 1 is a percentage typed as a number */
const FALL_ABOVE_ONE = 'a fraction from 0 to 1 (0.25 = 25 %): this figure cannot fall by more than all of itself, so a value over 1 is most likely a percentage; write 25 % as 0.25';

/** a tolerance of a figure that regresses upward (ms): any fraction (2 = may triple) */
export const RegressionToleranceSchema = toleranceSchema(undefined);
/** a tolerance of a figure that regresses downward (tok/s, users): at most 1 */
const FallToleranceSchema = toleranceSchema(1);
const FALLING = new Set<string>(['totalTokensPerSecond', 'perRequestTokensPerSecond', 'promptTokensPerSecond', 'completedRate']);

function regressionBlock<const T extends readonly string[]>(names: T, description: string) {
  const shape = Object.fromEntries(names.map((n) => [n, (FALLING.has(n) ? FallToleranceSchema : RegressionToleranceSchema).optional()])) as {
    [K in T[number]]: z.ZodOptional<typeof RegressionToleranceSchema>;
  };
  return z.strictObject(shape).describe(description);
}

export const RegressionTolerancesSchema = z.strictObject({
  cells: regressionBlock(REGRESSION_CELL_FIGURES, 'per sustained-decode figure').optional(),
  prefill: regressionBlock(REGRESSION_PREFILL_FIGURES, 'per prefill figure').optional(),
  rates: regressionBlock(
    REGRESSION_RATE_FIGURES,
    'per open-loop rate cell figure (completedRate in requests/s; ttftFromScheduleMs and tbtMs are medians, ttftFromScheduleP99Ms the p99)',
  ).optional(),
  capacity: FallToleranceSchema.optional().describe(
    'capacity at the SLO per context row (users): relative, with an absolute floor in users; default 5 % and at least 1 user or the search\'s resolution',
  ),
});

export const TolerancesSchema = z
  .strictObject({
    acceptStatuses: z
      .array(z.enum(CELL_STATUSES))
      .optional()
      .describe('statuses accepted in place of the expected one, e.g. ["requests-queued"] on a shared server'),
    slack: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe('extra relative slack at evaluation: min × (1 − slack), max × (1 + slack); default 0'),
    regression: RegressionTolerancesSchema.optional().describe(
      'baseline comparison (LLM_BENCH_BASELINE, `llm-speed-matrix compare`): how far a figure may move the wrong way before the cell fails; defaults in src/thresholds/tolerances.ts',
    ),
  })
  .describe('how strictly budgets are applied');

export const CapacityBudgetSchema = z
  .strictObject({
    min: z.int().nonnegative().describe('fewest simultaneous requests the row must hold at the run\'s SLO'),
  })
  .describe('budget of one context row\'s capacity at the SLO (runs with LLM_BENCH_SLO or the suite\'s slo)');

export const RateCapacityBudgetSchema = z
  .strictObject({
    min: z.number().nonnegative().describe('the lowest open-loop rate (requests/s) the context must hold at the run\'s SLO'),
  })
  .describe('budget of one context\'s highest open-loop rate at the SLO (runs with an SLO and matrix.rates)');

export const ThresholdsFileSchema = z
  .strictObject({
    $schema: z.string().optional(),
    target: z.string().optional().describe('what these budgets are for, e.g. "sglang-h200-bf16"'),
    headroom: z
      .number()
      .min(0)
      .lt(1)
      .optional()
      .describe(`used by -u: min = measured × (1 − headroom), max = measured × (1 + headroom); default ${DEFAULTS.headroom.toFixed(2)}`),
    tolerances: TolerancesSchema.optional(),
    cells: z
      .record(
        z.string().regex(CELL_KEY_PATTERN, { error: 'cell keys are <context>/<concurrency> with K = 1024, e.g. "8K/16" or "0/1"' }),
        CellBudgetSchema,
      )
      .default({})
      .describe('budgets per cell, keyed "<context>/<concurrency>"'),
    prefill: z
      .record(
        z.string().regex(PREFILL_KEY_PATTERN, { error: 'prefill keys are context labels with K = 1024, e.g. "8K" or "0"' }),
        PrefillBudgetSchema,
      )
      .default({})
      .describe('budgets per prefill row, keyed by context label'),
    workload: z
      .string()
      .optional()
      .describe(
        'the workload the cell budgets were measured with (written by -u: its canonical text, e.g. "sharedPrefix:groups=4,prefix=3072,suffix=1024,seed=1"); absent = synthetic; a run of another workload is refused',
      ),
    slo: z
      .string()
      .optional()
      .describe('the SLO the capacity budgets were measured at (written by -u, e.g. "perRequest>=20,ttftP90<=2000"); a run at another SLO is refused'),
    capacity: z
      .record(
        z.string().regex(PREFILL_KEY_PATTERN, { error: 'capacity keys are context labels with K = 1024, e.g. "32K" or "0"' }),
        CapacityBudgetSchema,
      )
      .optional()
      .describe('capacity at the SLO per context row, keyed by context label, e.g. { "32K": { "min": 20 } }'),
    rateCapacity: z
      .record(
        z.string().regex(PREFILL_KEY_PATTERN, { error: 'rateCapacity keys are context labels with K = 1024, e.g. "8K" or "0"' }),
        RateCapacityBudgetSchema,
      )
      .optional()
      .describe('the highest open-loop rate at the SLO per context, requests/s, keyed by context label, e.g. { "8K": { "min": 10.5 } }'),
  })
  .describe('performance budgets of one speed-matrix target');

export type CellBudget = z.output<typeof CellBudgetSchema>;
export type PrefillBudget = z.output<typeof PrefillBudgetSchema>;
export type CapacityBudget = z.output<typeof CapacityBudgetSchema>;
export type RateCapacityBudget = z.output<typeof RateCapacityBudgetSchema>;
export type Tolerances = z.output<typeof TolerancesSchema>;
export type ThresholdsFile = z.output<typeof ThresholdsFileSchema>;
export type RegressionTolerance = z.output<typeof RegressionToleranceSchema>;
export type RegressionTolerances = z.output<typeof RegressionTolerancesSchema>;

/** The cell budgets `-u` writes from the measurement (src/thresholds/update.ts); the rest are the user's. */
export const MANAGED_CELL_MIN = ['totalTokensPerSecond', 'perRequestTokensPerSecond'] as const;
export const MANAGED_CELL_MAX = ['ttftMs', 'timeBetweenTokensMs'] as const;

/**
 * What a cell is judged against during `-u`: its budget without the status and the figures `-u`
 * rewrites (they are being replaced), so the budgets the user wrote (max.failedRequests, min.…Requests)
 * still hold; undefined when nothing is left.
 */
export function unmanagedCellBudget(budget: CellBudget | undefined): CellBudget | undefined {
  if (!budget) return undefined;
  const min = { ...budget.min };
  const max = { ...budget.max };
  for (const name of MANAGED_CELL_MIN) delete min[name];
  for (const name of MANAGED_CELL_MAX) delete max[name];
  const out: CellBudget = {};
  if (Object.keys(min).length > 0) out.min = min;
  if (Object.keys(max).length > 0) out.max = max;
  return out.min || out.max ? out : undefined;
}
