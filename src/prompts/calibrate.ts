/**
 * Prompt calibration (METHOD.md run sequence 2): find a prompt whose server-counted prompt tokens
 * (chat template included) hit a target N within max(64, 0.5 % of N), usually exactly.
 *
 * - exact mode: a token counter (the adapter's tokenize call) and a search over the filler length,
 *   first in whole words (interpolation alternating with bisection inside a bracket), then in
 *   characters of the next word.
 * - estimated mode (no tokenizer): an injected `measurePromptTokens(text)` that sends one
 *   max_tokens=1 request and returns its `usage.prompt_tokens`. The prefix alone is measured once
 *   (template + prefix overhead), one guessed length gives tokens per word, then up to a few
 *   corrections until within tolerance. Overhead and rate are learnt once and reused for the next
 *   targets, so later contexts usually take one request. The returned count is the server's count
 *   for the returned text, so it is still exact; only the distance to N is looser.
 *
 * - exact mode with a local tokenizer (`target.tokenizer` / LLM_BENCH_TOKENIZER), when the server
 *   has no tokenize endpoint: the same search, counting with the local tokenizer. It sees the
 *   content only, not the chat template the server wraps it in, so the template's tokens are
 *   measured once from the server's usage.prompt_tokens of the shortest prompt (its usage minus the
 *   local count of its content) and added to every count; a server that reports no usage leaves
 *   them out, and the record says so (`countedBy: 'local-tokenizer'`, no `templateTokens`)
 *   (local-counter.ts). A tokenize endpoint, when there is one, is preferred: it counts what the server counts.
 *
 * The counted text is `lead + text + tail`: `text` is what a cell shares byte for byte; `lead` and
 * `tail` are samples of the per-stream lead and per-request tail (see cell.ts), so the real prompts
 * land on N too. Results are cached per (target, prefix, lead, tail, seed).
 */
import { retryWhileUnreachable } from '../engines/http.js';
import { localPromptCounter } from './local-counter.js';
import {
  DEFAULT_MAX_MEASUREMENTS,
  MAX_EXACT_COUNTS,
  MAX_SERIES,
  OVERHEAD_REUSE_CHARS,
  toleranceTokens,
  type AdapterCalibratorOptions,
  type CalibratedPrompt,
  type CalibrateRequest,
  type CalibrationMode,
  type CalibratorOptions,
} from './calibration-types.js';
import { composePrompt, DEFAULT_TOKENS_PER_WORD, fillerFor, SHORTEST_PROMPT } from './synth.js';

/** Text used for a target of 0 tokens (synth.ts) */
export { SHORTEST_PROMPT };
export * from './calibration-types.js';

interface Point {
  words: number;
  partialChars: number;
  tokens: number;
}

export class PromptCalibrator {
  private readonly cache = new Map<string, Promise<CalibratedPrompt>>();
  /**
   * exact mode: the counts already taken of one text series (same prefix, lead, tail, seed: the
   * filler is prefix-stable, so its texts differ only in length), kept across targets so a new
   * target of a series starts inside the bracket earlier ones found (a workload's many lengths)
   */
  private readonly series = new Map<string, Map<string, number>>();
  private exactAvailable: boolean;
  /** learnt tokens per filler word */
  private tokensPerWord: number | undefined;
  /**
   * learnt tokens of lead + prefix + tail with no filler (estimated mode), and the characters of
   * those fixed parts: reused for fixed parts of about that size (the rows' prefixes), measured
   * again for others (a workload's suffix counted after a long shared prefix)
   */
  private overhead: { chars: number; tokens: number } | undefined;

  constructor(private readonly options: CalibratorOptions) {
    this.exactAvailable = options.countTokens !== undefined;
    if (!options.countTokens && !options.measurePromptTokens) {
      throw new Error(
        'PromptCalibrator: needs countTokens (the server tokenizer) or measurePromptTokens (one max_tokens=1 request); pass at least one.',
      );
    }
  }

