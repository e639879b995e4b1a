"""Shared by make-model.py and make-tokenizer-json.py: open the llama SPM vocabulary of a
llama.cpp source checkout (models/ggml-vocab-llama-spm.gguf) with that checkout's own gguf-py,
read at run time (nothing of llama.cpp is kept here)."""
import sys
import types
from pathlib import Path


class Vocab:
    def __init__(self, prog: str, src: Path):
        self.prog = prog
        self.path = src / "models" / "ggml-vocab-llama-spm.gguf"
        try:
            import sentencepiece  # noqa: F401
        except ImportError:
            # gguf-py imports it at load time but never uses it to read or write a model
            sys.modules["sentencepiece"] = types.SimpleNamespace(SentencePieceProcessor=object)
        sys.path.insert(0, str(src / "gguf-py"))
        import gguf

        self.gguf = gguf
        self.reader = gguf.GGUFReader(str(self.path))

    def field(self, name: str):
        f = self.reader.fields.get(name)
        if f is None:
            raise SystemExit(f"{self.prog}: {self.path} has no {name}")
        return f

    def scalar(self, name: str, default=None, required: bool = True):
        f = self.reader.fields.get(name)
        if f is None:
            if required and default is None:
                raise SystemExit(f"{self.prog}: {self.path} has no {name}")
            return default
        return f.parts[f.data[0]][0]


def check_checkout(prog: str, src: Path) -> int:
    """0 when src is a llama.cpp checkout with gguf-py and the SPM vocabulary, else 2 (after saying why)."""
    if not (src / "gguf-py" / "gguf").is_dir():
        print(f"{prog}: {src}/gguf-py/gguf not found: pass the root of a llama.cpp source checkout", file=sys.stderr)
        return 2
    if not (src / "models" / "ggml-vocab-llama-spm.gguf").is_file():
        print(f"{prog}: {src}/models/ggml-vocab-llama-spm.gguf not found: check out the llama.cpp models/ folder", file=sys.stderr)
        return 2
    return 0
