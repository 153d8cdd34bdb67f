"""The embedder seam."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

import numpy as np

from tipqa.core.registry import Registry

Similarity = Literal["cosine", "dot_product", "l2_norm"]


class Embedder(Protocol):
    """Encodes questions and passages into vectors of one space."""

    name: str
    dimension: int
    max_seq_length: int
    similarity: Similarity

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Float32 matrix (len(texts), dimension) for questions (query prefix applied)."""
        ...

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        """Float32 matrix (len(texts), dimension) for chunks (passage prefix applied)."""
        ...

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Token counts of texts under the embedder's tokenizer (prefix included)."""
        ...


@runtime_checkable
class KnowsSequenceLength(Protocol):
    """Embedder settings that can tell the model's maximum sequence length without loading it."""

    def max_seq_length(self) -> int:
        """Tokens per chunk the model embeds (read from its configuration files)."""
        ...


EMBEDDERS: Registry[Embedder] = Registry("embedder")
EMBEDDERS.add(
    "sentence-transformers",
    "tipqa.indexes.embedders.sentence_transformers:SentenceTransformerEmbedder",
    settings="tipqa.indexes.embedders.sentence_transformers:SentenceTransformerSettings",
)
