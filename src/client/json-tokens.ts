/**
 * JSON's tokens in UTF-8 bytes (RFC 8259), for the byte scan of stream chunks (json-scan.ts,
 * json-shapes.ts): where a whitespace run, a string or a number that starts at a position ends,
 * or -1 where the bytes there are not one. Nothing is allocated.
 *
 * Inside strings any byte from 0x20 up but `"` and `\` stands for itself: the client's UTF-8
 * decoding turns a malformed sequence into U+FFFD inside the same string, which JSON.parse
 * accepts, and never takes an ASCII byte (the closing quote) into one.
 */

/** a value's JSON type (ABSENT: a planned field not in the value) */
export const ABSENT = 0;
export const NULL = 1;
export const FALSE = 2;
export const TRUE = 3;
export const NUMBER = 4;
export const STRING = 5;
export const OBJECT = 6;
export const ARRAY = 7;

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;

/** JSON whitespace */
const WS = new Uint8Array(256);
for (const c of [0x20, 0x0a, 0x0d, 0x09]) WS[c] = 1;
/** string bytes that stand for themselves: not a control character, `"` or `\` */
const PLAIN = new Uint8Array(256).fill(1, 0x20);
PLAIN[QUOTE] = 0;
PLAIN[BACKSLASH] = 0;

/** the last string stringEnd read had an escape */
export let stringHadEscape = false;

/** the end of the whitespace run at p (p itself where there is none) */
export function wsEnd(b: Uint8Array, p: number, e: number): number {
  while (p < e && WS[b[p]!] === 1) p++;
  return p;
}

/** the end (after its closing quote) of the string whose opening quote is at p, or -1; sets stringHadEscape */
export function stringEnd(b: Uint8Array, p: number, e: number): number {
  p++;
  let escaped = false;
  for (;;) {
    while (p < e && PLAIN[b[p]!] === 1) p++;
    if (p >= e) return -1;
    const c = b[p]!;
    if (c === QUOTE) break;
    if (c !== BACKSLASH) return -1; // a control character
    escaped = true;
    const x = b[p + 1];
    if (x === 0x75) {
      if (p + 6 > e || !isHex(b[p + 2]!) || !isHex(b[p + 3]!) || !isHex(b[p + 4]!) || !isHex(b[p + 5]!)) return -1;
      p += 6;
    } else if (x === QUOTE || x === BACKSLASH || x === 0x2f || x === 0x62 || x === 0x66 || x === 0x6e || x === 0x72 || x === 0x74) {
      p += 2;
    } else {
      return -1;
    }
  }
  stringHadEscape = escaped;
  return p + 1;
}

/** the end of the number at p: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, or -1 */
export function numberEnd(b: Uint8Array, p: number, e: number): number {
  if (p < e && b[p] === 0x2d) p++;
  if (p >= e) return -1;
  if (b[p] === 0x30) {
    p++;
  } else if (isDigit(b[p]!)) {
    while (p < e && isDigit(b[p]!)) p++;
  } else {
    return -1;
  }
  if (p < e && b[p] === 0x2e) {
    p++;
    if (p >= e || !isDigit(b[p]!)) return -1;
    while (p < e && isDigit(b[p]!)) p++;
  }
  if (p < e && (b[p] === 0x65 || b[p] === 0x45)) {
    p++;
    if (p < e && (b[p] === 0x2b || b[p] === 0x2d)) p++;
    if (p >= e || !isDigit(b[p]!)) return -1;
    while (p < e && isDigit(b[p]!)) p++;
  }
  return p;
}

/** the end of the literal `word` (true, false, null) at p, or -1 */
export function wordEnd(b: Uint8Array, p: number, e: number, word: string): number {
  if (p + word.length > e) return -1;
  for (let i = 1; i < word.length; i++) if (b[p + i] !== word.charCodeAt(i)) return -1;
  return p + word.length;
}

/** The text of the JSON string token at bytes [s, e) (quotes included), as JSON.parse gives it. */
export function stringText(b: Uint8Array, s: number, e: number): string {
  for (let i = s + 1; i < e - 1; i++) {
    if (b[i] === BACKSLASH) return JSON.parse(Buffer.from(b.buffer, b.byteOffset + s, e - s).toString('utf8')) as string;
  }
  return Buffer.from(b.buffer, b.byteOffset + s + 1, e - s - 2).toString('utf8');
}

/** The value of the JSON number token at bytes [s, e), as JSON.parse gives it (Infinity out of range). */
export function numberValue(b: Uint8Array, s: number, e: number): number {
  if (e - s <= 15) {
    // digits only: exact as an integer below 2^53
    let v = 0;
    let i = s;
    for (; i < e; i++) {
      const c = b[i]!;
      if (c < 0x30 || c > 0x39) break;
      v = v * 10 + (c - 0x30);
    }
    if (i === e) return v;
  }
  return Number(Buffer.from(b.buffer, b.byteOffset + s, e - s).toString('latin1'));
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}
