"""Text embedders for the vector index."""

from tipqa.embedders.base import EMBEDDERS, Embedder

__all__ = ["EMBEDDERS", "Embedder"]
