/**
 * Number formats of the speed-matrix page, as on the reference pages:
 * `2,616.6` tok/s, `10.4K` prefill tok/s, `1,458 ms` TTFT, `16.8 ms` between tokens, `30.0 s`, `—`.
 */

export const ABSENT = '—';

const fixedFormats = new Map<number, Intl.NumberFormat>();
function fixed(digits: number): Intl.NumberFormat {
  let f = fixedFormats.get(digits);
  if (!f) {
    f = new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
    fixedFormats.set(digits, f);
  }
  return f;
}

/** `x` with `digits` decimals and thousands commas; `—` when absent or not finite. */
export function formatNumber(x: number | undefined, digits = 0): string {
  return x === undefined || !Number.isFinite(x) ? ABSENT : fixed(digits).format(x);
}

/** A whole number as it is, else one decimal, no thousands commas: `4095`, `39.5` (a count of tokens or users that a mean made fractional). */
export function wholeOrTenths(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(1);
}

/** A share as a percentage: one decimal under 10 % (`2.1 %`), none from there (`15 %`), `0 %` for none. */
export function percent(share: number): string {
  const p = share * 100;
  return `${formatNumber(p, p > 0 && p < 10 ? 1 : 0)} %`;
}

/** Decode tok/s and other one-decimal figures: `2,616.6`. */
export function formatRate(x: number | undefined): string {
  return formatNumber(x, 1);
}

/**
 * Prefill prompt tok/s: `10.4K` at or above 10,000; below it `9,995` (section) or `9,995.0`
 * (All measurements table, `digits` = 1).
 */
export function formatPrefillRate(x: number | undefined, digits: 0 | 1 = 0): string {
  if (x === undefined || !Number.isFinite(x)) return ABSENT;
  if (x >= 10_000) return `${fixed(1).format(x / 1000)}K`;
  return fixed(digits).format(x);
}

/** TTFT: whole milliseconds, `1,458 ms`. */
export function formatMs(x: number | undefined): string {
  return x === undefined || !Number.isFinite(x) ? ABSENT : `${fixed(0).format(x)} ms`;
}

/** Time between tokens: `16.8 ms`. */
export function formatMsPrecise(x: number | undefined): string {
  return x === undefined || !Number.isFinite(x) ? ABSENT : `${fixed(1).format(x)} ms`;
}

/** Window lengths: `30.0 s`. */
export function formatSeconds(x: number | undefined): string {
  return x === undefined || !Number.isFinite(x) ? ABSENT : `${fixed(1).format(x)} s`;
}

/** Counts: `1,779`. */
export function formatCount(x: number | undefined): string {
  return formatNumber(x, 0);
}

/** How long a name may run in a heading or a table before it is cut (issue 60: a 10 KB model name ran 150,000 px wide). */
export const HEADING_MAX_CHARS = 120;
/** …and in a list of run facts (the JSON keeps the whole text, the HTML a tooltip). */
export const ITEM_MAX_CHARS = 300;

/** `text` cut to `max` characters with an ellipsis; as it is where it fits. */
export function cutText(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}
