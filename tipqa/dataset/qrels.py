"""Relevance files: the judged evidence of a build as TREC qrels, with the judged units beside.

`qrels.txt` holds one line `question_id 0 doc_id relevance` per judged (question, document)
pair, both stages together: relevance 1 when any window or chunk of the document was judged
"yes" for the question, 0 when every one of its judged units was "no". As in TREC, a document
that was never judged (past the token stage's first "yes", or beyond k1 / k2) has no line:
it is unjudged, not irrelevant. A judgment that failed gives no line and is counted. The 0
lines are kept as TREC qrels keep judged non-relevant documents; NanoKnow (castorini) lists
only the supported documents, which here are the lines whose relevance is 1. Recall counts
only those.

`judged_units.jsonl` holds one `JudgedUnit` per judged window (token stage) or chunk (vector
stage): its stage, document, unit id, relevance, the judge's probability of "yes" (when the
judge gives one) and its character offsets in the document: a token window's span, or where
a vector chunk's text first occurs in its document (None where it could not be located, or in
a build that recorded no offsets).
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import orjson

from tipqa.core.jsonl import atomic_open, iter_records, read_records
from tipqa.core.layout import ShardLayout
from tipqa.core.records import JudgedUnit, Judgment
from tipqa.core.trec import trec_lines, trec_number

QRELS_FILE = "qrels.txt"
UNITS_FILE = "judged_units.jsonl"

Qrels = dict[str, dict[str, int]]
QRELS_FIELDS = ("qid", "0", "doc_id", "relevance")


def judged_units(judgments: Iterable[Judgment], counts: Counter[str]) -> list[JudgedUnit]:
    """The yes/no verdicts as units (a "yes" confirmed where a confirming judge asked); failed
    ones are left out and counted."""
    units = []
    for judgment in judgments:
        if judgment.verdict is None:
            counts["units_failed"] += 1
            continue
        units.append(
            JudgedUnit(
                question_id=judgment.question_id,
                stage=judgment.stage,
                doc_id=judgment.doc_id,
                unit_id=judgment.unit_id,
                relevance=int(judgment.verdict == "yes"),
                p_yes=judgment.p_yes,
                judge=judgment.judge,
                start=judgment.start,
                end=judgment.end,
            )
        )
    return units


def shard_units(shard: ShardLayout, counts: Counter[str]) -> list[JudgedUnit]:
    """Every judged unit of a shard: its token-stage windows, then its vector-stage chunks."""
    units = []
    for path in (shard.token_judgments, shard.vector_judgments):
        units.extend(judged_units(read_records(path, Judgment), counts))
    return units


def document_relevance(units: Iterable[JudgedUnit]) -> Qrels:
    """Per question, each judged document's relevance: the highest of its units'."""
    qrels: Qrels = {}
    for unit in units:
        docs = qrels.setdefault(unit.question_id, {})
        docs[unit.doc_id] = max(docs.get(unit.doc_id, 0), unit.relevance)
    return qrels


def _usable(name: str) -> bool:
    """True when `name` can be a field of a whitespace-separated TREC line."""
    return bool(name) and not any(c.isspace() for c in name)


def qrels_lines(qrels: Qrels, counts: Counter[str]) -> Iterator[str]:
    """The TREC lines of `qrels`; a pair whose ids hold whitespace is left out and counted."""
    for qid, docs in qrels.items():
        for doc_id, relevance in docs.items():
            if not (_usable(qid) and _usable(doc_id)):
                counts["pairs_with_whitespace_ids"] += 1
                continue
            counts["pairs_relevant" if relevance > 0 else "pairs_not_relevant"] += 1
            yield f"{qid} 0 {doc_id} {relevance}\n"


def write_relevance(groups: Iterable[list[JudgedUnit]], folder: Path) -> Counter[str]:
    """Write `qrels.txt` and `judged_units.jsonl` into `folder`; return what was written.

    `groups` hold the units of disjoint sets of questions (one shard each), written one
    group at a time so that memory holds one shard's units.
    """
    counts: Counter[str] = Counter()
    with atomic_open(folder / UNITS_FILE) as units_out, atomic_open(folder / QRELS_FILE) as out:
        for units in groups:
            for unit in units:
                units_out.write(orjson.dumps(unit.to_dict()) + b"\n")
            counts["units"] += len(units)
            counts["units_without_offsets"] += sum(u.start is None for u in units)
            qrels = document_relevance(units)
            for line in qrels_lines(qrels, counts):
                out.write(line.encode())
            counts["questions_judged"] += len(qrels)
            counts["questions_with_relevant"] += sum(any(d.values()) for d in qrels.values())
    return counts


def read_qrels(path: Path) -> Qrels:
    """Read a TREC qrels file (`qid iteration doc_id relevance`); bad lines are an InputError."""
    qrels: Qrels = {}
    for number, (qid, _, doc_id, relevance) in trec_lines(path, "qrels", QRELS_FIELDS):
        value = trec_number(relevance, int, "relevance", path, number, "an integer")
        qrels.setdefault(qid, {})[doc_id] = value
    return qrels


def split_relevance(
    folders: list[Path],
    membership: dict[str, str],
    names: tuple[str, ...],
    root: Path,
    added: Mapping[Path, list[JudgedUnit]] | None = None,
) -> dict[str, dict[str, int]]:
    """Copy the partitions' relevance files into `root/<split>/`, each question to its split.

    `added` holds more judged units of a partition (the audit's, when applied): they join its
    judged units, and its qrels are those of both (a document's highest relevance). A partition
    without relevance files (built before they were written) is counted under
    `pools_without_relevance`; without any, no split gets relevance files.
    """
    added = added or {}
    sources = [f for f in folders if (f / QRELS_FILE).is_file() and (f / UNITS_FILE).is_file()]
    counts: dict[str, dict[str, int]] = {name: Counter() for name in names}
    if not sources:
        for name in names:
            for stale in (root / name / QRELS_FILE, root / name / UNITS_FILE):
                stale.unlink(missing_ok=True)
        return {"pools_without_relevance": {"count": len(folders)}} if folders else {}
    with contextlib.ExitStack() as stack:
        qrels = {n: stack.enter_context(atomic_open(root / n / QRELS_FILE)) for n in names}
        units = {n: stack.enter_context(atomic_open(root / n / UNITS_FILE)) for n in names}
        for folder in sources:
            more = added.get(folder, [])
            for qid, line in _qrels_lines(folder / QRELS_FILE, more):
                split = membership.get(qid)
                if split is not None:
                    qrels[split].write(line)
                    counts[split]["qrels_pairs"] += 1
            for unit in itertools.chain(iter_records(folder / UNITS_FILE, JudgedUnit), more):
                split = membership.get(unit.question_id)
                if split is not None:
                    units[split].write(orjson.dumps(unit.to_dict()) + b"\n")
                    counts[split]["judged_units"] += 1
    missing = len(folders) - len(sources)
    result = {name: dict(c) for name, c in counts.items()}
    if missing:
        result["pools_without_relevance"] = {"count": missing}
    return result


def _qrels_lines(path: Path, added: list[JudgedUnit]) -> Iterator[tuple[str, bytes]]:
    """(question id, line) of a qrels file, merged with the document relevance of `added`."""
    if not added:
        with open(path, "rb") as handle:
            for raw in handle:
                yield raw.split(b" ", 1)[0].decode(), raw
        return
    merged = read_qrels(path)
    for qid, docs in document_relevance(added).items():
        known = merged.setdefault(qid, {})
        for doc_id, relevance in docs.items():
            known[doc_id] = max(known.get(doc_id, 0), relevance)
    for line in qrels_lines(merged, Counter()):
        yield line.split(" ", 1)[0], line.encode()
