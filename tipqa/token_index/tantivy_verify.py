"""Exact frequencies of single documents, for the ranking of `tantivy_rank`.

A document's frequency is counted on its stored text when it is short (cheaper than asking
tantivy, and it gives the id), otherwise from tantivy's positions by `Probe`: one `explain`
of a query that matches every document, where each phrase is a clause boosted by its number,
so that the clauses that match can be told apart (tantivy leaves out those that do not).
`Verified` keeps the frequencies found so far and the k best of them.
"""

from __future__ import annotations

import bisect
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


TOKENIZED_FIRST = 10
# ASCII bytes that are not token characters become spaces; NUL separates the texts of a batch
_SPACED = bytes(c if c == 0 or (c < 128 and chr(c).isalnum()) else 32 for c in range(256))
# between two tokens: spaces, and runs too long to be tokens (dropped by `tokenize`, so that
# their neighbours are adjacent); written forwards and for the reversed text
_GAP = rb" +(?:[a-z0-9]{%d,} +)*" % (MAX_TOKEN_CHARS + 1)
_GAP_REVERSED = rb"(?: +[a-z0-9]{%d,})* +" % (MAX_TOKEN_CHARS + 1)


class _AsciiPhrase:
    """Finds an ASCII phrase in spaced ASCII text by its longest token (likely its rarest,
    found by a fast literal scan), the tokens after it checked by the same regex and those
    before it on the reversed text."""

    def __init__(self, phrase: Phrase) -> None:
        tokens = [re.escape(token.encode()) for token in phrase]
        self.at = max(range(len(tokens)), key=lambda i: len(tokens[i]))
        anchor, after = tokens[self.at], b"".join(_GAP + t for t in tokens[self.at + 1 :])
        self.anchor = re.compile(
            anchor + rb"(?<![a-z0-9]" + anchor + rb")(?=" + after + rb"(?![a-z0-9]))"
        )
        before = b"".join(_GAP_REVERSED + t[::-1] for t in tokens[self.at - 1 :: -1])
        self.before = re.compile(before + rb"(?![a-z0-9])").match if self.at else None

    def starts(self, spaced: bytes, reversed_: Callable[[], bytes]) -> list[int]:
        """Where the phrase's anchor is in each occurrence (occurrences may overlap);
        `reversed_` gives the reversed text (made once, when first needed)."""
        found = [match.start() for match in self.anchor.finditer(spaced)]
        if self.before is None or not found:
            return found
        end, before, backwards = len(spaced), self.before, reversed_()
        return [start for start in found if before(backwards, end - start)]


class PhraseCounter:
    """Occurrences of a query's phrases in texts, counted on `tokenize` tokens.

    Lower-cased ASCII texts are counted together instead: joined, their non-token characters
    spaced, each phrase found by one regex scan for its longest token, several times faster
    than tokenizing them. Compiling a phrase's regexes costs about as much as tokenizing ten
    short texts, so a counter tokenizes its first `TOKENIZED_FIRST` texts.
    """

    def __init__(self, phrases: list[Phrase]) -> None:
        self.phrases = phrases
        self._tokenized = 0
        self._ascii: list[_AsciiPhrase] | None = None

    def __call__(self, text: str) -> int:
        """Occurrences of all the phrases in `text`."""
        return self.counts([text])[0]

    def counts(self, texts: list[str]) -> list[int]:
        """Occurrences of all the phrases in each of `texts`."""
        lowered = [text.lower() for text in texts]
        scanned = [i for i, text in enumerate(lowered) if text.isascii() and "\0" not in text]
        if self._ascii is None and self._tokenized + len(scanned) <= TOKENIZED_FIRST:
            self._tokenized += len(scanned)
            return [self._by_tokens(text) for text in texts]
        if self._ascii is None:
            ascii_phrases = (p for p in self.phrases if all(t.isascii() for t in p))
            self._ascii = [_AsciiPhrase(phrase) for phrase in ascii_phrases]
        fast = set(scanned)
        counts = [0 if i in fast else self._by_tokens(t) for i, t in enumerate(texts)]
        starts = [0]
        for i in scanned:
            starts.append(starts[-1] + len(lowered[i]) + 1)
        spaced = "\0".join(lowered[i] for i in scanned).encode().translate(_SPACED)
        reversed_ = functools.cache(lambda: spaced[::-1])
        for phrase in self._ascii:
            for start in phrase.starts(spaced, reversed_):
                counts[scanned[bisect.bisect_right(starts, start) - 1]] += 1
        return counts

    def _by_tokens(self, text: str) -> int:
        """Occurrences of all the phrases in `text`, by tokenizing it."""
        tokens = tokenize(text)
        present = set(tokens)
        return sum(
            count_phrase(tokens, phrase) for phrase in self.phrases if present.issuperset(phrase)
        )


def frequency(text: str, phrases: list[Phrase]) -> int:
    """Occurrences of all `phrases` in `text`, counted on `tokenize` tokens."""
    return PhraseCounter(phrases)(text)
