"""A synthetic encyclopedia whose every question has a label known by construction.

The world is deterministic for a seed and made only of this project's own templates and
made-up names. Each question belongs to a *case* that fixes where its fact is stated:

- single: the fact in exactly one document; distractors name only the keyword or only the
  answer. Answerable (token stage).
- late: the fact in the least frequent of `late_rank` keyword-and-answer documents, the others
  never stating it. Answerable (token stage, judged at rank `late_rank`).
- long: the fact deep inside a document of more than `long_words` words. Answerable (token).
- paragraphs: the fact in paragraph 45 of 60; keyword and answer also apart. Answerable (token).
- vector_only: the fact with the name written "Last, First", so no phrase matches; only vector
  search finds it. Answerable (vector stage).
- split: a few documents name keyword and answer in different paragraphs. Unanswerable.
- absent: keyword and answer never in one document. Unanswerable.
- discarded: more than k1 documents name keyword and answer apart, none states the fact.
  Discarded.
- buried: as discarded, plus the fact in the least frequent match, ranked after k1. Discarded.
- crowded: `crowd` short documents name keyword and answer apart, and one long document (more
  than `crowd_words` words) names them `crowd_mentions` times each and states the fact: the
  most frequent of more than 1,000 matches. Answerable (token), when the ranking by frequency
  is exact at that depth (BM25 prefers the short documents). Not in the default mix.

Filler documents (template prose about made-up places) bring the corpus to `documents`.
"""

from __future__ import annotations

import math
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from tqdm import tqdm

from tipqa.core.errors import ConfigError
from tipqa.core.jsonl import atomic_open, write_json, write_records
from tipqa.core.layout import WorldLayout
from tipqa.core.records import Document, Question, Record
from tipqa.core.settings import Settings, setting
from tipqa.core.text import word_count
from tipqa.sources.demo import facts as templates
from tipqa.sources.demo.facts import Fact
from tipqa.sources.demo.filler import VOCABULARY, paragraphs
from tipqa.sources.demo.names import NameMaker

CASES = {
    "single": ("answerable", "token"),
    "late": ("answerable", "token"),
    "long": ("answerable", "token"),
    "paragraphs": ("answerable", "token"),
    "vector_only": ("answerable", "vector"),
    "split": ("unanswerable", "vector"),
    "absent": ("unanswerable", "vector"),
    "discarded": ("discarded", "token"),
    "buried": ("discarded", "token"),
    "crowded": ("answerable", "token"),
}
DEFAULT_COUNTS = {
    "single": 8,
    "late": 3,
    "long": 2,
    "paragraphs": 2,
    "vector_only": 3,
    "split": 4,
    "absent": 4,
    "discarded": 2,
    "buried": 1,
    "crowded": 0,
}


@dataclass
class Expected(Record):
    """The label a question has by construction, and the document stating its fact."""

    question_id: str
    case: str
    label: str
    stage: str
    fact_doc_id: str | None


DEMO = "demo"
"""The source name of the demo world, for the corpus and for question pools."""


@dataclass(frozen=True)
class DemoSettings(Settings):
    """[demo]: the synthetic world used where a pool or the corpus has `source = demo`."""

    documents: int = setting(2000, doc="documents of the synthetic corpus")
    seed: int = setting(13, doc="seed of the generator")
    files: int = setting(4, doc="corpus files (to exercise sharded builds)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.documents < 1 or self.files < 1:
            raise ConfigError("[demo] documents and files must be at least 1")


@dataclass(frozen=True)
class WorldSpec:
    """Size and shape of a demo world."""

    documents: int = 2000
    seed: int = 13
    k1: int = 100
    counts: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_COUNTS))
    long_words: int = 31_000
    late_rank: int = 12
    files: int = 4
    crowd: int = 1200
    crowd_mentions: int = 20
    crowd_words: int = 8000


@dataclass
class _Draft:
    """A document before it gets its id (ids follow corpus order)."""

    title: str
    paragraphs: list[str]
    fact_of: str | None = None


