/**
 * The simulator's tokenizer: deterministic, cheap, and the same for the tokenize endpoints, the
 * usage counts and the prefix cache, so prompt calibration against the sim can be exact.
 *
 * Rule (one left-to-right scan, no lookup tables):
 * - Whitespace at the very start of the text is one token.
 * - Every other token is a piece of up to 4 non-whitespace characters; a word (maximal run of
 *   non-whitespace) of L characters gives ceil(L / 4) pieces. The whitespace that follows a word
 *   belongs to its last piece (so "ab  cd\n" is 2 tokens: "ab  " and "cd\n").
 * - A special marker `<|name|>` (no whitespace inside, at most 32 characters) at a piece start is
 *   one token; the chat template uses these.
 * Generated text is made of words of 1–4 letters each followed by one space, so n generated
 * tokens always tokenize back to exactly n.
 */
import { fnv1a } from '../random.js';

const MAX_PIECE_CHARS = 4;
const MAX_SPECIAL_CHARS = 32;

function isSpace(code: number): boolean {
  // space, \t, \n, \v, \f, \r
  return code === 32 || (code >= 9 && code <= 13);
}

/** Length of a `<|...|>` marker starting at i, or 0. */
function specialLength(text: string, i: number): number {
  if (text.charCodeAt(i) !== 60 /* < */ || text.charCodeAt(i + 1) !== 124 /* | */) return 0;
  const end = Math.min(text.length, i + MAX_SPECIAL_CHARS);
  for (let j = i + 2; j < end - 1; j++) {
    const c = text.charCodeAt(j);
    if (isSpace(c)) return 0;
    if (c === 124 && text.charCodeAt(j + 1) === 62 /* > */) return j + 2 - i;
  }
  return 0;
}

/**
 * Walks the text and calls `onToken(start, end)` for every token (character offsets, end
 * exclusive). Returns the token count. `onToken` may be omitted when only the count is needed.
 */
export function scanTokens(text: string, onToken?: (start: number, end: number) => void): number {
  const n = text.length;
  let i = 0;
  let count = 0;
  if (n > 0 && isSpace(text.charCodeAt(0))) {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    count++;
    onToken?.(0, i);
  }
  while (i < n) {
    const start = i;
    const special = specialLength(text, i);
    if (special > 0) {
      i += special;
    } else {
      const limit = Math.min(n, i + MAX_PIECE_CHARS);
      while (i < limit && !isSpace(text.charCodeAt(i)) && (i === start || specialLength(text, i) === 0)) i++;
    }
    // trailing whitespace joins the piece when the word ends here
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    count++;
    onToken?.(start, i);
  }
  return count;
}

/** Number of tokens in `text` under the rule above. */
export function countTokens(text: string): number {
  return scanTokens(text);
}

/** Vocabulary of generated words: 1–4 lowercase letters, each used with one trailing space. */
const GEN_WORDS = (
  'the a of to and in is it for on be as at by we or an so if no up do go me my us our one two ' +
  'run sim fast slow data time step load kv fit cell row grid tok rate each more less true test ' +
  'node loop byte core when then with from into over long wide deep calm warm cool blue red gold'
).split(' ');

/** The generated-text pieces, each one token ("word "). */
export const GEN_PIECES: readonly string[] = GEN_WORDS.map((w) => `${w} `);

/** Token id space: generated pieces have ids 0..GEN_PIECES.length-1, others are hashed above. */
const HASHED_ID_BASE = 1000;
const HASHED_ID_SPAN = 150_000;

/** The piece emitted as generated token number `index` (0-based) of a request seeded `seed`. */
export function genPiece(seed: number, index: number): string {
  return GEN_PIECES[(seed + index * 7) % GEN_PIECES.length] as string;
}

/**
 * Maps tokens to ids and back. Ids of generated pieces are fixed; other pieces get a hashed id
 * and are remembered (bounded) so detokenize(tokenize(x)) round-trips within one server.
 */
export class TokenVocab {
  private readonly idOf = new Map<string, number>();
  private readonly pieceOf = new Map<number, string>();
  constructor(private readonly maxRemembered = 200_000) {
    GEN_PIECES.forEach((p, id) => {
      this.idOf.set(p, id);
      this.pieceOf.set(id, p);
    });
  }

  tokenize(text: string): { ids: number[]; pieces: string[] } {
    const ids: number[] = [];
    const pieces: string[] = [];
    scanTokens(text, (s, e) => {
      const piece = text.slice(s, e);
      let id = this.idOf.get(piece);
      if (id === undefined) {
        id = HASHED_ID_BASE + (fnv1a(piece) % HASHED_ID_SPAN);
        if (this.pieceOf.size < this.maxRemembered && !this.pieceOf.has(id)) {
          this.pieceOf.set(id, piece);
          this.idOf.set(piece, id);
        }
      }
      ids.push(id);
      pieces.push(piece);
    });
    return { ids, pieces };
  }

  detokenize(ids: readonly number[]): string {
    let out = '';
    for (const id of ids) out += this.pieceOf.get(id) ?? '<unk> ';
    return out;
  }
}
