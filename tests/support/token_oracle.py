"""The definition of a token query (tipqa.indexes.token_index.base), computed by brute force.

Every backend's results are checked against it: the tantivy tests (tests/tipqa/indexes/token_index),
the
Lucene semantics tests and the Elasticsearch cluster tests (tests/tipqa/indexes/es and token_index).
"""

from __future__ import annotations

from tipqa.core.records import Document, TokenHit
from tipqa.core.text import contains_phrase, count_phrase, tokenize
from tipqa.indexes.token_index.base import TokenResult


def oracle(
    documents: list[Document], keywords: list[str], aliases: list[str], k: int
) -> TokenResult:
    """Documents with all keywords and any alias, by frequency; blanks skipped, first id kept."""
    key = list(dict.fromkeys(tuple(p) for p in map(tokenize, keywords) if p))
    alias = list(dict.fromkeys(tuple(p) for p in map(tokenize, aliases) if p))
    if not alias:
        return TokenResult(0, [])
    first: dict[str, str] = {}
    for doc in documents:
        if doc.text.strip():
            first.setdefault(doc.id, doc.text)
    rows = []
    for doc_id, text in first.items():
        tokens = tokenize(text)
        if all(contains_phrase(tokens, p) for p in key) and any(
            contains_phrase(tokens, p) for p in alias
        ):
            rows.append((-sum(count_phrase(tokens, p) for p in dict.fromkeys(key + alias)), doc_id))
    rows.sort()
    return TokenResult(len(rows), [TokenHit(d, float(-f)) for f, d in rows[:k]])
