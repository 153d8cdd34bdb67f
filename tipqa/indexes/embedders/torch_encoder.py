"""Encode texts with sentence-transformers on torch (fp32, bf16 autocast, or fp16 weights)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from tipqa.core.errors import ConfigError


class TorchEncoder:
    """A loaded `SentenceTransformer` (batches sorted by length inside its `encode`)."""

    def __init__(self, location: str, *, device: str, precision: str, batch_size: int) -> None:
        from sentence_transformers import SentenceTransformer

        try:
            self.model = SentenceTransformer(location, device=device)
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"cannot load embedding model from {location!r}: {exc} "
                "(a Hub id needs network access or a filled Hugging Face cache)"
            ) from exc
        if precision == "fp16":
            self.model.half()
        self.precision = precision
        self.batch_size = batch_size
        self.dimension = int(self.model.get_embedding_dimension())
        self.max_seq_length = int(self.model.max_seq_length)
        self.similarity_fn_name = str(self.model.similarity_fn_name)
        self.prompts: dict[str, str] = dict(getattr(self.model, "prompts", None) or {})

    @contextlib.contextmanager
    def _autocast(self) -> Iterator[None]:
        """Autocast to bfloat16 for precision "bf16", else nothing."""
        if self.precision != "bf16":
            yield
            return
        import torch

        with torch.autocast(self.model.device.type, dtype=torch.bfloat16):
            yield

    def encode(self, texts: list[str], normalize: bool) -> np.ndarray:
        """Float32 matrix (len(texts), dimension), in input order."""
        with self._autocast():
            vectors = self.model.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=normalize,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def count(self, texts: list[str]) -> list[int]:
        """Untruncated token counts, special tokens included."""
        encoded: Any = self.model.tokenizer(
            texts,
            add_special_tokens=True,
            truncation=False,
            verbose=False,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        return [len(ids) for ids in encoded["input_ids"]]
