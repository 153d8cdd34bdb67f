"""Vector indexes: nearest chunks to a question embedding."""

from tipqa.indexes.vector_index.base import VECTOR_INDEXES, VectorIndex

__all__ = ["VECTOR_INDEXES", "VectorIndex"]
