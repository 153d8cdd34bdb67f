"""Token indexes: phrase search with exact match counts."""

from tipqa.indexes.token_index.base import TOKEN_INDEXES, TokenIndex, TokenResult

__all__ = ["TOKEN_INDEXES", "TokenIndex", "TokenResult"]
