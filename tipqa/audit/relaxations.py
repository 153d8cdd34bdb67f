"""Where the audit searches: the places Algorithm 1 did not look, one *relaxation* each.

For a question labelled unanswerable (every token-search document judged no, then the k2
nearest chunks):

- `keywords_minus_one`: each keyword left out in turn, the others AND any alias (a keyword
  that is misspelled, or that the evidence never states, hides the evidence from the AND);
- `alias_only`: among the `ALIAS_POOL` x depth documents that rank best by BM25 for the
  question and its aliases, those that contain an alias as a phrase (every keyword may be
  wrong); without a BM25 ranking, the documents with the most alias occurrences;
- `vector_deeper`: the nearest chunks after the k2 the build judged.

For a question labelled discarded (more than k1 matches, the first k1 judged no):

- `token_after_k1`: the token search's documents after the first k1;
- `alias_only`, as above (BM25 over the question may rank the evidence far above where the
  frequency ranking put it).

Each relaxation gives at most `depth` candidates per question, in its own rank order; the
audit takes them in turns (`interleave`) so that every relaxation is tried within the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tipqa.core.records import Label, Question, VectorCandidates, VectorHit
from tipqa.core.text import contains_phrase, tokenize
from tipqa.indexes.token_index.base import RanksText, TokenIndex

KEYWORDS_MINUS_ONE = "keywords_minus_one"
ALIAS_ONLY = "alias_only"
VECTOR_DEEPER = "vector_deeper"
TOKEN_AFTER_K1 = "token_after_k1"
CAUSES = (KEYWORDS_MINUS_ONE, ALIAS_ONLY, VECTOR_DEEPER, TOKEN_AFTER_K1)
"""Every relaxation, by the name a finding's `cause` has."""

ALIAS_POOL = 4
"""`alias_only` reads this many times its depth of BM25 documents to keep those with an alias."""

NearestChunks = Callable[[list[Question], int], list[VectorCandidates]]
"""The k nearest chunks of each question (the build's embedder and vector index)."""


@dataclass(frozen=True)
class Candidate:
    """A document (or one chunk of it) that a relaxation reached.

    A document is judged by its windows around `keywords` and an alias, as the token stage
    judges one; a chunk (`chunk` set) is judged whole, as the vector stage judges one.
    """

    cause: str
    relaxation: str
    doc_id: str
    keywords: tuple[str, ...] = ()
    chunk: VectorHit | None = None

    @property
    def unit(self) -> str:
        """What makes two candidates the same: the document, or the chunk."""
        return self.chunk.chunk_id if self.chunk is not None else self.doc_id


@dataclass(frozen=True)
class BuildView:
    """A question as the build saw it: its keywords and the units it judged."""

    question: Question
    label: Label
    keywords: list[str]
    judged_docs: frozenset[str]
    judged_chunks: frozenset[str]

    def new(self, candidates: Iterable[Candidate]) -> list[Candidate]:
        """The candidates the build did not judge (token documents, vector chunks)."""
        return [candidate for candidate in candidates if self.unjudged(candidate)]

    def unjudged(self, candidate: Candidate) -> bool:
        """True when the build never judged the candidate's document (or chunk)."""
        if candidate.chunk is not None:
            return candidate.chunk.chunk_id not in self.judged_chunks
        return candidate.doc_id not in self.judged_docs


def interleave(streams: Iterable[list[Candidate]]) -> list[Candidate]:
    """The candidates of several ranked lists in turns (first of each, then second ...),
    each unit once."""
    lists = [s for s in streams if s]
    out: list[Candidate] = []
    seen: set[str] = set()
    for rank in range(max((len(s) for s in lists), default=0)):
        for stream in lists:
            if rank < len(stream) and stream[rank].unit not in seen:
                seen.add(stream[rank].unit)
                out.append(stream[rank])
    return out


def keywords_minus_one(view: BuildView, index: TokenIndex, depth: int) -> list[Candidate]:
    """Each keyword left out in turn: the others AND any alias (none with one keyword)."""
    keywords = view.keywords
    if len(keywords) < 2:
        return []
    streams = []
    for dropped in range(len(keywords)):
        kept = keywords[:dropped] + keywords[dropped + 1 :]
        found = index.search(kept, view.question.aliases, depth + len(view.judged_docs))
        relaxation = f'keywords without "{keywords[dropped]}"'
        hits = [
            Candidate(KEYWORDS_MINUS_ONE, relaxation, h.doc_id, tuple(kept)) for h in found.hits
        ]
        streams.append(view.new(hits)[:depth])
    return interleave(streams)


def alias_only(
    view: BuildView, index: TokenIndex, ranker: RanksText | None, depth: int
) -> list[Candidate]:
    """Documents with an alias, best first for the question (BM25; alias frequency without)."""
    question = view.question
    if ranker is None:
        relaxation = "an alias alone, documents ranked by alias occurrences"
        hits = index.search([], question.aliases, depth + len(view.judged_docs)).hits
        found = (Candidate(ALIAS_ONLY, relaxation, hit.doc_id) for hit in hits)
        return view.new(found)[:depth]
    text = " ".join([question.text, *question.aliases])
    ids = ranker.rank_texts([text], ALIAS_POOL * depth + len(view.judged_docs))[0]
    documents = index.get(ids)
    aliases = [tokens for tokens in (tokenize(alias) for alias in question.aliases) if tokens]
    relaxation = "an alias alone, documents ranked by BM25 for the question"
    found = (
        Candidate(ALIAS_ONLY, relaxation, doc_id)
        for doc_id in ids
        if doc_id in documents
        and any(contains_phrase(tokenize(documents[doc_id].text), a) for a in aliases)
    )
    return view.new(found)[:depth]


def token_after_k1(view: BuildView, index: TokenIndex, k1: int, depth: int) -> list[Candidate]:
    """The token search's documents after the first k1 (the build judged those)."""
    question = view.question
    found = index.search(view.keywords, question.aliases, k1 + depth)
    return view.new(
        Candidate(
            TOKEN_AFTER_K1,
            f"token-search document {rank} of {found.total} (after k1 = {k1})",
            hit.doc_id,
            tuple(view.keywords),
        )
        for rank, hit in enumerate(found.hits, 1)
        if rank > k1
    )[:depth]


def vector_deeper(
    views: list[BuildView], nearest: NearestChunks, k2: int, depth: int
) -> dict[str, list[Candidate]]:
    """Per question, the nearest chunks after the k2 the build judged."""
    if not views:
        return {}
    found = nearest([view.question for view in views], k2 + depth)
    by_id = {candidates.question_id: candidates.hits for candidates in found}
    out = {}
    for view in views:
        hits = by_id.get(view.question.id, [])
        out[view.question.id] = view.new(
            Candidate(
                VECTOR_DEEPER,
                f"nearest chunk {rank} (after k2 = {k2})",
                hit.doc_id,
                chunk=hit,
            )
            for rank, hit in enumerate(hits, 1)
        )[:depth]
    return out
