"""Text embedders for the vector index."""

from tipqa.indexes.embedders.base import EMBEDDERS, Embedder

__all__ = ["EMBEDDERS", "Embedder"]
