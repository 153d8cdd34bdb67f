"""Ranking by frequency inside tantivy, exact at any number of matches.

Frequency (`tipqa.indexes.token_index.base`) is the number of occurrences of the query's distinct
phrases. tantivy scores by BM25, which prefers short documents, so the query is scored
differently: the match condition is kept as a filter with score 0, and every phrase adds a
sum of constant scores built from the `repeats` field (`tantivy_schema`):

- a one-token phrase adds 1 for the `text` term and the value of every `repeats` term of the
  token that the document has: exactly the token's frequency, computed from the index alone;
- a longer phrase adds the frequency of one of its tokens (the rarest not counted already by
  another phrase), an upper bound of its own count, in the documents where it occurs.

When every phrase is one token, tantivy's top hits by that score are the top hits by
frequency. Otherwise the top hits by the bound are *verified* (`tantivy_verify`), in ranking
order of their bounds (bound, then id), until the k-th best document found ranks before
every document not verified: its frequency is above their bound, or equal to it with a
smaller id. Ties are ordered by document id (`tantivy_ids`), as Elasticsearch's sort does.
At most DIRECT * k matches (k, when every phrase is one token) are simply all counted.

*Tiers.* Scoring every match costs about twice counting them. The documents that can reach
the first k are those where some scored token occurs often, so the search first looks only at
matches where a token's `repeats` value reaches a level L (a few `repeats` terms, a small
set): a document outside that tier has every scored token at most L times, so its frequency is
at most m * L for m scored tokens. When the k-th best frequency found beats that, the answer
is exact; otherwise the level is lowered, down to all matches. Cost grows with the documents
of the tiers visited, not with the stored text of the matches.

A query with tokens of very many documents ("the", "of") is answered from the candidates that
its other tokens find when they are few (`tantivy_narrow`); `tantivy.py` tries that first.
"""

from __future__ import annotations

from collections.abc import Iterator
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

GROWTH = 4
DIRECT = 4
LEVEL_STEP = 4
TIER_TARGET = 4  # a tier should hold about this many times k matches (estimated)

Repeats = list[tuple[str, int, int]]  # a token's `repeats` terms: (term, value, documents)


