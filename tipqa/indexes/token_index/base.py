"""The token-index seam.

A token query asks for the documents that contain **every** keyword as a phrase **and** at
least one answer alias as a phrase. Hits are ranked by *frequency*: the number of times the
query's phrases (every keyword and every alias) occur in the document, counted on the tokens
of `tipqa.core.text.tokenize`; ties go to the smaller document id. `total` is the exact number of
matching documents, which Algorithm 1 needs to tell "all k1 judged" from "more remain".

A token index may also rank documents for free text by BM25 (`RanksText`), for the vector
stage that embeds only the token index's best documents for each question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from tipqa.core.records import Document, TokenHit
from tipqa.core.registry import Registry

FetchDocuments = Callable[[list[str]], dict[str, Document]]
"""Stored documents by id (a token index's `get`); ids not found are absent from the result."""


@dataclass
class TokenResult:
    """The first k hits of a token query and the exact number of matching documents."""

    total: int
    hits: list[TokenHit]


class TokenIndex(Protocol):
    """A full-text index of the corpus that stores each document's text."""

    def build(self, documents: Iterable[Document]) -> dict[str, float]:
        """Index `documents` (idempotent by document id); return counts for the stats file."""
        ...

    def search(self, keywords: list[str], aliases: list[str], k: int) -> TokenResult:
        """Documents with all keywords and any alias, ranked by frequency, first k of them."""
        ...

    def get(self, doc_ids: list[str]) -> dict[str, Document]:
        """The stored documents with these ids (missing ids are absent from the result)."""
        ...

    def count(self) -> int:
        """Number of documents in the index."""
        ...


@runtime_checkable
class RanksText(Protocol):
    """A token index that ranks its documents by BM25 for a free text.

    A text is the OR of its distinct tokens (`tipqa.core.text.tokenize`, as the index analyses
    text); a document's score is the sum over those tokens t that it contains of
    idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)), with BM25's k1 = 1.2 (a
    constant of the formula, not Algorithm 1's k1) and b = 0.75 (the defaults of tantivy and
    of Lucene, hence Elasticsearch), idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) over the N
    documents of the index, tf the token's frequency in the document, dl the document's length
    in tokens and avgdl its mean. Both engines store dl in one byte (exact up to 40 tokens,
    within 1/16 above) and Lucene drops the constant factor k1 + 1, which changes no order. A
    text without a token, or whose tokens no document has, gets []; n < 1 is a ConfigError.
    """

    def rank_texts(self, texts: list[str], n: int) -> list[list[str]]:
        """Per text, the ids of its n best documents by BM25, ties by smaller id; n >= 1."""
        ...


TOKEN_INDEXES: Registry[TokenIndex] = Registry("token index")
TOKEN_INDEXES.add(
    "tantivy",
    "tipqa.indexes.token_index.tantivy:TantivyTokenIndex",
    settings="tipqa.indexes.token_index.tantivy:TantivySettings",
)
TOKEN_INDEXES.add(
    "elasticsearch",
    "tipqa.indexes.token_index.elasticsearch:ElasticsearchTokenIndex",
    settings="tipqa.indexes.token_index.elasticsearch:ElasticsearchTokenSettings",
)
