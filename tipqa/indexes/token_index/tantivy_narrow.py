"""Queries with very common tokens, matched first through their other tokens.

tantivy seeks in a posting list by walking its skip entries one block (128 documents) at a
time, so a phrase, or an AND, with a token of millions of documents ("the", "of") costs time
in proportion to that token's documents, however rare the others are: in 10M documents, a
token of 3 documents AND "the" takes 0.6 ms, the token alone 0.008 ms. Lucene's multi-level
skip lists do not pay this, and its entity queries were 3x faster at 10M.

So where a query's phrases hold such *common* tokens, the search first finds the candidates:
each phrase reduced to its other tokens, at their offsets in the phrase (a phrase of common
tokens only is kept whole, or left out if it is a keyword: every match is still a candidate).
Each candidate is then counted on its text, phrase by phrase, which decides both whether it
matches (every keyword, some alias) and its frequency: the result is exact. That pays while the
candidates' reading costs less than the walk it saves: a skip entry walked costs about 8 ns and
a candidate read and counted about 16 us (both measured on the 10M benchmark index), so a query
may read one candidate per READ_BLOCKS blocks of its common tokens' documents (at most
MOST_CANDIDATES). When its rare tokens' documents could hold more candidates than that, the
query runs as written (`tantivy_rank`).
"""

from __future__ import annotations

from typing import Any

from tipqa.core.records import TokenHit
from tipqa.indexes.token_index import tantivy_schema as fields
from tipqa.indexes.token_index.base import TokenResult
from tipqa.indexes.token_index.tantivy_query import Queries
from tipqa.indexes.token_index.tantivy_verify import (
    SHORT_BYTES,
    Phrase,
    PhraseCounter,
    Probe,
    Verified,
    address_key,
)

BLOCK_DOCS = 128  # documents of a tantivy posting block (one skip entry)
READ_BLOCKS = 2000  # skip entries walked in the time of one candidate read and counted
COMMON_DOCS = BLOCK_DOCS * READ_BLOCKS  # a token in more documents is common
MOST_CANDIDATES = 400  # never more candidates than this are read


def narrowed(queries: Queries, phrase: Phrase, common: set[str]) -> Any:
    """The query of `phrase` without its common tokens (the others at their offsets); the
    phrase itself when none or all of its tokens are common."""
    kept = [(offset, token) for offset, token in enumerate(phrase) if token not in common]
    if len(kept) in (0, len(phrase)):
        return queries.phrase(phrase)
    if len(kept) == 1:
        return queries.term(fields.TEXT, kept[0][1])
    return queries.tantivy.Query.phrase_query(queries.schema, fields.TEXT, kept)


def candidates_query(
    queries: Queries, keywords: list[Phrase], aliases: list[Phrase], common: set[str]
) -> Any:
    """Documents with every keyword and some alias, each without its common tokens."""
    tantivy = queries.tantivy
    must, should = tantivy.Occur.Must, tantivy.Occur.Should
    rare_keywords = [k for k in keywords if any(token not in common for token in k)]
    alias_query = tantivy.Query.boolean_query(
        [(should, narrowed(queries, a, common)) for a in aliases]
    )
    clauses = [(must, narrowed(queries, k, common)) for k in rare_keywords]
    query = tantivy.Query.boolean_query([*clauses, (must, alias_query)])
    return tantivy.Query.const_score_query(query, 0.0)


def most_candidates(
    keywords: list[Phrase], aliases: list[Phrase], documents: dict[str, int], common: set[str]
) -> int:
    """An upper bound of the candidates: the documents of a keyword's rarest token, or of the
    aliases' rarest tokens together, whichever is smaller (a reduced phrase keeps its rarest
    token)."""

    def rarest(phrase: Phrase) -> int:
        return min(documents[token] for token in phrase)

    bounds = [rarest(k) for k in keywords if any(token not in common for token in k)]
    return min([*bounds, sum(rarest(a) for a in aliases)])


def search(
    queries: Queries, keywords: list[Phrase], aliases: list[Phrase], k: int
) -> TokenResult | None:
    """The exact result from the candidates, or None when no phrase has a common token or
    there could be more candidates than reading them saves (see the module docstring)."""
    searcher = queries.searcher
    tokens = {token for phrase in (*keywords, *aliases) for token in phrase}
    documents = {token: searcher.doc_freq(fields.TEXT, token) for token in tokens}
    common = {token for token, n in documents.items() if n > COMMON_DOCS}
    walked = sum(documents[token] for token in common) / BLOCK_DOCS
    budget = min(int(walked / READ_BLOCKS), MOST_CANDIDATES)
    bound = most_candidates(keywords, aliases, documents, common)
    if not common or bound > budget:
        return None
    query = candidates_query(queries, keywords, aliases, common)
    found = searcher.search(query, max(bound, 1), count=False)
    distinct = list(dict.fromkeys([*keywords, *aliases]))
    count = PhraseCounter(distinct)
    probe = None
    matches = []
    for _, address in found.hits:
        doc_id, body = queries.stored(address)
        if len(body) <= SHORT_BYTES:
            counts = dict(zip(distinct, map(float, count.each(body)), strict=True))
        else:
            probe = probe or Probe(searcher, queries.phrase, distinct)
            counts = probe.counts(address)
        if all(counts[p] for p in keywords) and any(counts[p] for p in aliases):
            matches.append((address_key(address), doc_id, float(sum(counts.values()))))
    state = Verified(k)
    state.add_all(matches)
    return TokenResult(len(matches), [TokenHit(doc_id, value) for doc_id, value in state.top()])
