#!/usr/bin/env python3
"""Write a Hugging Face tokenizer.json equivalent to llama.cpp's SPM tokenizer for the vocabulary of
LLAMA_CPP_SOURCE_DIR/models/ggml-vocab-llama-spm.gguf (the one make-model.py copies into the
random-weight model), so a run against that server can use a local tokenizer
(LLM_BENCH_TOKENIZER=OUT.json) and its counts can be checked against the server's /tokenize.

Usage: make-tokenizer-json.py LLAMA_CPP_SOURCE_DIR OUT.json

It imports `gguf` from LLAMA_CPP_SOURCE_DIR/gguf-py (the llama.cpp repository's own reader), as
make-model.py does; nothing is downloaded.

How llama.cpp's SPM tokenizer (add_special false, parse_special true, as the server's /tokenize
calls it) maps onto the format:
- Control and unknown tokens (`<unk>`, `<s>`, `</s>`) written in the text are single tokens: they
  are `added_tokens` (special), split out before anything else.
- Every other stretch of text gets a space in front (llama.cpp: "prefix with space if previous is
  special", and at the start) and its spaces become U+2581: normalizer Prepend + Replace.
- The stretch is split into characters and adjacent symbols are merged while their concatenation
  is a vocabulary piece, highest score first, leftmost first on a tie: model BPE whose merges are
  every (left, right) split of every piece whose halves are pieces too, ranked by the piece's score
  (higher first). The only tied scores among merge results are the whitespace runs (U+2581 x 2..16,
  score -1e9); ranking the longer run first reproduces the leftmost-first rule for them (a run
  grows from its left end). Several splits of one piece are ranked shortest left half first.
- A symbol that is not a piece is written as its UTF-8 bytes (`<0xXX>` tokens): byte_fallback.
Token ids equal llama.cpp's.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama_vocab import Vocab, check_checkout  # noqa: E402

SPACE = "\u2581"
# llama.cpp token types (gguf TokenType): 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
UNKNOWN, CONTROL, USER_DEFINED = 2, 3, 4


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("llama_cpp_dir", type=Path, help="a llama.cpp source checkout (gguf-py/ and models/ are used)")
    ap.add_argument("out", type=Path, help="where to write tokenizer.json")
    args = ap.parse_args()

    src = args.llama_cpp_dir.resolve()
    if check_checkout("make-tokenizer-json", src) != 0:
        return 2
    vocab = Vocab("make-tokenizer-json", src)
    vocab_path = vocab.path
    field = vocab.field

    def scalar(name: str, default=None):
        return vocab.scalar(name, default, required=False)

    model = bytes(field("tokenizer.ggml.model").parts[field("tokenizer.ggml.model").data[0]]).decode()
    if model != "llama":
        raise SystemExit(f"make-tokenizer-json: {vocab_path} is a {model!r} vocabulary; this script writes SPM ('llama') ones only")
    tok_field = field("tokenizer.ggml.tokens")
    tokens = [bytes(tok_field.parts[i]).decode("utf-8") for i in tok_field.data]
    score_field = field("tokenizer.ggml.scores")
    scores = [float(score_field.parts[i][0]) for i in score_field.data]
    type_field = field("tokenizer.ggml.token_type")
    token_types = [int(type_field.parts[i][0]) for i in type_field.data]
    unk_id = int(scalar("tokenizer.ggml.unknown_token_id", 0))
    # llama.cpp's default for SPM vocabularies when the key is absent
    add_space_prefix = bool(scalar("tokenizer.ggml.add_space_prefix", True))
    if any(t == USER_DEFINED for t in token_types):
        raise SystemExit("make-tokenizer-json: user-defined tokens are not handled; this vocabulary needs more than this script does")

    vocab = {tok: i for i, tok in enumerate(tokens)}
    # merge results: normal pieces of 2+ characters (byte and control tokens are not merged into
    # by text in practice, and llama.cpp's special handling of them comes first)
    ranked = []
    for i, piece in enumerate(tokens):
        if token_types[i] != 1 or len(piece) < 2:
            continue
        ranked.append((-scores[i], -len(piece), i))
    ranked.sort()
    merges = []
    for _, _, i in ranked:
        piece = tokens[i]
        for k in range(1, len(piece)):
            left, right = piece[:k], piece[k:]
            if left in vocab and right in vocab:
                merges.append([left, right])

    added = [
        {"id": i, "content": tokens[i], "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        for i in range(len(tokens))
        if token_types[i] in (UNKNOWN, CONTROL)
    ]
    normalizers = [{"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]
    if add_space_prefix:
        normalizers.insert(0, {"type": "Prepend", "prepend": SPACE})
    out = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
                *([{"type": "Strip", "content": " ", "start": 1, "stop": 0}] if add_space_prefix else []),
            ],
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": tokens[unk_id],
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": True,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
        },
    }
    args.out.write_text(json.dumps(out, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"make-tokenizer-json: wrote {args.out} ({len(tokens)} tokens, {len(merges)} merges, from {vocab_path.name})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
