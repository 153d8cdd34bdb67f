"""Export a sentence-transformers folder to ONNX once, offline, into a folder named by its content.

The export holds `model.onnx` (the transformer, fp32, dynamic batch and sequence axes, opset 17,
written by `torch.onnx.export`), `tokenizer.json` (the fast tokenizer as the model uses it) and
`export.json` (what encoding needs besides the graph: pooling, normalisation, sequence limit,
prompts, similarity). Its folder name is derived from a hash of every file of the model folder
and of this exporter's version, so a changed model exports again and an unchanged one never
does. The folder is written under a temporary name and renamed, so a crash leaves nothing that
looks finished. Only export needs torch and sentence-transformers; encoding needs onnxruntime and
tokenizers.

optimum is deliberately not used: its releases pin transformers 4, which breaks
sentence-transformers 6 (see the project's stack notes).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.jsonl import read_json, write_json
from tipqa.core.scratch import scratch_folder

EXPORT_VERSION = 1
OPSET = 17
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
METADATA_FILE = "export.json"
POOLINGS = ("mean", "cls")
_HASH_BLOCK = 1 << 20


@dataclass(frozen=True)
class ExportInfo:
    """What encoding with an exported model needs besides the graph (from `export.json`)."""

    folder: Path
    model_sha256: str
    dimension: int
    max_seq_length: int
    pooling: str
    normalize: bool
    do_lower_case: bool
    similarity_fn_name: str
    prompts: dict[str, str]
    inputs: tuple[str, ...]
    pad_token_id: int

    @property
    def model_file(self) -> Path:
        """The ONNX graph."""
        return self.folder / MODEL_FILE

    @property
    def tokenizer_file(self) -> Path:
        """The fast tokenizer's JSON."""
        return self.folder / TOKENIZER_FILE


def default_cache_root() -> Path:
    """Where exports go: $TIPQA_CACHE_DIR, else $XDG_CACHE_HOME/tipqa, else ~/.cache/tipqa."""
    explicit = os.environ.get("TIPQA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tipqa"


def folder_sha256(folder: Path) -> str:
    """A hash of every file of `folder` (relative path and bytes), in sorted order."""
    if not folder.is_dir():
        raise ConfigError(f"cannot load embedding model from {str(folder)!r}: no such folder")
    digest = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts)
    if not files:
        raise ConfigError(f"cannot load embedding model from {str(folder)!r}: the folder is empty")
    for path in files:
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        with open(path, "rb") as handle:
            while block := handle.read(_HASH_BLOCK):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def export_folder(model_folder: Path, cache_root: Path) -> tuple[Path, str]:
    """The export folder of `model_folder` under `cache_root`, and the model's content hash."""
    sha = folder_sha256(model_folder)
    name = f"{model_folder.name.lower()}-{sha[:16]}-v{EXPORT_VERSION}"
    return cache_root / "onnx" / name, sha


