"""Why a question has its label, in a sentence built from what the stages recorded.

The sentence is a list of strings: text at even places, values (ids, numbers, keywords) at
odd places, so that the page shows each value isolated from the text around it (an id written
right to left stays inside its own box).
"""

from __future__ import annotations

from typing import Any

from tipqa.core.records import LabeledQuestion

Part = str | tuple[str]
"""Text, or a value (a one-element tuple) while the sentence is put together."""


def _n(count: int, one: str, many: str) -> list[Part]:
    return [(f"{count:,}",), f" {one if count == 1 else many}"]


def _joined(values: list[str]) -> list[Part]:
    parts: list[Part] = []
    for i, value in enumerate(values):
        parts.append((value,))
        if i < len(values) - 1:
            parts.append(", " if i < len(values) - 2 else " and ")
    return parts


def alternate(parts: list[Part]) -> list[str]:
    """Text and values alternating, text first (adjacent texts joined, "" between values)."""
    out = [""]
    for part in parts:
        if isinstance(part, tuple):
            out += [part[0], ""]
        else:
            out[-1] += part
    return out


def _search(row: LabeledQuestion) -> list[Part]:
    """What the token search asked for and how many documents had it."""
    needs: list[Part] = (
        ["every keyword (", *_joined(row.keywords), ") together with an alias of the answer"]
        if row.keywords
        else ["an alias of the answer"]
    )
    if row.total_matches is None:
        return ["An unknown number of documents contain ", *needs]
    if row.total_matches == 0:
        return ["No document contains ", *needs]
    return _n(row.total_matches, "document contains ", "documents contain ") + needs


def why(
    row: LabeledQuestion, token: list[dict[str, Any]], vector: list[dict[str, Any]]
) -> list[str]:
    """Why the question has its label: text and values alternating, text first."""
    windows = [w for d in token for w in d["windows"]]
    search = _search(row)
    judged: list[Part]
    if windows:
        judged = ["; the judge said no to ", *_n(len(windows), "window", "windows"), " of "]
        judged += _n(len(token), "judged document", "judged documents")
    elif row.total_matches == 0:
        judged = [", so the token stage had nothing to judge"]
    else:
        judged = ["; none of them was judged"]
    if row.label == "answerable" and row.evidence is not None:
        unit, doc = row.evidence.unit_id, row.evidence.doc_id
        if row.stage == "token":
            position = next((i for i, w in enumerate(windows, 1) if w["unit"] == unit), None)
            where: list[Part] = []
            if position is not None:
                where = [", judgment ", (f"{position:,}",), " of ", (f"{len(windows):,}",)]
            start: list[Part] = [
                'The first "yes" of the token stage: window ',
                (unit,),
                " of document ",
            ]
            return alternate([*start, (doc,), *where, ". ", *search, "."])
        rank = next((i for i, c in enumerate(vector, 1) if c["chunk"] == unit), None)
        found: list[Part] = [" (", (f"{rank:,}",), " by similarity)"] if rank else []
        tail: list[Part] = [
            '; the first "yes" of the vector stage: chunk ',
            (unit,),
            " of document ",
        ]
        return alternate([*search, *judged, *tail, (doc,), *found, "."])
    if row.label == "unanswerable":
        chunks = sum(c["verdict"] is not None for c in vector)
        tail = ["; the judge said no to the vector stage's ", *_n(chunks, "chunk", "chunks"), "."]
        return alternate([*search, *judged, *tail])
    if row.label == "discarded":
        tail = [", more than the ", *_n(len(token), "document", "documents"), " judged (k1), "]
        tail.append("all no: the corpus may still hold the answer in a document not judged.")
        return alternate([*search, *tail])
    return alternate(["Undetermined: ", (row.reason,), "."])
