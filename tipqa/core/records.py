"""The records that flow between stages, and their JSON form.

Every stage reads and writes these types only; `to_dict` / `from_dict` give the JSONL form
(written with orjson by `tipqa.core.jsonl`). `SCHEMA_VERSION` is stored in every stage's stats file
and in the published dataset, and is bumped whenever a field changes meaning.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

SCHEMA_VERSION = 1

Label = Literal["answerable", "unanswerable", "discarded", "undetermined"]
Outcome = Literal["answerable", "unanswerable", "discarded", "undetermined", "to_vector"]
Stage = Literal["token", "vector", "audit"]
Relevance = Literal["yes", "no"]

LABELS: tuple[Label, ...] = ("answerable", "unanswerable", "discarded", "undetermined")

R = TypeVar("R", bound="Record")


class RecordError(ValueError):
    """A mapping could not be turned into a record (missing or mistyped field)."""


@dataclass
class Record:
    """Base of all records: plain dataclasses with a dict round trip."""

    nested: ClassVar[dict[str, type[Record]]] = {}
    unset: ClassVar[tuple[str, ...]] = ()
    """Optional fields left out of the JSON form while None (files without them still read)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready form of the record."""
        return {
            f.name: _plain(getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.name not in self.unset or getattr(self, f.name) is not None
        }

    @classmethod
    def from_dict(cls: type[R], data: dict[str, Any]) -> R:
        """Build a record from its dict form; raise RecordError naming a missing field."""
        if not isinstance(data, dict):
            raise RecordError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name in data:
                value = data[f.name]
                sub = cls.nested.get(f.name)
                if sub is not None and value is not None:
                    value = (
                        [sub.from_dict(v) for v in value]
                        if isinstance(value, list)
                        else sub.from_dict(value)
                    )
                kwargs[f.name] = value
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise RecordError(f"{cls.__name__}: missing field {f.name!r}")
        return cls(**kwargs)


def _plain(value: Any) -> Any:
    """A field's JSON-ready value: records by their `to_dict`, containers copied."""
    if isinstance(value, Record):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


@dataclass
class Question(Record):
    """A question with its gold answer and every accepted alias of it."""

    id: str
    text: str
    answer: str
    aliases: list[str]
    source: str = ""


@dataclass
class Document(Record):
    """A corpus document. `id` is the corpus's own id or one derived from file and line."""

    id: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Chunk(Record):
    """A piece of a document that the vector index embeds (sized to the embedder)."""

    id: str
    doc_id: str
    index: int
    text: str


@dataclass
class Window(Record):
    """A span of a document's paragraphs shown to the judge (appendix A.2 of the paper).

    `start` and `end` are the character offsets in the document's text of the span the window
    shows (`text` is that span with its whitespace normalised).
    """

    doc_id: str
    index: int
    first_paragraph: int
    last_paragraph: int
    text: str
    start: int | None = None
    end: int | None = None


@dataclass
class Keywords(Record):
    """The keywords extracted from one question, with the raw extractor output."""

    question_id: str
    keywords: list[str]
    raw: str = ""
    error: str | None = None
    cached: bool = False


@dataclass
class TokenHit(Record):
    """One document returned by token search, with its frequency score."""

    doc_id: str
    score: float


@dataclass
class TokenCandidates(Record):
    """The token-search result of one question: the first k1 hits and the total match count."""

    question_id: str
    keywords: list[str]
    total: int
    hits: list[TokenHit]
    nested: ClassVar[dict[str, type[Record]]] = {"hits": TokenHit}


@dataclass
class VectorHit(Record):
    """One chunk returned by vector search, with its similarity."""

    chunk_id: str
    doc_id: str
    score: float
    text: str


@dataclass
class VectorCandidates(Record):
    """The vector-search result of one question: its k2 nearest chunks."""

    question_id: str
    hits: list[VectorHit]
    nested: ClassVar[dict[str, type[Record]]] = {"hits": VectorHit}