def ensure_export(
    model_folder: str | os.PathLike[str], cache_root: Path | None = None
) -> ExportInfo:
    """The ONNX export of a local sentence-transformers folder, made now if not cached."""
    source = Path(model_folder)
    target, sha = export_folder(source, cache_root or default_cache_root())
    if (target / METADATA_FILE).is_file():
        return read_export(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = scratch_folder(target.parent, prefix=f".{target.name}.")
    try:
        _export(source, sha, scratch)
        try:
            os.rename(scratch, target)
        except OSError:
            if not (target / METADATA_FILE).is_file():
                raise
            # another process finished the same export first; its files are identical in use
    finally:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(scratch)
    return read_export(target)


def read_export(folder: Path) -> ExportInfo:
    """Read and check an export's `export.json` (an error names the file and field)."""
    path = folder / METADATA_FILE
    data = read_json(path)
    if not isinstance(data, dict) or data.get("version") != EXPORT_VERSION:
        raise InputError(f"not a tipqa ONNX export of version {EXPORT_VERSION}", path=str(path))
    checks: dict[str, type | tuple[type, ...]] = {
        "model_sha256": str,
        "dimension": int,
        "max_seq_length": int,
        "pooling": str,
        "normalize": bool,
        "do_lower_case": bool,
        "similarity_fn_name": str,
        "prompts": dict,
        "inputs": list,
        "pad_token_id": int,
    }
    for name, kind in checks.items():
        if not isinstance(data.get(name), kind):
            raise InputError("missing or of the wrong type", path=str(path), field=name)
    for name in (MODEL_FILE, TOKENIZER_FILE):
        if not (folder / name).is_file():
            raise InputError(f"the export has no {name}", path=str(folder))
    return ExportInfo(
        folder=folder,
        model_sha256=data["model_sha256"],
        dimension=data["dimension"],
        max_seq_length=data["max_seq_length"],
        pooling=data["pooling"],
        normalize=data["normalize"],
        do_lower_case=data["do_lower_case"],
        similarity_fn_name=data["similarity_fn_name"],
        prompts={str(k): str(v) for k, v in data["prompts"].items()},
        inputs=tuple(str(name) for name in data["inputs"]),
        pad_token_id=data["pad_token_id"],
    )


def _modules(model: Any) -> tuple[Any, str, bool]:
    """The transformer module, the pooling mode and whether a Normalize module follows.

    Only the common layout Transformer -> Pooling (mean or CLS) [-> Normalize] is exported;
    anything else (dense heads, routers, other poolings) must use the torch runtime.
    """
    names = [type(module).__name__ for module in model]
    unsupported = ConfigError(
        f"runtime onnx supports Transformer -> Pooling (mean or cls) [-> Normalize] models; "
        f"this one is {' -> '.join(names)}: use runtime = torch"
    )
    if len(names) not in (2, 3) or names[0] != "Transformer" or names[1] != "Pooling":
        raise unsupported
    if len(names) == 3 and names[2] != "Normalize":
        raise unsupported
    pooling = str(model[1].get_config_dict().get("pooling_mode", ""))
    if pooling not in POOLINGS:
        raise unsupported
    return model[0], pooling, len(names) == 3


def _keyword_graph(transformer: Any, inputs: tuple[str, ...]) -> Any:
    """The transformer as a module of positional tensors passed on by name (transformers 5
    takes only keyword inputs), returning the last hidden state."""
    import torch

    class KeywordGraph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *tensors: Any) -> Any:
            return self.inner(**dict(zip(inputs, tensors, strict=True))).last_hidden_state

    return KeywordGraph().eval()


def _export(source: Path, sha: str, out: Path) -> None:
    """Write model.onnx, tokenizer.json and export.json of `source` into `out`."""
    import torch
    from sentence_transformers import SentenceTransformer

    try:
        model = SentenceTransformer(str(source), device="cpu")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot load embedding model from {str(source)!r}: {exc}") from exc
    transformer, pooling, normalize = _modules(model)
    tokenizer = model.tokenizer
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(f"{source}: runtime onnx needs a fast tokenizer (tokenizer.json)")
    sample = tokenizer(
        ["an example", "a second, longer example"], padding=True, return_tensors="pt"
    )
    inputs = tuple(
        name for name in ("input_ids", "attention_mask", "token_type_ids") if name in sample
    )
    axes = {name: {0: "batch", 1: "sequence"} for name in (*inputs, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        # tracing warns about shape checks that it folds; the agreement tests cover the graph
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", module="torch.onnx")
        torch.onnx.export(
            _keyword_graph(transformer.auto_model, inputs),
            tuple(sample[name] for name in inputs),
            str(out / MODEL_FILE),
            input_names=list(inputs),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )
    backend = tokenizer.backend_tokenizer
    backend.no_truncation()
    backend.no_padding()
    backend.save(str(out / TOKENIZER_FILE))
    write_json(
        out / METADATA_FILE,
        {
            "version": EXPORT_VERSION,
            "model_sha256": sha,
            "dimension": int(model.get_embedding_dimension()),
            "max_seq_length": int(model.max_seq_length),
            "pooling": pooling,
            "normalize": normalize,
            "do_lower_case": bool(getattr(transformer, "do_lower_case", False)),
            "similarity_fn_name": str(model.similarity_fn_name),
            "prompts": dict(getattr(model, "prompts", None) or {}),
            "inputs": list(inputs),
            "pad_token_id": int(tokenizer.pad_token_id or 0),
            "opset": OPSET,
            "torch": torch.__version__,
        },
    )
