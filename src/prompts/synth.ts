/**
 * Deterministic filler text: a fixed word list walked by a PRNG seeded from a string, written as
 * sentences (capitalised first word, a period every 6–17 words, a comma now and then) so that
 * tokenizers see ordinary prose and do not collapse it into repeated merges. Cheap: one PRNG step
 * per word. Prefix-stable: the text of n words is a prefix of the text of n+1 words (same seed),
 * which makes token counts grow monotonically with the word count, as calibration needs.
 */
import { fnv1a, mulberry32 } from '../random.js';

/** Text used for a target of 0 tokens: the shortest ordinary prompt. */
export const SHORTEST_PROMPT = 'Hi';

/** Common English words of varied length and frequency. */
export const FILLER_WORDS: readonly string[] = (
  'the of and to in is was for on that with as by at from it an be are this which or have had not ' +
  'but were his her their they one all would there been has more when will who can if no out so ' +
  'what up about into than them only other new some could time these two may then do first any my ' +
  'now such like our over man me even most made after also did many before must through back years ' +
  'where much your way well down should because each just those people how too little state good very ' +
  'make world still own see men work long get here between both life being under never day same another ' +
  'know while last might us great old year off come since against go came right used take three ' +
  'river mountain window garden kitchen harbor village market engine signal lantern meadow bridge ' +
  'forest valley island castle library station pocket letter blanket ladder compass feather pebble ' +
  'thunder orchard canyon glacier prairie volcano desert lagoon tunnel chimney cellar attic balcony ' +
  'copper silver marble velvet linen cotton amber crimson golden hollow narrow gentle brisk quiet ' +
  'ancient distant eager faithful humble clever patient restless sturdy tender vivid weary ' +
  'carried wandered noticed gathered whispered borrowed painted measured repaired followed ' +
  'answered remembered traveled counted listened promised opened finished balanced crossed ' +
  'quickly slowly carefully rarely nearly gladly softly loudly barely freely plainly warmly ' +
  'morning evening winter summer autumn spring midnight harvest festival journey question answer ' +
  'number pattern reason system method problem picture student teacher doctor farmer sailor ' +
  'merchant captain painter baker weaver miner pilot scholar neighbor stranger traveler ' +
  'bread cheese apple honey salt pepper butter lemon olive walnut barley ' +
  'stone timber brick glass paper cloth rope iron wool clay sand ' +
  'seven eleven twelve twenty hundred thousand dozen several certain various ' +
  'beneath beyond toward within without around across behind beside during ' +
  'although however therefore meanwhile perhaps indeed otherwise instead besides'
)
  .split(/\s+/)
  .filter((w) => w !== '');

/** An endless, deterministic word stream for one seed; words are produced on demand and kept. */
export class Filler {
  private readonly next: () => number;
  private readonly out: string[] = [];
  private untilPeriod = 0;
  private sentenceStart = true;

  constructor(readonly seed: string) {
    this.next = mulberry32(fnv1a(seed));
  }

  private produce(): string {
    if (this.untilPeriod === 0) this.untilPeriod = 6 + Math.floor(this.next() * 12);
    let word = FILLER_WORDS[Math.floor(this.next() * FILLER_WORDS.length)]!;
    if (this.sentenceStart) word = word[0]!.toUpperCase() + word.slice(1);
    this.sentenceStart = false;
    this.untilPeriod--;
    if (this.untilPeriod === 0) {
      word += '.';
      this.sentenceStart = true;
    } else if (this.next() < 0.06) word += ',';
    return word;
  }

  /** The first `count` words (punctuation attached). */
  words(count: number): readonly string[] {
    while (this.out.length < count) this.out.push(this.produce());
    return this.out;
  }

  /** The word at `index`. */
  word(index: number): string {
    return this.words(index + 1)[index]!;
  }

  /** The first `count` words joined by spaces, plus the first `partialChars` characters of the next word. */
  text(count: number, partialChars = 0): string {
    const words = this.words(count + (partialChars > 0 ? 1 : 0));
    let text = words.slice(0, count).join(' ');
    if (partialChars > 0) {
      const part = words[count]!.slice(0, partialChars);
      text = count > 0 ? `${text} ${part}` : part;
    }
    return text;
  }
}

const fillers = new Map<string, Filler>();
/** How many seeds' word streams are kept (a run uses one per prefill row plus one per cell). */
export const FILLER_CACHE_SEEDS = 64;

/** The shared Filler for a seed (kept in a small cache). */
export function fillerFor(seed: string): Filler {
  let f = fillers.get(seed);
  if (!f) {
    if (fillers.size >= FILLER_CACHE_SEEDS) fillers.delete(fillers.keys().next().value!);
    f = new Filler(seed);
    fillers.set(seed, f);
  }
  return f;
}

/** `count` words of filler for `seed`. */
export function fillerText(seed: string, count: number): string {
  return fillerFor(seed).text(count);
}

/** Rough tokens per filler word for common BPE tokenizers; only for first guesses. */
export const DEFAULT_TOKENS_PER_WORD = 1.3;

export interface ComposeOptions {
  /** run-unique text at the start (makes a cold prefill); also seeds the filler unless `seed` is set */
  prefix: string;
  /** whole filler words */
  words: number;
  /** characters of the next word after `words` (fine adjustment) */
  partialChars?: number;
  /** filler seed; default `prefix` */
  seed?: string;
}

/** prefix + filler of an exact length in words (+ characters). The calibrator's primitive. */
export function composePrompt(options: ComposeOptions): string {
  const filler = fillerFor(options.seed ?? options.prefix).text(options.words, options.partialChars ?? 0);
  if (filler === '') return options.prefix;
  return options.prefix === '' ? filler : `${options.prefix}\n${filler}`;
}

export interface BuildPromptOptions {
  /** run-unique text at the start, for a cold prefill */
  prefix: string;
  /** approximate prompt length in tokens (an estimate; calibrate.ts makes it exact) */
  targetTokens: number;
  /** appended after the filler */
  tail?: string;
  /** tokens per filler word for the estimate; default DEFAULT_TOKENS_PER_WORD */
  tokensPerWord?: number;
}

/** An uncalibrated prompt of about `targetTokens` tokens (no server needed). */
export function buildPrompt(options: BuildPromptOptions): string {
  const rate = options.tokensPerWord ?? DEFAULT_TOKENS_PER_WORD;
  const words = Math.max(0, Math.round(options.targetTokens / rate));
  return composePrompt({ prefix: options.prefix, words }) + (options.tail ?? '');
}
