/**
 * The requests of a `sharedPrefix` cell: G groups, each a P-token prefix the group's requests
 * share byte for byte, and per request an S-token suffix of its own.
 *
 * - Group g's prefix: "<group mark> <run id> <cell key> group." + the group's seeded filler,
 *   sized so the prefix ALONE, sent as a prompt, counts P tokens (chat template included; so the
 *   most a prefix cache can reuse of a request is about P tokens, a block's rounding aside). The
 *   group mark is g written backwards (request-kit.ts `requestMark`), so groups differ from their
 *   first digit; the run id and cell key make every cell's prefixes its own, so a prefix's first
 *   use is cold.
 * - Request i's suffix: "\n<request mark> " + the cell's suffix filler, the request mark being i
 *   written backwards at a fixed width: two requests of a group share exactly the prefix bytes
 *   and "\n", and differ within the next MARK_DIGITS characters. The filler is sized (once per
 *   group) so prefix + suffix counts P + S tokens.
 * - Request i's group: a seeded uniform draw from (seed, i) alone (`groupOf`), so the same seed
 *   sends the same groups in every run, cell and kind of cell.
 *
 * `maxTokens` is the run's max output tokens; `promptTokens` the sizer's count of prefix + suffix,
 * `group` the group. Every request index works once `prepare` has run (the sizing is per group,
 * not per request), so nothing wraps. The scouts are one request per group (its prefix and the
 * scout's suffix): the window then measures the cache's steady state, not the G cold first uses.
 */
import { fnv1a, mulberry32 } from '../random.js';
import type { CalibratedPrompt } from '../prompts/calibrate.js';
import type { Workload, WorkloadRequest } from '../shapes/workload.js';
import { ConfigError } from '../errors.js';
import { checkPrepareCount, fitsProblem, requestMark, SCOUT_INDEX, type CellRequests, type WorkloadRequestsOptions } from './request-kit.js';

type SharedPrefixWorkload = Extract<Workload, { kind: 'sharedPrefix' }>;

/** The group (0 … groups−1) of request i: uniform, seeded, the same for the same (seed, i). */
export function groupOf(seed: number, groups: number, i: number): number {
  return Math.floor(mulberry32(fnv1a(`sharedPrefix group ${seed} ${i}`))() * groups);
}

function checkWorkload(w: SharedPrefixWorkload): void {
  const whole = (n: number, min: number) => Number.isInteger(n) && n >= min;
  if (!whole(w.groups, 1)) throw new Error(`sharedPrefix workload: groups must be a whole number ≥ 1 (got ${w.groups}); fix groups= in LLM_BENCH_WORKLOAD.`);
  if (!whole(w.prefixTokens, 1)) throw new Error(`sharedPrefix workload: prefix must be a whole number of tokens ≥ 1 (got ${w.prefixTokens}); fix prefix=.`);
  if (!whole(w.suffixTokens, 1)) throw new Error(`sharedPrefix workload: suffix must be a whole number of tokens ≥ 1 (got ${w.suffixTokens}); fix suffix=.`);
}

/** Why a request (prefix + suffix + the max output) cannot be sent: over the server's max model length (undefined where it fits, or the length is unknown). */
export function sharedPrefixProblem(w: SharedPrefixWorkload, maxOutputTokens: number, maxModelLen: number | undefined): string | undefined {
  const { prefixTokens: P, suffixTokens: S } = w;
  return fitsProblem(P + S + maxOutputTokens, maxModelLen, `prefix ${P} + suffix ${S} + ${maxOutputTokens} output tokens`, 'lower prefix= or suffix= in LLM_BENCH_WORKLOAD, or LLM_BENCH_MAX_TOKENS');
}

export function sharedPrefixRequests(w: SharedPrefixWorkload, o: WorkloadRequestsOptions): CellRequests {
  checkWorkload(w);
  const { groups: G, prefixTokens: P, suffixTokens: S } = w;
  const tooLong = sharedPrefixProblem(w, o.maxOutputTokens, o.maxModelLen);
  if (tooLong !== undefined) throw new ConfigError(tooLong);
  const suffixLead = (i: number): string => `\n${requestMark(i)} `;
  const suffixSeed = `sharedPrefix suffix ${o.runId} ${o.cellKey} seed ${w.seed}`;
  const prefixes: CalibratedPrompt[] = [];
  const suffixes: CalibratedPrompt[] = [];
  let sizingCalls = 0;
  let prepared = 0;

  const request = (g: number, i: number, maxTokens: number): WorkloadRequest => ({
    prompt: prefixes[g]!.text + suffixLead(i) + suffixes[g]!.text,
    maxTokens,
    promptTokens: suffixes[g]!.promptTokens,
    group: g,
  });
  const ready = (): void => {
    if (prefixes.length < G) throw new Error('sharedPrefix workload: requestFor/scoutRequests was called before prepare(count); prepare the cell first.');
  };

  return {
    kind: 'sharedPrefix',
    get prepared() {
      return prepared;
    },
    skipped: 0,
    get sizingCalls() {
      return sizingCalls;
    },
    async prepare(count) {
      checkPrepareCount(count);
      // one group at a time, in order: the same calls in the same order size the same texts
      for (let g = prefixes.length; g < G; g++) {
        const prefix = await o.sizer.calibrate({ targetTokens: P, prefix: `${requestMark(g)} ${o.runId} ${o.cellKey} group.` });
        // the suffix filler, counted after the group's prefix and a suffix lead of the same width
        const suffix = await o.sizer.calibrate({ targetTokens: P + S, prefix: '', seed: suffixSeed, lead: prefix.text + suffixLead(SCOUT_INDEX) });
        sizingCalls += prefix.measurements + suffix.measurements;
        prefixes.push(prefix);
        suffixes.push(suffix);
      }
      prepared = Math.max(prepared, count);
    },
    requestFor(_worker, i) {
      ready();
      return request(groupOf(w.seed, G, i), i, o.maxOutputTokens);
    },
    scoutRequests() {
      ready();
      return Array.from({ length: G }, (_, g) => request(g, SCOUT_INDEX, 1));
    },
    describe: () => `${G} group${G === 1 ? '' : 's'} × ${P} + ${S} tokens (seed ${w.seed})`,
  };
}