  /** A calibrator that counts through the adapter's tokenizer when the server has one. */
  static forAdapter(o: AdapterCalibratorOptions): PromptCalibrator {
    const { adapter, target, facts, endpoint } = o;
    const opts: CalibratorOptions = {};
    if (adapter.countTokens && facts.tokenizePath) {
      const count = adapter.countTokens.bind(adapter);
      // a server that restarts between cells is waited for (retryMs), not given up on
      opts.countTokens = (text) =>
        retryWhileUnreachable(() => count(target, facts, text, endpoint), { ...(o.retryMs !== undefined ? { budgetMs: o.retryMs } : {}), ...(o.onRetry ? { onRetry: o.onRetry } : {}) });
      opts.countedBy = 'tokenize-endpoint';
    } else if (o.localTokenizer) {
      const local = localPromptCounter(o.localTokenizer, o.measurePromptTokens);
      opts.countTokens = local.count;
      opts.countedBy = 'local-tokenizer';
      opts.templateTokens = local.templateTokens;
    }
    if (o.measurePromptTokens) opts.measurePromptTokens = o.measurePromptTokens;
    if (o.maxMeasurements !== undefined) opts.maxMeasurements = o.maxMeasurements;
    return new PromptCalibrator(opts);
  }

  private seriesOf(req: CalibrateRequest): Map<string, number> {
    const key = [req.prefix, req.lead ?? '', req.tail ?? '', req.seed ?? ''].join('\u0000');
    let memo = this.series.get(key);
    if (!memo) {
      if (this.series.size >= MAX_SERIES) this.series.delete(this.series.keys().next().value!);
      memo = new Map();
      this.series.set(key, memo);
    }
    return memo;
  }

  /** The mode the next calibration will use. */
  get mode(): CalibrationMode {
    return this.exactAvailable ? 'exact' : 'estimated';
  }

  /**
   * The exact prompt tokens of `text` sent as a prompt (chat template included), from the
   * tokenize endpoint or the local tokenizer; undefined where there is neither (estimated mode:
   * no request is sent for it). Workloads count their file lines with it.
   */
  async count(text: string): Promise<number | undefined> {
    if (!this.exactAvailable || !this.options.countTokens) return undefined;
    const t = await this.options.countTokens(text);
    if (t === undefined) this.exactAvailable = false; // the counter said it has no tokenizer
    return t;
  }

  /** Calibrate (cached; concurrent calls for the same key share one search). */
  calibrate(req: CalibrateRequest): Promise<CalibratedPrompt> {
    if (!Number.isInteger(req.targetTokens) || req.targetTokens < 0) {
      return Promise.reject(new Error(`calibrate: targetTokens must be an integer ≥ 0 (got ${req.targetTokens}); fix the context list.`));
    }
    const key = [req.targetTokens, req.prefix, req.lead ?? '', req.tail ?? '', req.seed ?? ''].join('\u0000');
    let pending = this.cache.get(key);
    if (!pending) {
      pending = this.run(req);
      this.cache.set(key, pending);
      pending.catch(() => this.cache.delete(key));
    }
    return pending;
  }

  private async run(req: CalibrateRequest): Promise<CalibratedPrompt> {
    if (this.exactAvailable && this.options.countTokens) {
      const exact = await this.calibrateExact(req, this.options.countTokens);
      if (exact) return exact;
      this.exactAvailable = false; // the counter said it has no tokenizer
    }
    if (!this.options.measurePromptTokens) {
      throw new Error(
        'calibrate: the server has no tokenize endpoint and no measurePromptTokens fallback was given; ' +
          'pass measurePromptTokens (one max_tokens=1 request) to calibrate by estimate.',
      );
    }
    return this.calibrateEstimated(req, this.options.measurePromptTokens);
  }

