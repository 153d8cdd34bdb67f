"""Ranking by frequency inside tantivy, exact at any number of matches.

Frequency (`tipqa.token_index.base`) is the number of occurrences of the query's distinct
phrases. tantivy scores by BM25, which prefers short documents, so the query is scored
differently: the match condition is kept as a filter with score 0, and every phrase adds a
sum of constant scores built from the `repeats` field (`tantivy_schema`):

- a one-token phrase adds 1 for the `text` term and 2^b for every bit term "<token>:<b>" of
  the document: exactly the token's frequency, computed from the index alone;
- a longer phrase adds the frequency of its rarest token, an upper bound of its own count.

When every phrase is one token, tantivy's top hits by that score are the top hits by
frequency. Otherwise the top hits by the upper bound are *verified*: the phrase counts of each
are read from tantivy's positions (`Query.explain` reports a phrase's occurrences in one
document), and more hits are fetched until the k-th best exact frequency is above the bound of
every document not yet fetched. In both cases hits that tie at the k-th frequency are all
fetched and ordered by document id (a fast field). Memory and time grow with the hits fetched
and verified, not with the stored text of the matches.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

import orjson

from tipqa.records import TokenHit
from tipqa.text import count_phrase, tokenize
from tipqa.token_index import tantivy_schema as fields
from tipqa.token_index.base import TokenResult

Phrase = tuple[str, ...]
Key = tuple[int, int]
GROWTH = 4
SHORT_BYTES = 2048  # documents verified from their stored text; longer ones by `explain`
_FREQ = "freq, occurrences of term within document"
_BOOST = "Boost x"


def phrases(texts: Iterable[str]) -> list[Phrase]:
    """The distinct non-empty token phrases of `texts`, in first-seen order."""
    return list(dict.fromkeys(p for p in (tuple(tokenize(t)) for t in texts) if p))


def _key(address: Any) -> Key:
    return address.segment_ord, address.doc


class Ranker:
    """Token queries over one tantivy searcher (see the module docstring)."""

    def __init__(self, searcher: Any, schema: Any) -> None:
        self.tantivy = fields.import_tantivy()
        self.searcher = searcher
        self.schema = schema

    # queries

    def term(self, field: str, value: str, option: str = "basic") -> Any:
        """A term query on `field`."""
        return self.tantivy.Query.term_query(self.schema, field, value, index_option=option)

    def phrase(self, phrase: Phrase) -> Any:
        """A term query for one token, a phrase query for more (no query-string parsing)."""
        if len(phrase) == 1:
            return self.term(fields.TEXT, phrase[0], "freq")
        return self.tantivy.Query.phrase_query(self.schema, fields.TEXT, list(phrase))

    def match(self, keywords: list[Phrase], aliases: list[Phrase]) -> Any:
        """All keyword phrases AND any alias phrase."""
        must, should = self.tantivy.Occur.Must, self.tantivy.Occur.Should
        if len(aliases) == 1:
            alias_query = self.phrase(aliases[0])
        else:
            alias_query = self.tantivy.Query.boolean_query(
                [(should, self.phrase(a)) for a in aliases]
            )
        if not keywords:
            return alias_query
        clauses = [(must, self.phrase(k)) for k in keywords]
        return self.tantivy.Query.boolean_query([*clauses, (must, alias_query)])

    def token_frequency(self, token: str) -> list[tuple[Any, Any]]:
        """Should clauses whose scores add up to the frequency of `token` in a document."""
        const, should = self.tantivy.Query.const_score_query, self.tantivy.Occur.Should
        clauses = [(should, const(self.term(fields.TEXT, token), 1.0))]
        for separator in (fields.LOW, fields.HIGH):
            prefix = token + separator
            for term, _ in self.searcher.terms_with_prefix(fields.REPEATS, prefix):
                value = float(fields.term_value(term, len(prefix)))
                clauses.append((should, const(self.term(fields.REPEATS, term), value)))
        return clauses

    def rarest(self, phrase: Phrase) -> tuple[int, str]:
        """The token of `phrase` in the fewest documents, with their number (its frequency
        bounds the phrase's, its document count the phrase's)."""
        return min((self.searcher.doc_freq(fields.TEXT, token), token) for token in phrase)

    # searching

    def search(self, keywords: list[Phrase], aliases: list[Phrase], k: int) -> TokenResult:
        """The first k matches by frequency (ties by document id), and the exact total.

        When the document counts of the query's tokens show that at most k documents can
        match, every match is counted directly; otherwise tantivy ranks by the bounds above.
        """
        query = self.match(keywords, aliases)
        distinct = list(dict.fromkeys([*keywords, *aliases]))
        rarest = {phrase: self.rarest(phrase) for phrase in distinct}
        most = min([sum(rarest[a][0] for a in aliases), *(rarest[kw][0] for kw in keywords)])
        unscored = self.tantivy.Query.const_score_query(query, 0.0)
        if most <= k or k == 0:
            found = self.searcher.search(
                unscored, max(most, 1), count=True, order_by_field=fields.SIZE
            )
            if k == 0:
                return TokenResult(found.count, [])
            state = _Ranking(k)
            self._count_all(found.hits, state, distinct)
            return self._ranked(found.count, state)
        bounded = {p: rarest[p][1] for p in distinct if len(p) > 1}
        clauses = [(self.tantivy.Occur.Must, unscored)]
        for phrase in distinct:
            clauses.extend(self.token_frequency(bounded.get(phrase, phrase[0])))
        scored = self.tantivy.Query.boolean_query(clauses)
        probe = Probe(self, list(bounded), [(t,) for t in bounded.values()]) if bounded else None
        state = _Ranking(k)
        limit = 2 * k if probe else 4 * k + 16
        total = None
        while True:
            result = self.searcher.search(scored, limit, count=total is None)
            total = result.count if total is None else total
            hits = result.hits
            stopped = self._verify(hits, state, probe, distinct)
            if stopped or len(hits) < limit or state.beats(hits[-1][0]):
                return self._ranked(total, state)
            limit *= GROWTH

    def _count_all(self, hits: list[Any], state: _Ranking, distinct: list[Phrase]) -> None:
        """Count the frequency of every hit (the hits' scores are their sizes)."""
        probe = None
        for size, address in hits:
            key = _key(address)
            if size <= SHORT_BYTES:
                state.ids[key], text = self.stored(address)
                value = float(frequency(text, distinct))
            else:
                probe = probe or Probe(self, distinct, [])
                value = probe.value(address)
            state.add(key, address, value)

    def _ranked(self, total: int, state: _Ranking) -> TokenResult:
        """The result: the first k verified documents by frequency, then by id."""
        kept = state.kept()
        state.ids.update(self.ids([state.addresses[key] for key in kept if key not in state.ids]))
        ranked = sorted((-state.frequencies[key], state.ids[key]) for key in kept)
        return TokenResult(total, [TokenHit(i, -f) for f, i in ranked[: state.k]])

    def _verify(
        self, hits: list[Any], state: _Ranking, probe: Probe | None, distinct: list[Phrase]
    ) -> bool:
        """Add the exact frequencies of the hits not seen yet, best bound first; True when the
        remaining hits (and every document not fetched) cannot enter the first k.

        A hit's score is its frequency, or a bound of it that `probe` corrects. Short documents
        are counted on their stored text instead (cheaper than an `explain`, and it gives the
        id); without a probe the score is exact and nothing is read.
        """
        fresh = [(bound, a) for bound, a in hits if _key(a) not in state.frequencies]
        if probe is not None and fresh:
            sizes = self.searcher.fast_field_values(fields.SIZE, [a for _, a in fresh])
        for position, (bound, address) in enumerate(fresh):
            if state.beats(bound):
                return True
            key = _key(address)
            if probe is None:
                value = bound
            elif sizes[position] <= SHORT_BYTES:
                state.ids[key], text = self.stored(address)
                value = float(frequency(text, distinct))
            else:
                value = bound + probe.value(address)
            state.add(key, address, value)
        return False

    def stored(self, address: Any) -> tuple[str, str]:
        """The id and the text of a document, from the store."""
        stored = self.searcher.doc(address)
        return stored.get_first(fields.DOC_ID), stored.get_first(fields.BODY).decode()

    def ids(self, addresses: list[Any]) -> dict[Key, str]:
        """The document ids of these hits, read from fast fields (not from the stored text)."""
        if not addresses:
            return {}
        rows = self.searcher.fast_field_values(fields.ROW, addresses)
        query = self.tantivy.Query.term_set_query(self.schema, fields.ROW, rows)
        hits = self.searcher.search(
            query,
            len(rows),
            count=False,
            order_by_field=fields.DOC_ID,
            order=self.tantivy.Order.Asc,
        ).hits
        return {_key(address): doc_id for doc_id, address in hits}

    # the former approximation

    def pooled_search(
        self, keywords: list[Phrase], aliases: list[Phrase], k: int, pool: int
    ) -> TokenResult:
        """Ranking "bm25-pool": the `pool` best matches by BM25, ranked by frequency.

        Exact when there are at most `pool` matches; beyond, the documents BM25 prefers (short
        ones) are ranked and the most frequent documents can be missed. Reads the stored text.
        """
        result = self.searcher.search(self.match(keywords, aliases), pool, count=True)
        distinct = list(dict.fromkeys([*keywords, *aliases]))
        scored = []
        for _score, address in result.hits:
            doc_id, text = self.stored(address)
            scored.append((-frequency(text, distinct), doc_id))
        scored.sort()
        return TokenResult(result.count, [TokenHit(i, float(-f)) for f, i in scored[:k]])


class _Ranking:
    """The documents verified so far: exact frequencies, addresses, ids read on the way, and
    a min-heap of the k best frequencies."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.frequencies: dict[Key, float] = {}
        self.addresses: dict[Key, Any] = {}
        self.ids: dict[Key, str] = {}
        self.best: list[float] = []

    def add(self, key: Key, address: Any, value: float) -> None:
        """Record the exact frequency of one document."""
        self.frequencies[key] = value
        self.addresses[key] = address
        if len(self.best) < self.k:
            heapq.heappush(self.best, value)
        elif value > self.best[0]:
            heapq.heapreplace(self.best, value)

    def beats(self, bound: float) -> bool:
        """True when k documents are known that are more frequent than `bound`."""
        return len(self.best) == self.k and self.best[0] > bound

    def kept(self) -> list[Key]:
        """The verified documents at least as frequent as the k-th (all of them, if fewer)."""
        floor = self.best[0] if len(self.best) == self.k else float("-inf")
        return [key for key, value in self.frequencies.items() if value >= floor]


class Probe:
    """Counts occurrences of phrases in one document, from tantivy's positions.

    `value` is the sum of the occurrences of the `added` phrases minus those of the
    `subtracted` ones (a phrase may be listed twice). It is one `explain` of a query that
    matches every document: a constant, plus each distinct phrase as a clause boosted by its
    number, so that the clauses that match can be told apart in the explanation (tantivy
    leaves out those that do not).
    """

    def __init__(self, ranker: Ranker, added: list[Phrase], subtracted: list[Phrase]) -> None:
        tantivy = ranker.tantivy
        self.ranker = ranker
        distinct = list(dict.fromkeys([*added, *subtracted]))
        self.weights = {tag: 0 for tag in range(1, len(distinct) + 1)}
        for phrase in added:
            self.weights[distinct.index(phrase) + 1] += 1
        for phrase in subtracted:
            self.weights[distinct.index(phrase) + 1] -= 1
        should = tantivy.Occur.Should
        clauses = [(should, tantivy.Query.const_score_query(tantivy.Query.all_query(), 0.0))]
        for tag, phrase in enumerate(distinct, start=1):
            clauses.append((should, tantivy.Query.boost_query(ranker.phrase(phrase), float(tag))))
        self.query = tantivy.Query.boolean_query(clauses)

    def value(self, address: Any) -> float:
        """The weighted occurrence count of the document at `address`."""
        explanation = orjson.loads(self.query.explain(self.ranker.searcher, address).to_json())
        total = 0.0
        for clause in explanation.get("details") or []:
            description = clause.get("description", "")
            if description.startswith(_BOOST):
                tag = int(float(description[len(_BOOST) :].split()[0]))
                total += self.weights[tag] * _find_freq(clause)
        return total


def _find_freq(clause: dict[str, Any]) -> float:
    """The occurrence count in tantivy's explanation of one term or phrase clause."""
    stack = [clause]
    while stack:
        node = stack.pop()
        if node.get("description") == _FREQ:
            return float(node["value"])
        stack.extend(node.get("details") or [])
    raise ValueError(f"no occurrence count in tantivy's explanation {clause!r:.300}")


def frequency(text: str, phrases: list[Phrase]) -> int:
    """Occurrences of all `phrases` in `text`, counted on `tokenize` tokens."""
    tokens = tokenize(text)
    present = set(tokens)
    return sum(count_phrase(tokens, phrase) for phrase in phrases if present.issuperset(phrase))
