#!/usr/bin/env bash
# Starts a real llama.cpp `llama-server` on loopback with a small random-weight model, for the
# `real` test project (LLM_BENCH_REAL_URL) and for recording wire transcripts.
#
#   LLAMA_SERVER=/path/to/llama-server LLAMA_CPP_SRC=/path/to/llama.cpp scripts/real-llamacpp/serve.sh [PORT]
#
# LLAMA_SERVER: a llama-server binary built from llama.cpp's public source with its own build
#   instructions (this project never ships llama.cpp's sources or binaries).
# LLAMA_CPP_SRC: that llama.cpp source checkout: make-model.py uses its gguf-py and copies the
#   vocabulary of models/ggml-vocab-llama-spm.gguf.
# MODEL (optional): where the model is written once (default ~/.cache/llm-speed-matrix/random-llama.gguf).
# PORT: default 8080. Flags: 65,536 tokens of KV cache over 4 slots (16,384 each), 2 threads,
#   --metrics and --slots (the tool reads both), flash attention.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
port=${1:-8080}
: "${LLAMA_SERVER:?set LLAMA_SERVER to a llama-server binary, built from the public llama.cpp source}"
: "${LLAMA_CPP_SRC:?set LLAMA_CPP_SRC to the llama.cpp source checkout, for gguf-py and the llama SPM vocabulary}"
[ -x "$LLAMA_SERVER" ] || { echo "serve.sh: LLAMA_SERVER=$LLAMA_SERVER is not an executable file" >&2; exit 2; }
model=${MODEL:-$HOME/.cache/llm-speed-matrix/random-llama.gguf}
if [ ! -s "$model" ]; then
  mkdir -p "$(dirname "$model")"
  python3 "$here/make-model.py" "$LLAMA_CPP_SRC" "$model"
fi
echo "serve.sh: http://127.0.0.1:$port  (LLM_BENCH_REAL_URL=http://127.0.0.1:$port npm run test:real)" >&2
exec "$LLAMA_SERVER" -m "$model" -c 65536 -np 4 -t 2 --metrics --slots -fa --host 127.0.0.1 --port "$port"