  private result(req: CalibrateRequest, text: string, tokens: number, mode: CalibrationMode, measurements: number): CalibratedPrompt {
    const tol = toleranceTokens(req.targetTokens);
    return {
      text,
      promptTokens: tokens,
      mode,
      targetTokens: req.targetTokens,
      toleranceTokens: tol,
      withinTolerance: Math.abs(tokens - req.targetTokens) <= tol,
      lead: req.lead ?? '',
      tail: req.tail ?? '',
      measurements,
      ...this.counterRecord(mode),
    };
  }

  private counterRecord(mode: CalibrationMode): Pick<CalibratedPrompt, 'countedBy' | 'templateTokens'> {
    if (mode === 'estimated') return { countedBy: 'server-usage' };
    if (this.options.countedBy === undefined) return {};
    const template = this.options.templateTokens?.();
    return { countedBy: this.options.countedBy, ...(template !== undefined ? { templateTokens: template } : {}) };
  }

  private textAt(req: CalibrateRequest, words: number, partialChars = 0): string {
    const o: Parameters<typeof composePrompt>[0] = { prefix: req.prefix, words, partialChars };
    if (req.seed !== undefined) o.seed = req.seed;
    return composePrompt(o);
  }

  /** undefined when the counter has no tokenizer */
  private async calibrateExact(
    req: CalibrateRequest,
    count: (text: string) => Promise<number | undefined>,
  ): Promise<CalibratedPrompt | undefined> {
    const lead = req.lead ?? '';
    const tail = req.tail ?? '';
    const N = req.targetTokens;
    let calls = 0;
    let missing = false;
    const memo = this.seriesOf(req);
    const countAt = async (words: number, partialChars = 0): Promise<number> => {
      const key = `${words}:${partialChars}`;
      const known = memo.get(key);
      if (known !== undefined) return known;
      calls++;
      const t = await count(lead + this.textAt(req, words, partialChars) + tail);
      if (t === undefined) {
        missing = true;
        return NaN;
      }
      memo.set(key, t);
      return t;
    };

    if (N === 0) {
      const t = await count(lead + SHORTEST_PROMPT + tail);
      return t === undefined ? undefined : this.result(req, SHORTEST_PROMPT, t, 'exact', 1);
    }

    const base = await countAt(0);
    if (missing) return undefined;
    const best: Point[] = [{ words: 0, partialChars: 0, tokens: base }];
    const done = (p: Point): CalibratedPrompt => this.result(req, this.textAt(req, p.words, p.partialChars), p.tokens, 'exact', calls);
    if (base >= N) return done(best[0]!);

    const maxWords = N * 4 + 16;
    let lo = 0;
    let tLo = base;
    let hi: number | undefined;
    let tHi = Infinity;
    // what earlier targets of the series counted: an exact hit, or the tightest bracket
    for (const [key, t] of memo) {
      const [w, partialChars] = key.split(':').map(Number) as [number, number];
      if (t === N) return done({ words: w, partialChars, tokens: t });
      if (partialChars !== 0) continue;
      if (t < N && w > lo) [lo, tLo] = [w, t];
      if (t > N && (hi === undefined || w < hi)) [hi, tHi] = [w, t];
    }
    if (lo > 0) best.push({ words: lo, partialChars: 0, tokens: tLo });
    if (hi !== undefined) best.push({ words: hi, partialChars: 0, tokens: tHi });
    let rate = this.tokensPerWord ?? DEFAULT_TOKENS_PER_WORD;
    let guess =
      hi === undefined ? lo + Math.round((N - tLo) / rate) : lo + Math.round(((N - tLo) * (hi - lo)) / Math.max(1, tHi - tLo));
    for (let step = 0; calls < MAX_EXACT_COUNTS; step++) {
      const upper = hi === undefined ? maxWords : hi - 1;
      guess = Math.min(Math.max(guess, lo + 1), upper);
      if (guess <= lo) break; // lo === maxWords: the filler cannot get longer
      const t = await countAt(guess);
      if (missing) return undefined;
      best.push({ words: guess, partialChars: 0, tokens: t });
      if (t === N) break;
      if (t < N) {
        lo = guess;
        tLo = t;
      } else {
        hi = guess;
        tHi = t;
      }
      if (lo > 0) rate = Math.max(0.05, (tLo - base) / lo);
      if (hi !== undefined && hi - lo <= 1) break;
      if (hi === undefined) guess = lo + Math.ceil((N - tLo) / rate) + 1;
      else if (step % 2 === 0) guess = lo + Math.round(((N - tLo) * (hi - lo)) / Math.max(1, tHi - tLo));
      else guess = Math.floor((lo + hi) / 2);
    }
    if (lo > 0) this.tokensPerWord = Math.max(0.05, (tLo - base) / lo);

    const exactHit = best.find((p) => p.tokens === N);
    if (!exactHit && hi === lo + 1) {
      // characters of the next word: a partial word can land between the two word counts
      const word = fillerFor(req.seed ?? req.prefix).word(lo);
      for (let k = 1; k < word.length && calls < MAX_EXACT_COUNTS; k++) {
        const t = await countAt(lo, k);
        if (missing) return undefined;
        best.push({ words: lo, partialChars: k, tokens: t });
        if (t === N) break;
      }
    }
    return done(pickBest(best, N));
  }

