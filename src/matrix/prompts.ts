/**
 * The prompts of one run: for each context, one calibrated shared text whose prefix is unique to
 * this run and context (so its first use, the prefill row or the cell's scout, is a cold prefill),
 * and the per-request prompts of a cell built on it (src/prompts/cell.ts).
 */
import { PromptCalibrator, toleranceTokens, type CalibratedPrompt } from '../prompts/calibrate.js';
import { calibrationSamples, cellPrompts, type CellPromptMode, type CellPrompts } from '../prompts/cell-prompts.js';
import { runSingleRequest } from '../load/prefill.js';
import type { LoadSession } from '../load/session.js';
import { ConfigError } from '../errors.js';
import { HttpCallError, retryWhileUnreachable } from '../engines/http.js';
import { progress } from './progress.js';
import { unlessServerDown } from '../load/drain.js';

const RUN_PREFIX_WORD = 'Run';

/**
 * Why a context row's requests cannot be sent, where the server's max model length is known and
 * the context plus its output exceeds it by more than the calibration tolerance (within it, the
 * prompt is trimmed to fit); undefined where they fit. The same for every concurrency of the row:
 * a cell of it is Not run with this reason before its KV capacity is weighed.
 */
export function modelLengthProblem(context: number, maxTokens: number, maxLen: number | undefined): string | undefined {
  if (maxLen === undefined || context + maxTokens <= maxLen) return undefined;
  if (context - (maxLen - maxTokens) <= toleranceTokens(context)) return undefined;
  return (
    `context ${context} + ${maxTokens} output tokens exceeds the server's max model length ${maxLen}; ` +
    `drop that context from LLM_BENCH_CONTEXTS/LLM_BENCH_PREFILL or lower LLM_BENCH_MAX_TOKENS`
  );
}

/** request failures that mean the server is not there (for now): a restart */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set(['connect', 'closed-before-response', 'socket']);

function onUnreachable(error: unknown, waitMs: number): void {
  progress(`the server did not answer a tokenize call (${(error as Error).message}); trying again in ${(waitMs / 1000).toFixed(1)} s`);
}
const CALIBRATION_PREFIX_WORD = 'Cal';

export class RunPrompts {
  private readonly calibrator: PromptCalibrator;
  private measured = 0;

  constructor(
    private readonly session: LoadSession,
    readonly mode: CellPromptMode,
  ) {
    this.calibrator = PromptCalibrator.forAdapter({
      adapter: session.adapter,
      target: session.target,
      facts: session.facts,
      endpoint: session.endpoint,
      // fallback when the server has no tokenize endpoint: the server's own usage.prompt_tokens.
      // The measured text's first word differs from the real prompt's ("Cal" for "Run", same
      // length), so no prefix of the real prompt is cached and the prefill row stays cold.
      measurePromptTokens: (text) =>
        // a server that restarts is waited for here too, as the tokenize calls are
        retryWhileUnreachable(() => this.measure(text), { budgetMs: session.timeouts.unreachableRetryMs, onRetry: onUnreachable }),
      retryMs: session.timeouts.unreachableRetryMs,
      onRetry: onUnreachable,
      ...(session.localTokenizer ? { localTokenizer: session.localTokenizer } : {}),
    });
  }

  /** usage.prompt_tokens of one max_tokens = 1 request of `text`'s calibration twin */
  private async measure(text: string): Promise<number> {
    const session = this.session;
    const t = await runSingleRequest(session, `${session.runId}-calib${this.measured++}`, calibrationTwin(text, session.runId), 1);
    if (t.end?.kind === 'error' && UNREACHABLE_CODES.has(t.end.code)) throw new HttpCallError(`calibration request failed: ${t.end.message}`, 'transport');
    if (t.promptTokens === undefined) {
      throw new ConfigError(
        `the server reported no usage.prompt_tokens and has no tokenize endpoint, so prompts cannot be sized; ` +
          `set LLM_BENCH_TOKENIZER (or target.tokenizer) to the path of the model's tokenizer.json (the file beside its weights) ` +
          `to size them with a local tokenizer, or make the server report usage (stream_options.include_usage)`,
      );
    }
    return t.promptTokens;
  }

  /**
   * The calibrated shared text of a context (cached per run). `maxTokens` is the output the
   * request will ask for: prompt + output must fit the server's max model length. A target that
   * overshoots by no more than the calibration tolerance (e.g. a 128K prefill row on a 131,072-token
   * server) is trimmed to fit; the page reports the real prompt tokens.
   *
   * `variant` n ≥ 2 gives another text of the same context that differs from the row's own right
   * after "Run <id>," ("Run <id>, variant 2, context 8192."; the seeded filler differs from there
   * on): cold again, for the repeats of a prefill row.
   */
  async rowPrompt(context: number, maxTokens: number, variant = 1): Promise<CalibratedPrompt> {
    const maxLen = this.session.facts.maxModelLen?.value;
    const tooLong = modelLengthProblem(context, maxTokens, maxLen);
    if (tooLong !== undefined) throw new ConfigError(tooLong);
    // within the tolerance: trimmed to fit
    const target = maxLen !== undefined && context + maxTokens > maxLen ? maxLen - maxTokens : context;
    const spec = {
      targetTokens: target,
      prefix: `${RUN_PREFIX_WORD} ${this.session.runId},${variant > 1 ? ` variant ${variant},` : ''} context ${context}.`,
      ...calibrationSamples(this.mode),
    };
    // a server found down: this row's sizing does not wait out its retries (it would, per cell)
    return unlessServerDown(this.session, () => this.calibrator.calibrate(spec));
  }

  /**
   * The run's calibrator, for a workload cell's requests (workload/cell-requests.ts `sizer`): one
   * calibrator per run, so what it learnt of tokens per word serves every cell.
   */
  get sizer(): PromptCalibrator {
    return this.calibrator;
  }

  forCell(row: CalibratedPrompt, concurrency: number): CellPrompts {
    return cellPrompts({ sharedText: row.text, concurrency, mode: this.mode });
  }
}

/** The run prefix's first word swapped for another of the same length: same token count, no shared prefix. */
export function calibrationTwin(text: string, runId: string): string {
  return text.replace(`${RUN_PREFIX_WORD} ${runId}`, `${CALIBRATION_PREFIX_WORD} ${runId}`);
}
