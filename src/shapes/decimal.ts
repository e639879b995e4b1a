/**
 * A number as a person writes one in a variable or a setting: decimal digits, an optional sign,
 * point and exponent (`30`, `30.`, `.5`, `2.5e1`). Anything else is NaN, so each caller's range
 * check refuses it with its own message: Number() alone would also read `0x10` as 16, `0b1` as 1,
 * `''` and `' '` as 0.
 */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

export function decimalNumber(text: string): number {
  const t = text.trim();
  return DECIMAL.test(t) ? Number(t) : Number.NaN;
}
