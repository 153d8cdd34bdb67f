"""Synthetic finished builds for the explorer: the files a build leaves, written directly.

`synthetic_run(root, n)` writes a run of `n` questions in one pool `dev` (shards of 1,000):
partition, shards (keywords, token candidates and judgments, vector candidates and judgments),
a test split and the split statistics, and returns the run and a `FetchDocuments` over the
documents it made up (the token index's part, each made when asked for). Labels cycle through
answerable (token), answerable (vector), unanswerable and discarded (`relabel` sets some
questions' kind instead). `hostile` is put into the first `hostile_first` questions (all by
default): their documents, question, aliases, chunks, and with `hostile_id` their ids too, as
text from an untrusted corpus would be. With `sizes` the windows and chunks have the lengths
of a real build's, filled with real text. `write_audit` adds a pool's label audit file,
`write_judge_audit` its judge audit, `confirm` a confirming judge's verdicts; `Page` reads a
written page back as the page itself reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tipqa.core.jsonl import read_records, write_json, write_records
from tipqa.core.layout import RunLayout, ShardLayout
from tipqa.core.records import (
    Confirmation,
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
KINDS = ("token", "vector", "unanswerable", "discarded")
WINDOWS = WindowSettings(max_words=10_000, max_windows=16)
PARAMETERS = {"k1": 100, "k2": 10, "judge": {"backend": "rules"}, "windows": {"max_words": None}}
DOC_ID = re.compile(r"d(\d{6})-(\d)")

Fetch = Callable[[list[str]], dict[str, Document]]


@dataclass(frozen=True)
class Sizes:
    """Lengths of windows and chunks to cycle through, and real text to fill them with."""

    filler: str
    windows: list[int]
    chunks: list[int]

    def text(self, seed: int, length: int) -> str:
        """`length` characters of the filler, on one line, from a place chosen by `seed`."""
        start = (seed * 7_919) % max(1, len(self.filler) - length)
        return " ".join(self.filler[start : start + length].split())


@dataclass
class _World:
    """What the documents and chunks of question `index` hold."""

    hostile: str = ""
    hostile_first: int | None = None
    hostile_id: str = ""
    sizes: Sizes | None = None
    relabel: dict[int, str] = field(default_factory=dict)
    id_format: str = "q{:06d}"

    def question_id(self, index: int) -> str:
        return self.id_format.format(index) + self.hostile_for(index)[1]

    def hostile_for(self, index: int) -> tuple[str, str]:
        if self.hostile_first is not None and index >= self.hostile_first:
            return "", ""
        return self.hostile, self.hostile_id

    def names(self, index: int) -> tuple[str, str]:
        return f"Person{index:06d} Example", f"Alias{index:06d}"

    def doc_id(self, index: int, n: int) -> str:
        return f"d{index:06d}-{n}{self.hostile_for(index)[1]}"

    def document(self, doc_id: str) -> Document | None:
        found = DOC_ID.match(doc_id)
        if found is None:
            return None
        index, n = int(found.group(1)), int(found.group(2))
        if doc_id != self.doc_id(index, n):
            return None
        keyword, alias = self.names(index)
        hostile = self.hostile_for(index)[0]
        middle = f"Travellers wrote that {keyword} was known to everyone there as {alias}."
        if self.sizes is not None:
            length = self.sizes.windows[(3 * index + n) % len(self.sizes.windows)]
            middle = f"{keyword} {self.sizes.text(3 * index + n, length)} {alias}."
        text = (
            f"{keyword} lived in a quiet town by the sea for many years.\n\n"
            f"{middle} {hostile}\n\n"
            "The harbour was rebuilt after the storm of the following winter."
        )
        return Document(doc_id, text)

    def chunk(self, index: int, n: int, answer: str) -> str:
        hostile = self.hostile_for(index)[0]
        if self.sizes is None:
            return f"chunk {answer} {n} {hostile}".strip()
        length = self.sizes.chunks[(3 * index + n) % len(self.sizes.chunks)]
        return f"{self.sizes.text(5 * index + n, length)} {answer} {hostile}".strip()


def synthetic_run(
    root: Path,
    questions: int,
    hostile: str = "",
    *,
    hostile_first: int | None = None,
    hostile_id: str = "",
    sizes: Sizes | None = None,
    relabel: dict[int, str] | None = None,
    id_format: str = "q{:06d}",
    parameters: dict[str, Any] | None = None,
) -> tuple[RunLayout, Fetch]:
    """Write a finished build of `questions` questions under `root`; return it and its fetch.

    Question `i`'s id is `id_format.format(i)` (then `hostile_id` where it is hostile); the
    split statistics record `parameters` (default `PARAMETERS`) as the build's settings."""
    world = _World(hostile, hostile_first, hostile_id, sizes, relabel or {}, id_format)
    run = RunLayout(root)
    pool = run.pool("dev")
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
        rows = [_question(i, world) for i in range(first, last)]
        _write_shard(shard, first, rows, world)
        for _, labelled in rows:
            by_label[labelled.label].append(labelled)
            if labelled.label in ("answerable", "unanswerable"):
                test.append(labelled)
    for label, labelled in by_label.items():
        write_records(pool.partition_files.labelled(label), labelled)
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
        "parameters": PARAMETERS if parameters is None else parameters,
    }
    StepStats("partition", info={"build": {}}).write(pool.partition_stats)
    StepStats("splits", info=info).write(run.splits_stats)

    def fetch(ids: list[str]) -> dict[str, Document]:
        found = {i: world.document(i) for i in ids}
        return {i: d for i, d in found.items() if d is not None}

    return run, fetch