class _Builder:
    """Turns cases into questions and the special documents that carry them."""

    def __init__(self, spec: WorldSpec) -> None:
        self.spec = spec
        self.rng = random.Random(spec.seed)
        self.names = NameMaker(self.rng, VOCABULARY)
        self.places = [self.names.word() for _ in range(120)]
        self.groups = [f"{self.names.word()} Guild" for _ in range(30)]
        self.drafts: list[_Draft] = []
        self.questions: list[Question] = []
        self.cases: dict[str, str] = {}

    def filler(self, count: int, sentences: int = 4) -> list[str]:
        """Filler paragraphs."""
        return paragraphs(self.rng, self.places, self.groups, count, sentences)

    def doc(self, title: str, body: list[str], fact_of: str | None = None) -> None:
        """Queue a special document."""
        self.drafts.append(_Draft(title, body, fact_of))

    def with_sentence(self, sentence: str) -> str:
        """A filler paragraph with `sentence` placed inside it."""
        parts = self.filler(1, 3)[0].split(". ")
        parts.insert(self.rng.randint(0, len(parts)), sentence.rstrip("."))
        return ". ".join(parts).rstrip(".") + "."

    def apart(self, fact: Fact, mentions: int) -> list[str]:
        """Paragraphs that name keyword and answer `mentions` times each, never together."""
        body = self.filler(1)
        for i in range(mentions):
            body.append(self.with_sentence(fact.subject_mentions[i % len(fact.subject_mentions)]))
            body.extend(self.filler(1))
            body.append(self.with_sentence(fact.answer_mentions[i % len(fact.answer_mentions)]))
        return body

    def distractors(self, fact: Fact) -> None:
        """Two documents with only the keyword and two with only the answer."""
        for mention in fact.subject_mentions[:2]:
            self.doc(self.rng.choice(self.places), [*self.filler(1), self.with_sentence(mention)])
        for mention in fact.answer_mentions[:2]:
            self.doc(self.rng.choice(self.places), [self.with_sentence(mention), *self.filler(1)])

    def add(self, case: str) -> None:
        """Create one question of `case` and its documents."""
        pool = templates.PERSON_SUBJECT if case == "vector_only" else templates.TEMPLATES
        fact = self.rng.choice(pool)(self.names, self.rng)
        qid = f"demo-q{len(self.questions):04d}"
        self.questions.append(Question(qid, fact.question, fact.answer, fact.aliases, "demo"))
        self.cases[qid] = case
        getattr(self, f"case_{case}")(qid, fact)

    def case_single(self, qid: str, fact: Fact) -> None:
        self.doc(fact.keyword, [*self.filler(2), self.with_sentence(fact.statement)], qid)
        self.distractors(fact)

    def case_late(self, qid: str, fact: Fact) -> None:
        for _ in range(self.spec.late_rank - 1):
            self.doc(self.rng.choice(self.places), self.apart(fact, 2))
        self.doc(self.rng.choice(self.places), [self.with_sentence(fact.statement)], qid)

    def case_long(self, qid: str, fact: Fact) -> None:
        body: list[str] = []
        words = 0
        while words <= self.spec.long_words:
            body.extend(self.filler(1, 6))
            words += word_count(body[-1])
        count = len(body)
        body[0] = self.with_sentence(fact.subject_mentions[0])
        body[int(count * 0.4)] = self.with_sentence(fact.answer_mentions[0])
        body[int(count * 0.8)] = self.with_sentence(fact.statement)
        self.doc(self.rng.choice(self.places), body, qid)

    def case_paragraphs(self, qid: str, fact: Fact) -> None:
        body = self.filler(60, 2)
        body[2] = self.with_sentence(fact.subject_mentions[0])
        body[50] = self.with_sentence(fact.answer_mentions[0])
        body[45] = self.with_sentence(fact.statement)
        self.doc(self.rng.choice(self.places), body, qid)

    def case_vector_only(self, qid: str, fact: Fact) -> None:
        assert fact.reordered is not None
        self.doc(fact.keyword.split()[-1], [fact.reordered, *self.filler(1, 2)], qid)
        self.distractors(fact)

    def case_split(self, qid: str, fact: Fact) -> None:
        for _ in range(3):
            self.doc(self.rng.choice(self.places), self.apart(fact, 1))

    def case_absent(self, qid: str, fact: Fact) -> None:
        self.distractors(fact)

    def case_discarded(self, qid: str, fact: Fact) -> None:
        for _ in range(self.spec.k1 + 10):
            self.doc(self.rng.choice(self.places), self.apart(fact, 2))

    def case_crowded(self, qid: str, fact: Fact) -> None:
        for _ in range(self.spec.crowd):
            self.doc(self.rng.choice(self.places), self.apart(fact, 1))
        body = self.apart(fact, self.spec.crowd_mentions)
        body.insert(self.rng.randint(1, len(body) - 1), self.with_sentence(fact.statement))
        words = sum(map(word_count, body))
        while words <= self.spec.crowd_words:
            position = self.rng.randint(0, len(body))
            body.insert(position, self.filler(1, 6)[0])
            words += word_count(body[position])
        self.doc(self.rng.choice(self.places), body, qid)

    def case_buried(self, qid: str, fact: Fact) -> None:
        self.case_discarded(qid, fact)
        self.doc(self.rng.choice(self.places), [self.with_sentence(fact.statement)], qid)


