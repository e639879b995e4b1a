/**
 * Per-chunk output tokens from a request's streamed text (docs/tokenizer.md "Per-chunk recount").
 *
 * A chunk's tokens are count(text through chunk i) − count(text through chunk i−1). Counting every
 * prefix is quadratic in the output, so each difference is taken over a window: the text from
 * `window` chunks before chunk i (at least MIN_WINDOW_CHARS characters) through chunk i, minus the
 * same text through chunk i−1; what the window's start does to the count (a prepended space, a
 * word cut in two) is the same in both terms and cancels. The sum is checked against the count of
 * the whole text; where it differs, the window doubles and the recount runs again, up to whole
 * prefixes, so the total is always exactly count(whole text).
 *
 * A difference can be negative (a tokenizer may merge the new text with the old into fewer
 * tokens): the cumulative counts are made non-decreasing from the end (each is lowered to the
 * smallest later one), so no chunk gets negative tokens and the total is kept.
 */

/** Chunks of context each difference sees, at first. */
export const DEFAULT_RECOUNT_WINDOW = 8;
/** Characters of context each difference sees at least. */
export const MIN_WINDOW_CHARS = 64;

/** Tokens of each chunk; their sum is `count(texts.join(''))`. */
export function recountChunkTokens(count: (text: string) => number, texts: readonly string[], window = DEFAULT_RECOUNT_WINDOW): number[] {
  const n = texts.length;
  if (n === 0) return [];
  const whole = texts.join('');
  const total = count(whole);
  // starts[i]: offset of chunk i in the whole text
  const starts: number[] = new Array<number>(n + 1);
  starts[0] = 0;
  for (let i = 0; i < n; i++) starts[i + 1] = starts[i]! + texts[i]!.length;
  for (let w = Math.max(1, window); ; w *= 2) {
    const full = w >= n;
    const cumulative: number[] = new Array<number>(n);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      let from = full ? 0 : Math.max(0, i - w);
      while (from > 0 && starts[i]! - starts[from]! < MIN_WINDOW_CHARS) from--;
      const before = from === i ? 0 : count(whole.slice(starts[from]!, starts[i]!));
      const after = count(whole.slice(starts[from]!, starts[i + 1]!));
      sum += after - before;
      cumulative[i] = sum;
    }
    if (sum === total || full) {
      if (sum !== total) cumulative[n - 1] = total; // whole prefixes: the last is count(whole)
      return monotoneDifferences(cumulative);
    }
  }
}

/** Differences of cumulative counts lowered to be non-decreasing (the last count is kept). */
function monotoneDifferences(cumulative: number[]): number[] {
  const n = cumulative.length;
  for (let i = n - 2; i >= 0; i--) if (cumulative[i]! > cumulative[i + 1]!) cumulative[i] = cumulative[i + 1]!;
  const out: number[] = new Array<number>(n);
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const c = Math.max(0, cumulative[i]!);
    out[i] = c - prev;
    prev = c;
  }
  return out;
}