@dataclass
class Triplet(Record):
    """A (question, answer, document unit) triplet for the judge: the question with its answer,
    aliases and the keywords searched, the stage, the document and its unit (window or chunk)."""

    question_id: str
    question: str
    answer: str
    aliases: list[str]
    keywords: list[str]
    stage: Stage
    doc_id: str
    unit_id: str


@dataclass
class JudgeRequest(Triplet):
    """One relevance question put to a judge: is `text` sufficient to answer `question`?"""

    text: str
    start: int | None = None
    end: int | None = None

    @classmethod
    def for_unit(
        cls,
        question: Question,
        keywords: list[str],
        stage: Stage,
        doc_id: str,
        unit_id: str,
        text: str,
        span: tuple[int | None, int | None] = (None, None),
    ) -> JudgeRequest:
        """The request about one unit (window or chunk) of a document, for `question`."""
        return cls(
            question_id=question.id,
            question=question.text,
            answer=question.answer,
            aliases=question.aliases,
            keywords=keywords,
            stage=stage,
            doc_id=doc_id,
            unit_id=unit_id,
            text=text,
            start=span[0],
            end=span[1],
        )


@dataclass
class Confirmation(Record):
    """The confirming judge's (`[judge.confirm]`) verdict on a unit the build's judge accepted.

    `label` is None when it could not be obtained (the unit is then undetermined, never "no").
    """

    label: Relevance | None
    raw: str
    judge: str
    error: str | None = None
    p_yes: float | None = None
    cached: bool = False

    @classmethod
    def of(cls, judgment: Judgment) -> Confirmation:
        """The confirming judge's `judgment`, as kept beside the build judge's."""
        return cls(
            judgment.label,
            judgment.raw,
            judgment.judge,
            judgment.error,
            judgment.p_yes,
            judgment.cached,
        )


@dataclass
class Judgment(Record):
    """A judge's verdict on one request. `label` is None when it could not be obtained.

    `start` and `end` are the judged text's character offsets in its document, where known.
    `confirmation` is the confirming judge's verdict on a "yes" (with `[judge.confirm]` only).
    """

    question_id: str
    stage: Stage
    doc_id: str
    unit_id: str
    label: Relevance | None
    raw: str
    judge: str
    error: str | None = None
    p_yes: float | None = None
    cached: bool = False
    start: int | None = None
    end: int | None = None
    confirmation: Confirmation | None = None
    nested: ClassVar[dict[str, type[Record]]] = {"confirmation": Confirmation}
    unset: ClassVar[tuple[str, ...]] = ("confirmation",)

    @classmethod
    def of(
        cls,
        request: JudgeRequest,
        *,
        label: Relevance | None,
        raw: str,
        judge: str,
        error: str | None = None,
        p_yes: float | None = None,
        cached: bool = False,
    ) -> Judgment:
        """The verdict on `request`, attributed to its question, stage, document and unit."""
        return cls(
            question_id=request.question_id,
            stage=request.stage,
            doc_id=request.doc_id,
            unit_id=request.unit_id,
            label=label,
            raw=raw,
            judge=judge,
            error=error,
            p_yes=p_yes,
            cached=cached,
            start=request.start,
            end=request.end,
        )

    @property
    def verdict(self) -> Relevance | None:
        """The label the build acts on: the judge's, a "yes" only where a confirming judge (if
        any) said yes too; None when either judge's answer could not be obtained."""
        if self.label != "yes" or self.confirmation is None:
            return self.label
        return self.confirmation.label

    @property
    def failed(self) -> bool:
        """True when no yes/no verdict was obtained (a failed confirmation included)."""
        return self.verdict is None

    @property
    def failure(self) -> str:
        """What failed: the judge's error, else the confirming judge's."""
        if self.label is None or self.confirmation is None:
            return self.error or "failed"
        return f"confirmation: {self.confirmation.error or 'failed'}"


