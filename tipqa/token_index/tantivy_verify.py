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
import re
from collections.abc import Callable
from typing import Any

import orjson

from tipqa.text import MAX_TOKEN_CHARS, count_phrase, tokenize
from tipqa.token_index import tantivy_schema as fields

Phrase = tuple[str, ...]
Key = tuple[int, int]
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


# between two tokens: non-token characters, and runs too long to be tokens (dropped by
# `tokenize`, so that their neighbours are adjacent)
TOKENIZED_FIRST = 10
_GAP = f"(?:[^a-z0-9]+[a-z0-9]{{{MAX_TOKEN_CHARS + 1},}})*[^a-z0-9]+"


def _ascii_pattern(phrase: Phrase) -> re.Pattern[str] | None:
    """A regex finding every (overlapping) occurrence of an ASCII phrase in lower-cased ASCII
    text as `tokenize` tokens: the tokens, separated by non-token characters, at token
    boundaries (None for a phrase with other characters, which ASCII text cannot hold)."""
    if not all(token.isascii() for token in phrase):
        return None
    first, rest = re.escape(phrase[0]), "".join(_GAP + re.escape(t) for t in phrase[1:])
    # the first token as a literal (the regex engine finds literals fast), its left boundary
    # checked behind it, the rest ahead of it (so that occurrences may overlap)
    return re.compile(f"{first}(?<![a-z0-9]{first})(?={rest}(?![a-z0-9]))")


class PhraseCounter:
    """Occurrences of a query's phrases in texts, counted on `tokenize` tokens.

    In lower-cased ASCII text each phrase can be counted by one regex scan instead, several
    times faster than tokenizing; compiling a phrase's regex costs about as much as tokenizing
    ten short texts, so the first `TOKENIZED_FIRST` ASCII texts of a query are tokenized.
    """

    def __init__(self, phrases: list[Phrase]) -> None:
        self.phrases = phrases
        self._tokenized = 0
        self._patterns: list[re.Pattern[str]] | None = None

    def __call__(self, text: str) -> int:
        """Occurrences of all the phrases in `text`."""
        lowered = text.lower()
        if lowered.isascii():
            if self._patterns is None and self._tokenized >= TOKENIZED_FIRST:
                compiled = (_ascii_pattern(phrase) for phrase in self.phrases)
                self._patterns = [pattern for pattern in compiled if pattern is not None]
            if self._patterns is not None:
                return sum(len(pattern.findall(lowered)) for pattern in self._patterns)
            self._tokenized += 1
        tokens = tokenize(text)
        present = set(tokens)
        return sum(
            count_phrase(tokens, phrase) for phrase in self.phrases if present.issuperset(phrase)
        )


def frequency(text: str, phrases: list[Phrase]) -> int:
    """Occurrences of all `phrases` in `text`, counted on `tokenize` tokens."""
    return PhraseCounter(phrases)(text)
