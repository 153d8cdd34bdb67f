"""Synthetic finished builds for the explorer: the files a build leaves, written directly.

`synthetic_run(root, n)` writes a run of `n` questions in one pool `dev` (shards of 1,000):
partition, shards (keywords, token candidates and judgments, vector candidates and judgments),
a test split and the split statistics, and returns the run and a `FetchDocuments` over the
documents it made up (the token index's part). Labels cycle through answerable (token),
answerable (vector), unanswerable and discarded; `hostile` is put into every document, every
question and every chunk, as text from an untrusted corpus would be.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tipqa.core.jsonl import write_records
from tipqa.core.layout import RunLayout, ShardLayout
from tipqa.core.records import (
    Document,
    Evidence,
    Judgment,
    Keywords,
    LabeledQuestion,
    Question,
    TokenCandidates,
    TokenHit,
    VectorCandidates,
    VectorHit,
)
from tipqa.core.stats import StepStats
from tipqa.stages.windows import WindowSettings, judge_windows

SHARD = 1_000
WINDOWS = WindowSettings(max_words=10_000, max_windows=16)
PARAMETERS = {"k1": 100, "k2": 10, "judge": {"backend": "rules"}, "windows": {"max_words": None}}

Fetch = Callable[[list[str]], dict[str, Document]]


def _document(doc_id: str, keyword: str, alias: str, hostile: str) -> Document:
    text = (
        f"{keyword} lived in a quiet town by the sea for many years.\n\n"
        f"Travellers wrote that {keyword} was known to everyone there as {alias}. {hostile}\n\n"
        "The harbour was rebuilt after the storm of the following winter."
    )
    return Document(doc_id, text)


def synthetic_run(root: Path, questions: int, hostile: str = "") -> tuple[RunLayout, Fetch]:
    """Write a finished build of `questions` questions under `root`; return it and its fetch."""
    run = RunLayout(root)
    pool = run.pool("dev")
    documents: dict[str, Document] = {}
    by_label: dict[str, list[LabeledQuestion]] = {
        "answerable": [],
        "unanswerable": [],
        "discarded": [],
        "undetermined": [],
    }
    test: list[LabeledQuestion] = []
    for first in range(0, questions, SHARD):
        shard = pool.shard(first // SHARD)
        last = min(questions, first + SHARD)
        rows = [_question(i, hostile, documents) for i in range(first, last)]
        _write_shard(shard, rows, documents)
        for _, labelled in rows:
            by_label[labelled.label].append(labelled)
            if labelled.label in ("answerable", "unanswerable"):
                test.append(labelled)
    for label, labelled in by_label.items():
        write_records(pool.partition / f"{label}.jsonl", labelled)
    write_records(run.splits / "test" / "questions.jsonl", test)
    counts = {label: len(rows) for label, rows in by_label.items()}
    by_stage = {
        "answerable_token": sum(r.stage == "token" for r in by_label["answerable"]),
        "answerable_vector": sum(r.stage == "vector" for r in by_label["answerable"]),
        "unanswerable_vector": counts["unanswerable"],
        "discarded_token": counts["discarded"],
    }
    info = {
        "pools": {"dev": {"questions": questions, "by_stage": by_stage, **counts}},
        "splits": {"test": {"questions": len(test), "by_stage": by_stage, "pool": "dev"}},
        "parameters": PARAMETERS,
    }
    StepStats("splits", info=info).write(run.splits_stats)

    def fetch(ids: list[str]) -> dict[str, Document]:
        return {i: documents[i] for i in ids if i in documents}

    return run, fetch


def _question(
    index: int, hostile: str, documents: dict[str, Document]
) -> tuple[Question, LabeledQuestion]:
    keyword, alias = f"Person{index:06d} Example", f"Alias{index:06d}"
    question = Question(f"q{index:06d}", f"Who is {keyword}? {hostile}", alias, [alias, "A.B."])
    kind = ("token", "vector", "unanswerable", "discarded")[index % 4]
    doc_ids = [f"d{index:06d}-{n}" for n in range(3)]
    for doc_id in doc_ids:
        documents[doc_id] = _document(doc_id, keyword, alias, hostile)
    label = {"token": "answerable", "vector": "answerable"}.get(kind, kind)
    evidence = None
    if kind == "token":
        window = judge_windows(documents[doc_ids[0]], [keyword], question.aliases, WINDOWS)[0][0]
        evidence = Evidence("token", doc_ids[0], f"{doc_ids[0]}@w0", window.text)
    elif kind == "vector":
        evidence = Evidence("vector", doc_ids[1], f"{doc_ids[1]}#0", f"chunk {alias} {hostile}")
    labelled = LabeledQuestion(
        question.id,
        question.text,
        question.answer,
        question.aliases,
        label,  # type: ignore[arg-type]
        "token" if kind in ("token", "discarded") else "vector",
        f"synthetic {kind}",
        [keyword],
        500 if kind == "discarded" else 3,
        evidence,
    )
    return question, labelled


def _write_shard(
    shard: ShardLayout,
    rows: list[tuple[Question, LabeledQuestion]],
    documents: dict[str, Document],
) -> None:
    keywords, candidates, judgments, vectors, vector_judgments = [], [], [], [], []
    for question, row in rows:
        doc_ids = [f"d{question.id[1:]}-{n}" for n in range(3)]
        keywords.append(Keywords(row.id, row.keywords))
        hits = [TokenHit(doc_id, 3.0 - n) for n, doc_id in enumerate(doc_ids)]
        candidates.append(TokenCandidates(row.id, row.keywords, row.total_matches or 0, hits))
        answered = row.evidence is not None and row.evidence.stage == "token"
        for n, doc_id in enumerate(doc_ids[:1] if answered else doc_ids):
            label = "yes" if answered else "no"
            window = judge_windows(documents[doc_id], row.keywords, row.aliases, WINDOWS)[0][0]
            judgments.append(
                Judgment(row.id, "token", doc_id, f"{doc_id}@w0", label, label, "rules:v1",
                         p_yes=0.9 if answered else 0.1 * n, start=window.start, end=window.end)
            )  # fmt: skip
        if row.stage == "vector":
            chunk_hits = [
                VectorHit(f"{doc_id}#0", doc_id, 0.9 - n / 10, f"chunk {question.answer} {n}")
                for n, doc_id in enumerate(doc_ids)
            ]
            if row.evidence is not None:
                chunk_hits[1].text = row.evidence.text
            vectors.append(VectorCandidates(row.id, chunk_hits))
            for n, hit in enumerate(chunk_hits):
                label = "yes" if row.label == "answerable" and n == 1 else "no"
                vector_judgments.append(
                    Judgment(row.id, "vector", hit.doc_id, hit.chunk_id, label, label, "rules:v1")
                )
    write_records(shard.questions, [q for q, _ in rows])
    write_records(shard.keywords, keywords)
    write_records(shard.token_candidates, candidates)
    write_records(shard.token_judgments, judgments)
    write_records(shard.vector_candidates, vectors)
    write_records(shard.vector_judgments, vector_judgments)
    info = {"max_words": WINDOWS.max_words, "max_windows": WINDOWS.max_windows}
    StepStats("token_judge", info=info).write(shard.stats("token_judge"))