class Ranker(Queries):
    """Ranking by frequency over one tantivy searcher (see the module docstring)."""

    # ranking
    def repeats(self, token: str) -> Repeats:
        """The `repeats` terms of `token`: what each adds to its frequency, and in how many
        documents it is."""
        found = []
        for separator in (fields.LOW, fields.HIGH):
            prefix = token + separator
            for term, documents in self.searcher.terms_with_prefix(fields.REPEATS, prefix):
                found.append((term, fields.term_value(term, len(prefix)), documents))
        return found

    def frequency_clauses(self, token: str, repeats: Repeats, present: bool) -> list[Any]:
        """Should clauses whose scores add up to the frequency of `token` in a document, less
        one when the token is `present` in every match (that one is added to every score)."""
        const, should = self.tantivy.Query.const_score_query, self.tantivy.Occur.Should
        clauses = [] if present else [(should, const(self.term(fields.TEXT, token), 1.0))]
        for term, value, _ in repeats:
            clauses.append((should, const(self.term(fields.REPEATS, term), float(value))))
        return clauses

    def tier(self, repeats: list[Repeats], level: int) -> Any:
        """Documents where some scored token occurs more than `level` times."""
        terms = [
            term for found in repeats for term, value, _ in found if _reaches(term, value, level)
        ]
        should = self.tantivy.Occur.Should
        union = self.tantivy.Query.boolean_query(
            [(should, self.term(fields.REPEATS, t)) for t in terms]
        )
        return self.tantivy.Query.const_score_query(union, 0.0)

    def bounding(self, phrase: Phrase, taken: set[str]) -> str:
        """The token of `phrase` whose frequency bounds the phrase's count: one that no other
        phrase of the query counts already (a one-token phrase, or a bound), then the one in
        the fewest documents."""
        return min(
            (token in taken, self.searcher.doc_freq(fields.TEXT, token), token) for token in phrase
        )[2]

    # searching

    def search(self, keywords: list[Phrase], aliases: list[Phrase], k: int) -> TokenResult:
        """The first k matches by frequency (ties by document id), and the exact total.

        When at most k documents match (DIRECT * k when a phrase has several tokens, whose
        bounds would have to be verified anyway), each is counted directly; otherwise tantivy
        ranks by the bounds above.
        """
        distinct = list(dict.fromkeys([*keywords, *aliases]))
        unscored = self.tantivy.Query.const_score_query(self.match(keywords, aliases), 0.0)
        bounded = any(len(phrase) > 1 for phrase in distinct)
        direct = DIRECT * k if bounded else k
        first = self.searcher.search(unscored, direct + 1, count=True)
        if k == 0:
            return TokenResult(first.count, [])
        if first.count <= direct:
            state = Verified(k)
            self._count_all(first.hits, state, PhraseCounter(distinct))
            return self._ranked(first.count, state)
        state = self._rank(unscored, keywords, aliases, distinct, k, first.count)
        return self._ranked(first.count, state)

    def _rank(
        self,
        unscored: Any,
        keywords: list[Phrase],
        aliases: list[Phrase],
        distinct: list[Phrase],
        k: int,
        total: int,
    ) -> Verified:
        """Verify documents tier by tier until the first k are known (see the docstring)."""
        must = self.tantivy.Occur.Must
        taken = {phrase[0] for phrase in distinct if len(phrase) == 1}
        bounded: dict[Phrase, str] = {}
        for phrase in sorted((p for p in distinct if len(p) > 1), key=len):
            bounded[phrase] = self.bounding(phrase, taken)
            taken.add(bounded[phrase])
        tokens = [bounded.get(phrase, phrase[0]) for phrase in distinct]
        repeats = [self.repeats(token) for token in tokens]
        # keyword phrases (and a lone alias) occur in every match, and so do their tokens:
        # their first occurrence is added to every score instead of being scored by tantivy
        present = {*keywords, *(aliases if len(aliases) == 1 else [])}
        scoring = [(must, unscored)]
        for phrase, token, found in zip(distinct, tokens, repeats, strict=True):
            clauses = self.frequency_clauses(token, found, phrase in present or len(phrase) > 1)
            if len(phrase) > 1 and phrase not in present:
                # an alias phrase bounds its count only where it occurs: its first occurrence
                # scores 1, the repeats of its bounding token the rest
                first = self.tantivy.Query.const_score_query(self.phrase(phrase), 1.0)
                clauses = [
                    (
                        self.tantivy.Occur.Should,
                        self.tantivy.Query.boolean_query([(must, first), *clauses]),
                    )
                ]
            scoring.extend(clauses)
        offset = float(len(present))
        probe = _Correction(self, bounded) if bounded else None
        state = Verified(k)
        count = PhraseCounter(distinct)
        share = total / max(self.searcher.num_docs, 1)
        for level in _levels(repeats, k, share):
            clauses = scoring if level == 0 else [*scoring, (must, self.tier(repeats, level))]
            query = self.tantivy.Query.boolean_query(clauses)
            outside = len(tokens) * level if level else float("-inf")
            limit = 2 * k if probe else 4 * k + 16
            while True:
                found = self.searcher.search(query, limit, count=False).hits
                hits = [(bound + offset, address) for bound, address in found]
                complete = len(hits) < limit
                stopped = self._verify(hits, complete, state, probe, count)
                if stopped or complete or state.beats(hits[-1][0]):
                    break
                limit *= GROWTH
            if state.beats(outside):
                break
        return state

    def _count_all(self, hits: list[Any], state: Verified, count: PhraseCounter) -> None:
        """Add the exact frequency of every hit to `state` (see `frequencies`)."""
        counted = self.frequencies([a for _, a in hits], count)
        state.add_all([(address_key(address), doc_id, value) for address, doc_id, value in counted])

    def frequencies(
        self, addresses: list[Any], count: PhraseCounter
    ) -> Iterator[tuple[Any, str, float]]:
        """(address, id, frequency) of each document: counted on its stored text, or by
        `Probe` when it is long.

        (Reading the stored documents is cheaper here than a fast-field lookup of their
        sizes, which opens a column per segment.)
        """
        probe = None
        for address in addresses:
            doc_id, body = self.stored(address)
            if len(body) <= SHORT_BYTES:
                yield address, doc_id, float(count(body))
            else:
                probe = probe or Probe(self.searcher, self.phrase, count.phrases)
                yield address, doc_id, sum(probe.counts(address).values())

    def _verify(
        self,
        hits: list[Any],
        complete: bool,
        state: Verified,
        probe: _Correction | None,
        count: PhraseCounter,
    ) -> bool:
        """Add the exact frequencies of hits not seen yet; True when the others (fetched or
        not) cannot enter the first k.

        A hit's score is its frequency, or a bound of it that `probe` corrects. Hits are taken
        in ranking order of their bounds (bound, then id), which tells a hit that cannot beat
        the k-th found from one that ties it; so a group of hits with the same bound is only
        taken once fetched whole (all of them if `complete`, the search having returned every
        match, else those above the last hit's bound). Short documents are counted on their
        stored text (cheaper than an `explain`); without a probe the score is exact.
        """
        last = hits[-1][0] if hits else 0.0
        ready = [
            (bound, a)
            for bound, a in hits
            if address_key(a) not in state.seen and (complete or bound > last)
        ]
        if not ready:
            return False
        ids = self.ids([a for _, a in ready])
        ready.sort(key=lambda hit: (-hit[0], ids[address_key(hit[1])]))
        sizes = self.searcher.fast_field_values(fields.SIZE, [a for _, a in ready]) if probe else []
        for position, (bound, address) in enumerate(ready):
            key = address_key(address)
            if state.beats(bound, ids[key]):
                return True
            if probe is None:
                value = bound
            elif sizes[position] <= SHORT_BYTES:
                value = float(count(self.stored(address)[1]))
            else:
                value = bound + probe.value(address)
            state.add(key, ids[key], value)
        return False

    def _ranked(self, total: int, state: Verified) -> TokenResult:
        """The result: the first k verified documents by frequency, then by id."""
        return TokenResult(total, [TokenHit(doc_id, value) for doc_id, value in state.top()])

    # ranking = "bm25-pool"

    def pooled_search(
        self, keywords: list[Phrase], aliases: list[Phrase], k: int, pool: int
    ) -> TokenResult:
        """Ranking "bm25-pool": the `pool` best matches by BM25, ranked by frequency.

        Exact when there are at most `pool` matches; beyond, the documents BM25 prefers (short
        ones) are ranked and the most frequent documents can be missed. Reads the stored text.
        """
        result = self.searcher.search(self.match(keywords, aliases), pool, count=True)
        distinct = list(dict.fromkeys([*keywords, *aliases]))
        counted = self.frequencies([a for _, a in result.hits], PhraseCounter(distinct))
        scored = sorted((-value, doc_id) for _, doc_id, value in counted)
        return TokenResult(result.count, [TokenHit(i, float(-f)) for f, i in scored[:k]])