def _question(index: int, world: _World) -> tuple[Question, LabeledQuestion]:
    keyword, alias = world.names(index)
    hostile = world.hostile_for(index)[0]
    aliases = [alias, "A.B."] + ([hostile] if hostile else [])
    question = Question(world.question_id(index), f"Who is {keyword}? {hostile}", alias, aliases)
    kind = world.relabel.get(index, KINDS[index % 4])
    doc_ids = [world.doc_id(index, n) for n in range(3)]
    label = {"token": "answerable", "vector": "answerable"}.get(kind, kind)
    evidence = None
    if kind == "token":
        document = world.document(doc_ids[0])
        assert document is not None
        window = judge_windows(document, [keyword], question.aliases, WINDOWS)[0][0]
        evidence = Evidence("token", doc_ids[0], f"{doc_ids[0]}@w0", window.text)
    elif kind == "vector":
        evidence = Evidence("vector", doc_ids[1], f"{doc_ids[1]}#0", world.chunk(index, 1, alias))
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
    shard: ShardLayout, first: int, rows: list[tuple[Question, LabeledQuestion]], world: _World
) -> None:
    keywords, candidates, judgments, vectors, vector_judgments = [], [], [], [], []
    for index, (_, row) in enumerate(rows, first):
        doc_ids = [world.doc_id(index, n) for n in range(3)]
        keywords.append(Keywords(row.id, row.keywords))
        hits = [TokenHit(doc_id, 3.0 - n) for n, doc_id in enumerate(doc_ids)]
        candidates.append(TokenCandidates(row.id, row.keywords, row.total_matches or 0, hits))
        answered = row.evidence is not None and row.evidence.stage == "token"
        for n, doc_id in enumerate(doc_ids[:1] if answered else doc_ids):
            label = "yes" if answered else "no"
            document = world.document(doc_id)
            assert document is not None
            window = judge_windows(document, row.keywords, row.aliases, WINDOWS)[0][0]
            judgments.append(
                Judgment(row.id, "token", doc_id, f"{doc_id}@w0", label, label, "rules:v1",
                         p_yes=0.9 if answered else 0.1 * n, start=window.start, end=window.end)
            )  # fmt: skip
        if row.stage == "vector":
            chunk_hits = [
                VectorHit(f"{doc_id}#0", doc_id, 0.9 - n / 10, world.chunk(index, n, row.answer))
                for n, doc_id in enumerate(doc_ids)
            ]
            vectors.append(VectorCandidates(row.id, chunk_hits))
            for n, hit in enumerate(chunk_hits):
                label = "yes" if row.label == "answerable" and n == 1 else "no"
                vector_judgments.append(
                    Judgment(row.id, "vector", hit.doc_id, hit.chunk_id, label, label, "rules:v1",
                             start=10 * n, end=10 * n + len(hit.text))
                )  # fmt: skip
    write_records(shard.questions, [q for q, _ in rows])
    write_records(shard.keywords, keywords)
    write_records(shard.token_candidates, candidates)
    write_records(shard.token_judgments, judgments)
    write_records(shard.vector_candidates, vectors)
    write_records(shard.vector_judgments, vector_judgments)
    info = {"max_words": WINDOWS.max_words, "max_windows": WINDOWS.max_windows}
    StepStats("token_judge", info=info).write(shard.stats("token_judge"))


