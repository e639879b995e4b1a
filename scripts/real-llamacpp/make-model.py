#!/usr/bin/env python3
"""Write a small random-weight llama-architecture GGUF model for a real llama.cpp `llama-server`.

No model can be downloaded on the project's machines, and benchmarks send `ignore_eos` with a
fixed `max_tokens`, so the output length is forced and random weights are fine: what is measured is
the server's batching, streaming and timing, not the text.

Usage: make-model.py LLAMA_CPP_SOURCE_DIR OUT.gguf [--layers N] [--embd N] [--ctx N] [--no-byte-tokens]

It imports `gguf` from LLAMA_CPP_SOURCE_DIR/gguf-py (the llama.cpp repository's own writer) and copies
the vocabulary (tokens, scores, types, special ids) from LLAMA_CPP_SOURCE_DIR/models/ggml-vocab-llama-spm.gguf.
gguf-py imports `sentencepiece` at load time but never uses it to write a model; when it is not
installed a stand-in module is registered so the import succeeds.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama_vocab import Vocab, check_checkout  # noqa: E402

# A llama-2-style chat template (what the server's /apply-template and /v1/chat/completions render).
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ '<<SYS>>\\n' + message['content'] + '\\n<</SYS>>\\n\\n' }}"
    "{% elif message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + eos_token }}{% endif %}"
    "{% endfor %}"
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("llama_cpp_dir", type=Path, help="a llama.cpp source checkout (gguf-py/ and models/ are used)")
    ap.add_argument("out", type=Path, help="where to write the .gguf file")
    ap.add_argument("--layers", type=int, default=4, help="transformer blocks (default 4)")
    ap.add_argument("--embd", type=int, default=256, help="embedding width (default 256)")
    ap.add_argument("--heads", type=int, default=4, help="attention heads (default 4)")
    ap.add_argument("--ff", type=int, default=512, help="feed-forward width (default 512)")
    ap.add_argument("--ctx", type=int, default=65536, help="trained context length written to the model (default 65536)")
    ap.add_argument("--seed", type=int, default=1234, help="random seed of the weights (default 1234)")
    ap.add_argument("--no-byte-tokens", action="store_true",
                    help="write the 256 byte tokens (<0x00>..<0xFF>) as plain text tokens, so random output is always valid "
                         "UTF-8: llama.cpp from late 2025 parses each reply's text and fails the request (HTTP 500 at the "
                         "stream's end) on the stray bytes random weights sample, which no trained model emits")
    args = ap.parse_args()

    src = args.llama_cpp_dir.resolve()
    if check_checkout("make-model", src) != 0:
        return 2
    if args.embd % args.heads != 0:
        print(f"make-model: --embd ({args.embd}) must be a multiple of --heads ({args.heads})", file=sys.stderr)
        return 2

    import numpy as np

    vocab = Vocab("make-model", src)
    vocab_path = vocab.path
    gguf = vocab.gguf
    reader = vocab.reader
    field = vocab.field
    scalar = vocab.scalar

    tok_field = field("tokenizer.ggml.tokens")
    tokens = [bytes(tok_field.parts[i]) for i in tok_field.data]
    score_field = field("tokenizer.ggml.scores")
    scores = [float(score_field.parts[i][0]) for i in score_field.data]
    type_field = field("tokenizer.ggml.token_type")
    token_types = [int(type_field.parts[i][0]) for i in type_field.data]
    if args.no_byte_tokens:
        token_types = [int(gguf.TokenType.NORMAL) if t == int(gguf.TokenType.BYTE) else t for t in token_types]
    n_vocab = len(tokens)

    arch = "llama"
    w = gguf.GGUFWriter(str(args.out), arch)
    w.add_name("speed-matrix-random-llama")
    w.add_context_length(args.ctx)
    w.add_embedding_length(args.embd)
    w.add_block_count(args.layers)
    w.add_feed_forward_length(args.ff)
    w.add_head_count(args.heads)
    w.add_head_count_kv(args.heads)
    w.add_rope_dimension_count(args.embd // args.heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(token_types)
    w.add_bos_token_id(int(scalar("tokenizer.ggml.bos_token_id")))
    w.add_eos_token_id(int(scalar("tokenizer.ggml.eos_token_id")))
    w.add_unk_token_id(int(scalar("tokenizer.ggml.unknown_token_id")))
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    rng = np.random.default_rng(args.seed)

    def rand(*shape: int) -> "np.ndarray":
        # numpy shapes are (rows, cols); GGUF stores the reverse, as llama.cpp expects (n_embd, n_vocab) for
        # token_embd: numpy (n_vocab, n_embd)
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float16)

    def ones(n: int) -> "np.ndarray":
        return np.ones(n, dtype=np.float32)

    e, ff = args.embd, args.ff
    w.add_tensor("token_embd.weight", rand(n_vocab, e))
    w.add_tensor("output_norm.weight", ones(e))
    w.add_tensor("output.weight", rand(n_vocab, e))
    for i in range(args.layers):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", ones(e))
        w.add_tensor(b + "attn_q.weight", rand(e, e))
        w.add_tensor(b + "attn_k.weight", rand(e, e))
        w.add_tensor(b + "attn_v.weight", rand(e, e))
        w.add_tensor(b + "attn_output.weight", rand(e, e))
        w.add_tensor(b + "ffn_norm.weight", ones(e))
        w.add_tensor(b + "ffn_gate.weight", rand(ff, e))
        w.add_tensor(b + "ffn_up.weight", rand(ff, e))
        w.add_tensor(b + "ffn_down.weight", rand(e, ff))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"make-model: wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB; llama, {args.layers} layers, "
          f"embd {e}, vocab {n_vocab}, context {args.ctx})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
