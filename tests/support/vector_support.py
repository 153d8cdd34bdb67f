"""Chunks and vectors for the vector-index tests."""

from __future__ import annotations

import numpy as np

from tipqa.core.records import Chunk


def make_chunks(n: int, start: int = 0) -> list[Chunk]:
    """n chunks of fake documents, two chunks per document."""
    return [
        Chunk(id=f"d{i // 2}#{i % 2}", doc_id=f"d{i // 2}", index=i % 2, text=f"text {i}")
        for i in range(start, start + n)
    ]


def clustered(n: int, dim: int, clusters: int, seed: int) -> np.ndarray:
    """Vectors around random centres (realistic for ANN; uniform noise is not)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim))
    labels = rng.integers(0, clusters, size=n)
    return (centres[labels] + 0.3 * rng.normal(size=(n, dim))).astype(np.float32)


def unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length."""
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