def write_audit(run: RunLayout, audited: list[str], found: dict[str, str]) -> dict:
    """Write pool `dev`'s label audit (the label audit's `audit.json`): `audited` question ids
    (unanswerable), of which `found` (id: alias) the audit found answerable."""
    findings = []
    for qid, alias in found.items():
        text = f"The audit read that the answer is {alias}."
        evidence = {"stage": "audit", "doc_id": f"audit-{qid}", "unit_id": f"audit-{qid}@w0",
                    "text": text, "start": 5, "end": 5 + len(text),
                    "relaxation": "keyword 2 left out"}  # fmt: skip
        findings.append(
            {
                "id": qid,
                "label": "unanswerable",
                "cause": "keywords_minus_one",
                "evidence": evidence,
            }
        )
    rate = len(found) / len(audited)
    causes = {"keywords_minus_one": len(found)}
    by_label = {
        "unanswerable": {"labelled": len(audited), "audited": len(audited), "found": len(found),
                         "rate": rate, "ci95": [0.0, 1.0], "by_cause": causes},
        "discarded": {"labelled": 0, "audited": 0, "found": 0, "rate": 0.0, "ci95": None,
                      "by_cause": {}},
    }  # fmt: skip
    audit = {
        "schema_version": 1,
        "pool": "dev",
        "fingerprint": "f" * 16,
        "settings": {"sample": len(audited), "seed": 0},
        "audited": len(audited),
        "audited_ids": {"unanswerable": audited, "discarded": []},
        "by_label": by_label,
        "rate": rate,
        "ci95": [0.0, 1.0],
        "found": findings,
        "judge_calls": 2 * len(audited),
        "prompt_tokens": 300 * len(audited),
        "build": {"judge_calls": 1000, "prompt_tokens": 150_000},
        "applied": False,
    }
    write_json(run.pool("dev").root / "audit.json", audit)
    return audit


def write_judge_audit(run: RunLayout, disputed: dict[str, tuple[str, str, str]]) -> dict:
    """Add a judge audit to pool `dev`'s label audit (written by `write_audit`), of the shape
    the audit writes (`judge_audit`): `disputed` maps a question id to its label, the stage and
    the unit the second judge judged otherwise than the build's judge."""
    path = run.pool("dev").root / "audit.json"
    audit = json.loads(path.read_text())
    judged: dict[str, Any] = {"judge": {"backend": "openai", "model": "second-judge-70b"}}
    for label in ("answerable", "unanswerable", "discarded"):
        entries = []
        for qid, (given, stage, unit) in disputed.items():
            if given == label:
                text = f"The second judge read {unit} again."
                evidence = {"doc_id": re.split("[@#]", unit)[0], "unit_id": unit, "text": text,
                            "start": 0, "end": len(text)}  # fmt: skip
                entries.append({"id": qid, "stage": stage, "evidence": evidence})
        judged[label] = {
            "labelled": 10, "audited": 5, "disputed": entries, "rate": len(entries) / 5,
            "ci95": [0.01, 0.7], "by_stage": {"token": {"audited": 5, "disputed": len(entries),
            "rate": len(entries) / 5}}, "failed": 0,
        }  # fmt: skip
    judged["agreement"] = {"units": 40, "observed": 0.925, "kappa": 0.81, "ci95": [0.62, 0.95]}
    judged["judge_calls"], judged["prompt_tokens"] = 40, 12_000
    audit["judge_audit"] = judged
    write_json(path, audit)
    return audit


