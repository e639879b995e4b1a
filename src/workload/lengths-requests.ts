/**
 * The requests of a `lengths` cell: request i asks for exactly `draws.input(i)` prompt tokens and
 * `draws.output(i)` output tokens (max_tokens).
 *
 * Request i's prompt is `lead(i) + filler(L)`:
 * - `lead(i)` = "<request mark> <run id> <cell key>. ": the request number written backwards
 *   (request-kit.ts `requestMark`), fixed width, so requests share no prefix from the first digit
 *   on and every lead of the cell counts the same tokens;
 * - `filler(L)` is the cell's seeded filler cut to the length that makes lead + filler count L
 *   prompt tokens (chat template included), found by the sizer (PromptCalibrator) once per
 *   distinct L and kept. Every length of the cell cuts the same filler stream (one seed), so the
 *   calibrator's learnt tokens per word carries from one length to the next and each new length
 *   costs few counter calls; lengths are sized in increasing order.
 *
 * `promptTokens` is the sizer's count for the length (exact with a tokenize endpoint or a local
 * tokenizer; with neither, the server's usage of a calibration twin, within the calibration
 * tolerance of L). A length below what the lead alone counts (≈ 10–20 tokens) is sent at that
 * floor; `promptTokens` says so.
 *
 * Beyond the prepared count: request i ≥ count takes the INPUT length of request i mod count
 * (the prepared draws again, in order; its own lead), and its own output draw `draws.output(i)`
 * (no sizing needed). Inputs then follow the empirical distribution of the `count` prepared draws:
 * prepare at least as many requests as the cell is likely to send (≥ 500 for a KS test to mean
 * something).
 */
import { distributionText, type Workload, type WorkloadRequest } from '../shapes/workload.js';
import type { CalibratedPrompt } from '../prompts/calibrate.js';
import { ConfigError } from '../errors.js';
import {
  checkPrepareCount,
  fitsProblem,
  distributionMax,
  requestMark,
  SCOUT_INDEX,
  wrapIndex,
  type CellRequests,
  type RequestLengthDraws,
  type WorkloadRequestsOptions,
} from './request-kit.js';

type LengthsWorkload = Extract<Workload, { kind: 'lengths' }>;

/** A drawn length, checked (the draws are the seeded sampler's; a bad one is a bug there or in the distribution). */
function checkedLength(n: number, what: 'input' | 'output', i: number, min: number): number {
  if (!Number.isInteger(n) || n < min) {
    throw new Error(`lengths workload: the ${what} length drawn for request ${i} is ${n}, not a whole number ≥ ${min}; fix the ${what === 'input' ? 'in' : 'out'}= distribution.`);
  }
  return n;
}

/** Why the workload's longest request cannot be sent: over the server's max model length (undefined where it fits, or the length is unknown). */
export function lengthsProblem(w: LengthsWorkload, maxModelLen: number | undefined): string | undefined {
  return fitsProblem(
    distributionMax(w.input) + distributionMax(w.output),
    maxModelLen,
    `the lengths workload's longest input (in=${distributionText(w.input)}) plus longest output (out=${distributionText(w.output)})`,
    'lower the distributions\' max (the clamp of normal(), the top of uniform() or hist()) in LLM_BENCH_WORKLOAD',
  );
}

export function lengthsRequests(w: LengthsWorkload, o: WorkloadRequestsOptions, draws: RequestLengthDraws): CellRequests {
  const tooLong = lengthsProblem(w, o.maxModelLen);
  if (tooLong !== undefined) throw new ConfigError(tooLong);
  const lead = (i: number): string => `${requestMark(i)} ${o.runId} ${o.cellKey}. `;
  const seed = `lengths ${o.runId} ${o.cellKey} seed ${w.seed}`;
  const sized = new Map<number, CalibratedPrompt>();
  let prepared = 0;
  let sizingCalls = 0;

  const inputOf = (j: number): number => checkedLength(draws.input(j), 'input', j, 0);

  return {
    kind: 'lengths',
    get prepared() {
      return prepared;
    },
    skipped: 0,
    get sizingCalls() {
      return sizingCalls;
    },
    async prepare(count) {
      checkPrepareCount(count);
      const lengths = new Set<number>();
      for (let i = 0; i < count; i++) {
        lengths.add(inputOf(i));
        checkedLength(draws.output(i), 'output', i, 1);
      }
      // one at a time, shortest first: each search starts from what the last one learnt
      for (const L of [...lengths].sort((a, b) => a - b)) {
        if (sized.has(L)) continue;
        // the scout's lead as the sample (same width): a calibration that sends its text (estimated
        // mode) never sends a real request's prompt, so no request of the window finds it cached
        const p = await o.sizer.calibrate({ targetTokens: L, prefix: '', seed, lead: lead(SCOUT_INDEX) });
        sizingCalls += p.measurements;
        sized.set(L, p);
      }
      prepared = Math.max(prepared, count);
    },
    requestFor(_worker, i): WorkloadRequest {
      const L = inputOf(wrapIndex(i, prepared));
      const p = sized.get(L)!;
      return { prompt: lead(i) + p.text, maxTokens: draws.output(i), promptTokens: p.promptTokens };
    },
    scoutRequests: () => [],
    describe: () => `input ${distributionText(w.input)} tokens, output ${distributionText(w.output)} tokens (seed ${w.seed})`,
  };
}
