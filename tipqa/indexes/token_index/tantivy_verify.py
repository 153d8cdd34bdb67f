"""Exact frequencies of single documents, for the ranking of `tantivy_rank`.

A document's frequency is counted on its stored text when it is short (cheaper than asking
tantivy, and it gives the id), otherwise from tantivy's positions by `Probe`: one `explain`
of a query that matches every document, where each phrase is a clause boosted by its number,
so that the clauses that match can be told apart (tantivy leaves out those that do not).
`Verified` keeps the frequencies found so far and the k best of them.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Callable
from typing import Any

import orjson

from tipqa.core.text import MAX_TOKEN_CHARS, count_phrase, tokenize
from tipqa.indexes.token_index import speedups
from tipqa.indexes.token_index import tantivy_schema as fields

Phrase = tuple[str, ...]
Key = tuple[int, int]
SHORT_BYTES = 16384  # documents counted on their stored text; longer ones by `Probe`
_FREQ = "freq, occurrences of term within document"
_BOOST = "Boost x"


def address_key(address: Any) -> Key:
    """A hashable form of a tantivy DocAddress."""
    return address.segment_ord, address.doc


@functools.total_ordering
class _Ranked:
    """A verified document in ranking order: smaller is worse (less frequent, or as frequent
    with a larger id)."""

    __slots__ = ("doc_id", "value")

    def __init__(self, value: float, doc_id: str) -> None:
        self.value = value
        self.doc_id = doc_id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Ranked) and (self.value, self.doc_id) == (
            other.value,
            other.doc_id,
        )

    def __lt__(self, other: _Ranked) -> bool:
        if self.value != other.value:
            return self.value < other.value
        return self.doc_id > other.doc_id


class Verified:
    """The documents verified so far (exact frequency and id), and a min-heap of the k best
    in ranking order."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.seen: set[Key] = set()
        self.best: list[_Ranked] = []

    def add(self, key: Key, doc_id: str, value: float) -> None:
        """Record the exact frequency of one document."""
        self.seen.add(key)
        ranked = _Ranked(value, doc_id)
        if len(self.best) < self.k:
            heapq.heappush(self.best, ranked)
        elif self.best[0] < ranked:
            heapq.heapreplace(self.best, ranked)

    def add_all(self, rows: list[tuple[Key, str, float]]) -> None:
        """Record the exact frequencies of many documents: one sort, not a heap push each."""
        self.seen.update(key for key, _, _ in rows)
        ranked = [*self.best, *(_Ranked(value, doc_id) for _, doc_id, value in rows)]
        ranked.sort(key=lambda r: (-r.value, r.doc_id))
        self.best = ranked[: self.k][::-1]  # worst first: a sorted list is a valid min-heap

    def beats(self, bound: float, doc_id: str | None = None) -> bool:
        """True when k documents are known that rank before any document whose frequency is
        at most `bound` (and, if given, whose id is `doc_id` or larger)."""
        if len(self.best) < self.k:
            return False
        worst = self.best[0]
        return worst.value > bound or (
            doc_id is not None and worst.value == bound and worst.doc_id < doc_id
        )

    def top(self) -> list[tuple[str, float]]:
        """The first k documents: (id, frequency), most frequent first, ties by id."""
        return [(r.doc_id, r.value) for r in sorted(self.best, reverse=True)]


class Probe:
    """Counts occurrences of phrases in one document, from tantivy's positions.

    One `explain` of a query that matches every document: a constant, plus each phrase as a
    clause boosted by its number, so that the clauses that match can be told apart in the
    explanation (tantivy leaves out those that do not, whose count is 0).
    """

    def __init__(
        self, searcher: Any, phrase_query: Callable[[Phrase], Any], phrases: list[Phrase]
    ) -> None:
        tantivy = fields.import_tantivy()
        self.searcher = searcher
        self.phrases = list(dict.fromkeys(phrases))
        should = tantivy.Occur.Should
        clauses = [(should, tantivy.Query.const_score_query(tantivy.Query.all_query(), 0.0))]
        for tag, phrase in enumerate(self.phrases, start=1):
            clauses.append((should, tantivy.Query.boost_query(phrase_query(phrase), float(tag))))
        self.query = tantivy.Query.boolean_query(clauses)

    def counts(self, address: Any) -> dict[Phrase, float]:
        """The occurrences of each phrase in the document at `address`."""
        explanation = orjson.loads(self.query.explain(self.searcher, address).to_json())
        found = dict.fromkeys(self.phrases, 0.0)
        for clause in explanation.get("details") or []:
            description = clause.get("description", "")
            if description.startswith(_BOOST):
                tag = int(float(description[len(_BOOST) :].split()[0]))
                found[self.phrases[tag - 1]] = _find_freq(clause)
        return found


def _find_freq(clause: dict[str, Any]) -> float:
    """The occurrence count in tantivy's explanation of one term or phrase clause."""
    stack = [clause]
    while stack:
        node = stack.pop()
        if node.get("description") == _FREQ:
            return float(node["value"])
        stack.extend(node.get("details") or [])
    raise ValueError(f"no occurrence count in tantivy's explanation {clause!r:.300}")


_SPACE = 32  # non-token characters of ASCII text, in `tantivy_schema.ascii_spaced`