class _Correction:
    """Exact minus bounded frequency of a document: for each phrase bounded by a token's
    frequency, its count minus that frequency where the phrase occurs (0 elsewhere)."""

    def __init__(self, ranker: Ranker, bounded: dict[Phrase, str]) -> None:
        self.bounded = bounded
        tokens = [(token,) for token in bounded.values()]
        self.probe = Probe(ranker.searcher, ranker.phrase, [*bounded, *tokens])

    def value(self, address: Any) -> float:
        """The correction of the document at `address`."""
        counts = self.probe.counts(address)
        return sum(
            counts[phrase] - counts[(token,)]
            for phrase, token in self.bounded.items()
            if counts[phrase]
        )


def _reaches(term: str, value: int, level: int) -> bool:
    """True when a document with this `repeats` term has its token more than `level` times
    (for the levels of `_levels`: below 64, or 64 times a power of two)."""
    if value >= fields.LOW_RANGE:  # a high bit: the token occurs more than `value` times
        return value >= level
    return level < fields.LOW_RANGE and value >= level


def _levels(repeats: list[Repeats], k: int, share: float) -> Iterator[int]:
    """Tier levels, highest first, ending with 0 (every match).

    The first is the highest level whose tier holds about TIER_TARGET * k matches, estimated
    from the `repeats` terms' document counts and the share of documents that match.
    """
    top = max((value for found in repeats for _, value, _ in found), default=0)
    level = 1
    while level * LEVEL_STEP <= top:
        level *= LEVEL_STEP
    while level > 1:
        documents = sum(d for found in repeats for term, v, d in found if _reaches(term, v, level))
        if documents * share >= TIER_TARGET * k:
            break
        level //= LEVEL_STEP
    while level >= 1:
        yield level
        level //= LEVEL_STEP
    yield 0