  private async calibrateEstimated(req: CalibrateRequest, measure: (text: string) => Promise<number>): Promise<CalibratedPrompt> {
    const lead = req.lead ?? '';
    const tail = req.tail ?? '';
    const N = req.targetTokens;
    const maxMeasurements = this.options.maxMeasurements ?? DEFAULT_MAX_MEASUREMENTS;
    let calls = 0;
    const measureAt = async (words: number): Promise<number> => {
      calls++;
      return measure(lead + this.textAt(req, words) + tail);
    };
    if (N === 0) {
      calls++;
      const t = await measure(lead + SHORTEST_PROMPT + tail);
      return this.result(req, SHORTEST_PROMPT, t, 'estimated', calls);
    }
    // overhead of the fixed parts (template + lead + prefix + tail); cheap (short prompt)
    const fixedChars = lead.length + req.prefix.length + tail.length;
    const learnt = this.overhead;
    let overhead = learnt && Math.abs(learnt.chars - fixedChars) <= OVERHEAD_REUSE_CHARS ? learnt.tokens : undefined;
    if (overhead === undefined) {
      overhead = await measureAt(0);
      this.overhead = { chars: fixedChars, tokens: overhead };
      if (overhead >= N) return this.result(req, this.textAt(req, 0), overhead, 'estimated', calls);
    }
    const points: Point[] = [];
    let rate = this.tokensPerWord ?? DEFAULT_TOKENS_PER_WORD;
    let words = Math.max(1, Math.round((N - overhead) / rate));
    const tol = toleranceTokens(N);
    for (let i = 0; i < maxMeasurements; i++) {
      const t = await measureAt(words);
      points.push({ words, partialChars: 0, tokens: t });
      if (Math.abs(t - N) <= tol) break;
      rate = Math.max(0.05, (t - overhead) / words);
      const next = Math.max(1, Math.round((N - overhead) / rate));
      if (next === words) break;
      words = next;
    }
    const best = pickBest(points, N);
    if (best.words > 0) this.tokensPerWord = Math.max(0.05, (best.tokens - overhead) / best.words);
    return this.result(req, this.textAt(req, best.words), best.tokens, 'estimated', calls);
  }
}

/** The point nearest N; on a tie, the one not above N. */
function pickBest(points: readonly Point[], N: number): Point {
  let best = points[0]!;
  for (const p of points) {
    const d = Math.abs(p.tokens - N);
    const bd = Math.abs(best.tokens - N);
    if (d < bd || (d === bd && p.tokens < best.tokens)) best = p;
  }
  return best;
}