def _after(spaced: bytes, j: int, tokens: tuple[bytes, ...]) -> bool:
    """True when `tokens` follow position `j` of spaced text as `tokenize` tokens: each after
    a gap of spaces and of runs too long to be tokens (dropped by `tokenize`)."""
    n = len(spaced)
    for token in tokens:
        while True:
            if j >= n or spaced[j] != _SPACE:
                return False
            while j < n and spaced[j] == _SPACE:
                j += 1
            stop = spaced.find(b" ", j)
            stop = n if stop < 0 else stop
            if stop - j <= MAX_TOKEN_CHARS:
                break
            j = stop
        if spaced[j:stop] != token:
            return False
        j = stop
    return True


def _before(spaced: bytes, i: int, tokens: tuple[bytes, ...]) -> bool:
    """True when `tokens` precede position `i` of spaced text as `tokenize` tokens."""
    for token in reversed(tokens):
        while True:
            if i <= 0 or spaced[i - 1] != _SPACE:
                return False
            while i > 0 and spaced[i - 1] == _SPACE:
                i -= 1
            start = spaced.rfind(b" ", 0, i) + 1
            if i - start <= MAX_TOKEN_CHARS:
                break
            i = start
        if spaced[start:i] != token:
            return False
        i = start
    return True


class _AsciiPhrase:
    """An ASCII phrase counted in spaced text: its longest token (likely its rarest) found by
    `bytes.find`, then the tokens around it checked."""

    def __init__(self, tokens: tuple[bytes, ...]) -> None:
        self.tokens = tokens
        self.at = max(range(len(self.tokens)), key=lambda i: len(self.tokens[i]))
        self.anchor = self.tokens[self.at]

    def count(self, spaced: bytes) -> int:
        """Occurrences (overlapping ones included) in lower-cased ASCII text whose non-token
        characters are spaces."""
        anchor, at, tokens = self.anchor, self.at, self.tokens
        n, count = len(spaced), 0
        i = spaced.find(anchor)
        while i >= 0:
            end = i + len(anchor)
            # a token starts after a space; none starts inside the anchor's letters
            if (
                (i == 0 or spaced[i - 1] == _SPACE)
                and (end == n or spaced[end] == _SPACE)
                and _after(spaced, end, tokens[at + 1 :])
                and _before(spaced, i, tokens[:at])
            ):
                count += 1
            i = spaced.find(anchor, end)
        return count


AsciiPhrases = tuple[tuple[bytes, ...], ...]


def count_ascii(lowered: bytes, phrases: AsciiPhrases) -> int:
    """Occurrences of the phrases (tuples of bytes tokens) in lower-cased ASCII text."""
    spaced = fields.ascii_spaced(lowered)
    return sum(_ascii_phrase(phrase).count(spaced) for phrase in phrases)


@functools.lru_cache(maxsize=256)
def _ascii_phrase(tokens: tuple[bytes, ...]) -> _AsciiPhrase:
    """The counter of one phrase (kept: a query counts the same phrases in many texts)."""
    return _AsciiPhrase(tokens)


class PhraseCounter:
    """Occurrences of a query's phrases in UTF-8 texts, counted on `tokenize` tokens.

    Texts are not tokenized as `str` where that can be avoided: where
    `tipqa.indexes.token_index.speedups` was compiled, C counts ASCII phrases in any UTF-8 text,
    except
    where a non-ASCII character is next to a possible occurrence; otherwise `count_ascii`
    counts them in ASCII text. Both are several times faster on the texts of a query's matches.
    """

    def __init__(self, phrases: list[Phrase]) -> None:
        self.phrases = phrases
        ascii_phrases = [p for p in phrases if all(token.isascii() for token in p)]
        self._ascii = tuple(tuple(token.encode() for token in p) for p in ascii_phrases)
        self._all_ascii = len(ascii_phrases) == len(phrases)
        self._native = speedups.native()

    def each(self, body: bytes) -> list[int]:
        """Occurrences of each phrase in the UTF-8 text `body`, in the order of `phrases`."""
        ascii_text = body.isascii()
        if self._all_ascii and (ascii_text or self._native is not None):
            lowered = body.lower()
            if self._native is None:
                return [count_ascii(lowered, (phrase,)) for phrase in self._ascii]
            counts = []
            for phrase in self._ascii:
                found = self._native.count(lowered, (phrase,))
                if found is None:  # undecided: counted on tokens below
                    break
                counts.append(found)
            else:
                return counts
        tokens = tokenize(body.decode())
        return [count_phrase(tokens, phrase) for phrase in self.phrases]

    def __call__(self, body: bytes) -> int:
        """Occurrences of all the phrases in the UTF-8 text `body`."""
        ascii_text = body.isascii()  # no non-ASCII phrase can occur in it
        if self._native is not None and (ascii_text or self._all_ascii):
            found = self._native.count(body.lower(), self._ascii)
            if found is not None:  # always, on ASCII text
                return found
        elif ascii_text:
            return count_ascii(body.lower(), self._ascii)
        tokens = tokenize(body.decode())
        present = set(tokens)
        return sum(
            count_phrase(tokens, phrase) for phrase in self.phrases if present.issuperset(phrase)
        )


def frequency(text: str, phrases: list[Phrase]) -> int:
    """Occurrences of all `phrases` in `text`, counted on `tokenize` tokens."""
    return PhraseCounter(phrases)(text.encode())