class World:
    """A generated world: questions, their expected labels, and a document stream."""

    def __init__(self, spec: WorldSpec = WorldSpec()) -> None:
        self.spec = spec
        builder = _Builder(spec)
        for case, count in spec.counts.items():
            if case not in CASES:
                raise ValueError(f"unknown demo case {case!r}; known: {', '.join(CASES)}")
            for _ in range(count):
                builder.add(case)
        self._builder = builder
        self.questions = builder.questions
        if len(builder.drafts) > spec.documents:
            raise ValueError(
                f"{spec.documents} documents are too few: the questions need "
                f"{len(builder.drafts)}; raise `documents`"
            )
        order_rng = random.Random(spec.seed + 1)
        self._slots = dict(
            zip(
                sorted(order_rng.sample(range(spec.documents), len(builder.drafts))),
                order_rng.sample(builder.drafts, len(builder.drafts)),
                strict=True,
            )
        )
        self.fact_docs = {
            draft.fact_of: _doc_id(slot) for slot, draft in self._slots.items() if draft.fact_of
        }

    def expected(self) -> list[Expected]:
        """The label of every question by construction."""
        return [
            Expected(q.id, case, *CASES[case], self.fact_docs.get(q.id))
            for q in self.questions
            for case in [self._builder.cases[q.id]]
        ]

    def documents(self) -> Iterator[Document]:
        """All documents in corpus order (filler generated on the fly: constant memory)."""
        rng = random.Random(self.spec.seed + 2)
        places, groups = self._builder.places, self._builder.groups
        for slot in range(self.spec.documents):
            draft = self._slots.get(slot)
            if draft is None:
                body = paragraphs(rng, places, groups, rng.randint(1, 2), rng.randint(2, 4))
                draft = _Draft(rng.choice(places), body)
            yield Document(_doc_id(slot), "\n\n".join([draft.title, *draft.paragraphs]))


def _doc_id(slot: int) -> str:
    return f"demo-d{slot:07d}"


def write_world(spec: WorldSpec, directory: str | Path) -> dict[str, int]:
    """Write corpus files, questions and expected labels under `directory`; return counts."""
    out = WorldLayout(Path(directory))
    world = World(spec)
    per_file = math.ceil(spec.documents / spec.files)
    documents = world.documents()
    shutil.rmtree(out.corpus, ignore_errors=True)
    for part in tqdm(range(spec.files), desc="demo corpus files", leave=False):
        with atomic_open(out.corpus_file(part)) as file:
            for _, doc in zip(range(per_file), documents, strict=False):
                file.write(doc_line(doc))
    write_records(out.questions, world.questions)
    write_records(out.expected, world.expected())
    counts = {"documents": spec.documents, "questions": len(world.questions)}
    write_json(out.spec, {"spec": spec.__dict__, **counts})
    return counts


def doc_line(doc: Document) -> bytes:
    """The corpus-file line of a document, in the Pile's shape ({"id", "text", "meta"})."""
    return orjson.dumps({"id": doc.id, "text": doc.text, "meta": {"source": "tipqa-demo"}}) + b"\n"