def confirm(run: RunLayout, question_id: str, verdicts: dict[str, str]) -> None:
    """Give the vector judgments of a question of pool `dev` a confirming judge's verdicts
    (`[judge.confirm]`), by chunk id: each chunk judged so becomes a "yes" of the build's
    judge, confirmed or not as `verdicts` says."""
    path = run.pool("dev").shard(0).vector_judgments
    judgments = read_records(path, Judgment)
    for judgment in judgments:
        said = verdicts.get(judgment.unit_id)
        if judgment.question_id == question_id and said is not None:
            judgment.label = judgment.raw = "yes"
            judgment.confirmation = Confirmation(said, said, "confirm-judge")  # type: ignore[arg-type]
    write_records(path, judgments)


def _unpack(fields: list[str], values: list[Any]) -> dict[str, Any]:
    """A list of the data files as a dict (its trailing nulls left out)."""
    return dict(zip(fields, values + [None] * (len(fields) - len(values)), strict=True))


def _calls(folder: Path, pattern: str) -> list[list]:
    """The arguments of every data file's call, as JSON (the files are `tipqa.f(i,{...});`)."""
    calls = []
    for path in sorted(folder.glob(pattern)):
        body = re.fullmatch(r"tipqa\.\w+\((?:(\d+),)?(.*)\);\n", path.read_text(), re.S)
        assert body is not None, path
        calls.append([body.group(1) and int(body.group(1)), json.loads(body.group(2))])
    return calls


class Page:
    """A written page read back as the page reads it: rows, pages, texts resolved."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        data = folder / "data"
        [[_, self.meta]] = _calls(data, "meta.js")
        self.rows = [row for _, chunk in _calls(data, "rows-*.js") for row in chunk]
        self.search = [entry for _, s in _calls(data, "search-*.js") for entry in s["rows"]]
        self.documents = [s["documents"] for _, s in _calls(data, "search-*.js")]
        self.pages: dict[str, Any] = {}
        self.files: dict[str, int] = {}
        for index, chunk in _calls(data, "details-*.js"):
            for n, qid in enumerate(chunk):
                assert self.rows[index * self.meta["details_per_file"] + n][0] == qid
                self.files[qid] = index
            self.pages.update(chunk)
        self.strings = [s for _, chunk in _calls(data, "texts-*.js") for s in chunk]

    def question(self, qid: str) -> dict[str, Any]:
        """A question's page with its lists as dicts and its texts as `{text, marked, ...}`."""
        page = dict(self.pages[qid])
        fields = self.meta["fields"]
        page["token"] = [_unpack(fields["document"], d) for d in page["token"]]
        for document in page["token"]:
            document["windows"] = [
                self._unit(_unpack(fields["window"], w)) for w in document["windows"]
            ]
        page["vector"] = [self._unit(_unpack(fields["chunk"], c)) for c in page["vector"]]
        return page

    def _unit(self, unit: dict[str, Any]) -> dict[str, Any]:
        if unit.get("text") is not None:
            unit["text"] = self.text(unit["text"])
        return unit

    def text(self, ref: list[Any]) -> dict[str, Any]:
        """A text reference resolved: its pieces, the whole where kept, marks as strings."""
        ref = ref + [None] * (6 - len(ref))
        length, matches, pieces, whole, fold, context = ref
        resolved: dict[str, Any] = {"length": length, "matches": matches, "fold": fold}
        if pieces is not None:
            resolved["pieces"] = [(o, self.strings[i], self._marked(i, m)) for o, i, m in pieces]
        if whole is not None:
            resolved["whole"] = self.strings[whole[0]]
            resolved["marked"] = self._marked(whole[0], whole[1])
        if context is not None:
            resolved["context"] = [self.strings[i] for i in context]
        return resolved

    def _marked(self, string_id: int, marks: list[int]) -> list[tuple[str, int]]:
        units = self.strings[string_id].encode("utf-16-le")
        return [
            (units[2 * marks[i] : 2 * marks[i + 1]].decode("utf-16-le"), marks[i + 2])
            for i in range(0, len(marks), 3)
        ]
