/**
 * The simulator's tokenizer (src/sim/tokenizer.ts) as a Hugging Face `tokenizer.json`, so a run
 * with a local tokenizer (`target.tokenizer` / LLM_BENCH_TOKENIZER) against the sim counts exactly
 * what the sim counts: ground truth for the local-tokenizer path.
 *
 * How the rule maps onto the format:
 * - No normalizer, no added tokens (an added `<|x|>` token would be split out before the
 *   pre-tokenizer and lose the whitespace that follows it, which the sim joins to it).
 * - One `Split` pre-tokenizer, behavior `Isolated`: every match of PIECE_PATTERN is one piece; the
 *   text between matches becomes a piece too. Matches cover everything except the leading
 *   whitespace run, so that run is the one piece before the first match: the sim's "leading
 *   whitespace is one token".
 * - PIECE_PATTERN = (special | up to 4 non-whitespace characters, no special starting after the
 *   first) followed by all the whitespace after it. Whitespace is the sim's ASCII set
 *   (`[\t-\r ]`: \t \n \v \f \r and space), not `\s`, which also matches Unicode spaces.
 *   A special is `<|`, at most 28 non-whitespace characters none of which starts `|>`, then `|>`
 *   (at most 32 characters in all, ending at the first `|>`), as `specialLength` reads it.
 * - Model `WordPiece` with no continuation pieces: a piece either is one vocabulary entry (the
 *   generated "word " pieces, ids as the sim gives them) or becomes the one `<unk>` token. Either
 *   way one piece is one token. (WordPiece rather than WordLevel because every JavaScript reader
 *   of the format implements WordPiece; not all implement WordLevel.)
 * Ids of other pieces differ from the sim's hashed ids (all `<unk>`): only counts are meant to agree.
 */
import { GEN_PIECES } from './tokenizer.js';

/** The sim's whitespace, as a regex class body (Oniguruma and JavaScript read it alike). */
const WS = '\\t-\\r ';
const SPECIAL = `<\\|(?:(?!\\|>)[^${WS}]){0,28}\\|>`;
/** One sim token, whitespace run at the very start excepted (see the module comment). */
export const PIECE_PATTERN = `(?:${SPECIAL}|[^${WS}](?:(?!${SPECIAL})[^${WS}]){0,3})[${WS}]*`;

/** Characters outside the BMP: two UTF-16 code units, so two of the sim's characters. */
const ASTRAL_PATTERN = '[^\\x00-\\uFFFF]';

export const SIM_UNK_TOKEN = '<unk>';

/** A Hugging Face tokenizer.json whose token count equals the sim's `countTokens` for every text. */
export function simTokenizerJson(): object {
  const vocab: Record<string, number> = {};
  GEN_PIECES.forEach((p, id) => {
    vocab[p] = id;
  });
  vocab[SIM_UNK_TOKEN] = GEN_PIECES.length;
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    // none: an added token is split out before the pre-tokenizer (a literal "<unk>" in a text too)
    added_tokens: [],
    // the sim counts UTF-16 code units; the regex counts code points: an astral character becomes two
    normalizer: { type: 'Replace', pattern: { Regex: ASTRAL_PATTERN }, content: '\u00b7\u00b7' },
    pre_tokenizer: { type: 'Split', pattern: { Regex: PIECE_PATTERN }, behavior: 'Isolated', invert: false },
    post_processor: null,
    decoder: { type: 'Fuse' },
    model: {
      type: 'WordPiece',
      unk_token: SIM_UNK_TOKEN,
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 1_000_000,
      vocab,
    },
  };
}

/** simTokenizerJson() as the text of a tokenizer.json file. */
export function simTokenizerJsonText(): string {
  return `${JSON.stringify(simTokenizerJson(), null, 2)}\n`;
}
