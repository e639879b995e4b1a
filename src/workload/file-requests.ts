/**
 * The requests of a `file` cell: the JSONL file's lines in the seeded order.
 *
 * Request i is line `order(i)`: its messages as the chat endpoint's messages, `prompt` =
 * `render(messages)` (what the completions endpoint sends), and max_tokens = the line's own
 * output length or, without one, the run's max output tokens.
 *
 * Too-long lines (the rule): when the server's max model length is known AND prompts can be
 * counted (a tokenize endpoint or a local tokenizer: `sizer.count`), `prepare(count)` walks the
 * order from request 0, counting each line it meets once (its rendered prompt, sent as one
 * prompt, chat template included), and SKIPS every line whose prompt tokens + max_tokens exceed
 * the max model length: it is never sent, it is counted in `skipped`, and the next line of the
 * order takes its place. The walk stops when `count` usable requests are found. Request i is then
 * the i-th usable line of the walk; requests beyond the prepared count reuse the prepared ones in
 * order (request i ≥ count is request i mod count's line). `promptTokens` is the counted length.
 * A file whose every line is too long is a ConfigError naming the file.
 *
 * Without a counter or a known max model length nothing is counted and nothing is skipped:
 * request i is line `order(i)` for any i, and a line the server refuses becomes a failed request
 * of the cell (its error text says why).
 */
import { ConfigError } from '../errors.js';
import type { PromptLine, Workload, WorkloadRequest } from '../shapes/workload.js';
import { checkPrepareCount, wrapIndex, type CellRequests, type RequestFileSource, type WorkloadRequestsOptions } from './request-kit.js';

type FileWorkload = Extract<Workload, { kind: 'file' }>;

/** Counter calls sent at once while lines are counted. */
const COUNT_BATCH = 8;

interface Checked {
  /** prompt tokens counted */
  tokens: number;
  fits: boolean;
}

export function fileRequests(w: FileWorkload, o: WorkloadRequestsOptions, source: RequestFileSource): CellRequests {
  const { prompts, order, render } = source;
  const n = prompts.lines.length;
  if (n === 0) throw new ConfigError(`file workload: ${prompts.path} has no prompt lines; point file: at a JSONL file with one prompt per line.`);
  const lineIndexAt = (i: number): number => {
    const k = order(i);
    if (!Number.isInteger(k) || k < 0 || k >= n) throw new Error(`file workload: order(${i}) gave line index ${k}, outside 0 … ${n - 1} of ${prompts.name}`);
    return k;
  };
  const maxTokensOf = (line: PromptLine): number => line.outputTokens ?? o.maxOutputTokens;
  const maxLen = o.maxModelLen;
  const count = o.sizer.count?.bind(o.sizer);

  /** per line index: its count and whether it fits */
  const checked = new Map<number, Checked>();
  /** the usable requests of the walk, in order: [line index] */
  const walk: number[] = [];
  let counting = maxLen !== undefined && count !== undefined;
  /** the walk's next position in the order: every position before it is in `walk` or was skipped */
  let nextPosition = 0;
  let prepared = 0;
  let skipped = 0;
  let sizingCalls = 0;

  const requestOfLine = (k: number): WorkloadRequest => {
    const line = prompts.lines[k]!;
    const c = checked.get(k);
    return {
      prompt: render(line.messages),
      messages: line.messages,
      maxTokens: maxTokensOf(line),
      ...(c ? { promptTokens: c.tokens } : {}),
    };
  };

  /** counts the lines not yet counted; false when the counter turns out to have no tokenizer */
  async function countLines(indexes: number[]): Promise<boolean> {
    const fresh = [...new Set(indexes)].filter((k) => !checked.has(k));
    // a line the run has counted already (matrix/workload-run.ts) is not counted again
    const tokens = await Promise.all(
      fresh.map((k) => {
        const line = prompts.lines[k]!;
        if (line.promptTokens !== undefined) return line.promptTokens;
        sizingCalls++;
        return count!(render(line.messages));
      }),
    );
    for (const [j, k] of fresh.entries()) {
      const t = tokens[j];
      if (t === undefined) return false;
      const fits = t + maxTokensOf(prompts.lines[k]!) <= maxLen!;
      if (!fits) skipped++;
      checked.set(k, { tokens: t, fits });
    }
    return true;
  }

  return {
    kind: 'file',
    get prepared() {
      return prepared;
    },
    get skipped() {
      return skipped;
    },
    get sizingCalls() {
      return sizingCalls;
    },
    async prepare(want) {
      checkPrepareCount(want);
      while (counting && walk.length < want) {
        if (checked.size === n && walk.length === 0) {
          throw new ConfigError(
            `file workload: every line of ${prompts.path} is longer than the server's max model length ${maxLen} (prompt + output tokens); ` +
              `use shorter prompts or lower their output_tokens/max_tokens (or LLM_BENCH_MAX_TOKENS).`,
          );
        }
        const batch = Array.from({ length: COUNT_BATCH }, (_, j) => lineIndexAt(nextPosition + j));
        if (!(await countLines(batch))) {
          counting = false; // the counter has no tokenizer after all: nothing is skipped
          checked.clear();
          skipped = 0;
          walk.length = 0;
          nextPosition = 0;
          break;
        }
        for (let j = 0; j < COUNT_BATCH && walk.length < want; j++, nextPosition++) {
          const k = lineIndexAt(nextPosition);
          if (checked.get(k)!.fits) walk.push(k);
        }
      }
      prepared = Math.max(prepared, want);
    },
    requestFor(_worker, i) {
      if (!counting) {
        wrapIndex(i, prepared); // throws before prepare
        return requestOfLine(lineIndexAt(i));
      }
      return requestOfLine(walk[wrapIndex(i, walk.length)]!);
    },
    scoutRequests: () => [],
    describe: () => `${prompts.name}: ${n} line${n === 1 ? '' : 's'}${skipped > 0 ? `, ${skipped} skipped as too long` : ''} (sha256 ${prompts.sha256.slice(0, 12)}…, seed ${w.seed})`,
  };
}