@dataclass
class JudgedUnit(Record):
    """One judged window or chunk of a question, as the relevance files keep it.

    `relevance` is 1 for a "yes", 0 for a "no"; `start` and `end` are the unit's character
    offsets in the document (None where the stage does not record them).
    """

    question_id: str
    stage: Stage
    doc_id: str
    unit_id: str
    relevance: int
    p_yes: float | None
    judge: str
    start: int | None = None
    end: int | None = None


@dataclass
class Evidence(Record):
    """What made a question answerable: the document and the judged text.

    The build's judge said yes to it; `confirmation` is the confirming judge's yes (with
    `[judge.confirm]` only).
    """

    stage: Stage
    doc_id: str
    unit_id: str
    text: str
    confirmation: Confirmation | None = None
    nested: ClassVar[dict[str, type[Record]]] = {"confirmation": Confirmation}
    unset: ClassVar[tuple[str, ...]] = ("confirmation",)


@dataclass
class Decision(Record):
    """The outcome of one question after a stage, with the reason and the evidence.

    A token-stage decision may be "to_vector": the question goes on to vector search.
    """

    question_id: str
    label: Outcome
    stage: Stage
    reason: str
    evidence: Evidence | None = None
    total_matches: int | None = None
    judged: int = 0
    nested: ClassVar[dict[str, type[Record]]] = {"evidence": Evidence}


@dataclass
class VectorInstance(Record):
    """One (question, answer, document, relevance) instance of the vector stage.

    `relevant` is the verdict the build acts on (None: undetermined); `confirmation` is the
    confirming judge's verdict where the build's judge said yes (`[judge.confirm]` only).
    """

    question_id: str
    question: str
    answer: str
    doc_id: str
    chunk_id: str
    text: str
    score: float
    relevant: bool | None
    confirmation: Confirmation | None = None
    nested: ClassVar[dict[str, type[Record]]] = {"confirmation": Confirmation}
    unset: ClassVar[tuple[str, ...]] = ("confirmation",)


@dataclass
class AuditEvidence(Record):
    """What the audit found for a question: the judged unit, where it is, and how it was found.

    `relaxation` says in words which search reached it (`keywords without "Gilmore"`).
    """

    doc_id: str
    unit_id: str
    text: str
    start: int | None
    end: int | None
    relaxation: str
    stage: Stage = "audit"


@dataclass
class AuditFinding(Record):
    """A question labelled unanswerable or discarded for which the audit found evidence.

    `cause` names the relaxation (`tipqa.audit.relaxations.CAUSES`).
    """

    id: str
    label: Label
    cause: str
    evidence: AuditEvidence
    nested: ClassVar[dict[str, type[Record]]] = {"evidence": AuditEvidence}

    def labeled(self, row: LabeledQuestion) -> LabeledQuestion:
        """`row` (this question's partition row) moved to answerable with this evidence."""
        found = self.evidence
        return dataclasses.replace(
            row,
            label="answerable",
            stage="audit",
            reason=f"was {row.label}; the audit found evidence ({found.relaxation})",
            evidence=Evidence("audit", found.doc_id, found.unit_id, found.text),
        )


@dataclass
class Verbatim(Record):
    """The documents that contain a question's text as a phrase, and those of them that also
    contain an answer alias."""

    question_id: str
    documents: int
    with_alias: int


@dataclass
class LabeledQuestion(Record):
    """A row of the final partition: the question, its label, and why.

    `verbatim_docs` and `verbatim_with_alias` (`Verbatim`) are filled in the splits, where
    counted.
    """

    id: str
    question: str
    answer: str
    aliases: list[str]
    label: Label
    stage: Stage
    reason: str
    keywords: list[str]
    total_matches: int | None
    evidence: Evidence | None
    verbatim_docs: int | None = None
    verbatim_with_alias: int | None = None
    nested: ClassVar[dict[str, type[Record]]] = {"evidence": Evidence}
