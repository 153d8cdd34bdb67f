"""A question's page as the explorer's data files hold it, small: what its table row and its
search data already hold is left out; documents, windows and chunks are lists in a fixed field
order (named once, in the page's meta) without their trailing nulls; texts are references
into the page's store of texts (`tipqa.report.explorer.store`).

A judge's raw reply is `null` where it is the verdict itself (`yes`, `no`); a chunk id that is
its document's id followed by `#n` is written `#n`; the extracted keywords are left out where
they are the keywords searched; scores and probabilities keep 4 decimals. The evidence keeps
its whole text in every form of the page; other texts are whole or excerpts, and all with the
document's text around them or without, as `form` says.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tipqa.report.explorer.audit import PoolAudit
from tipqa.report.explorer.store import TextForm, TextStore

DOCUMENT = ("doc", "rank", "score", "windows")
CONFIRMED = ("confirmed", "confirmer")
"""The confirming judge's verdict on a "yes" and its name (`[judge.confirm]` only)."""
WINDOW = ("unit", "verdict", "p_yes", "start", "end", "text", "raw", "error", *CONFIRMED)
CHUNK = (
    "chunk", "doc", "score", "verdict", "p_yes", "start", "end", "text", "raw", "error",
    *CONFIRMED,
)  # fmt: skip
FIELDS = {"document": DOCUMENT, "window": WINDOW, "chunk": CHUNK}
"""The order of the lists' fields, as the page's meta names them."""

AUDITED, FOUND, FLIPPED, DISPUTED = 1, 2, 4, 8
"""Bits of a row's marks: audited, found answerable by the audit, flipped against another run,
disputed by the judge audit's second judge."""

IN_ROW = ("id", "question", "answer", "pool", "split", "label", "stage", "total")
IN_SEARCH = ("aliases", "keywords")
"""What a question's page takes from its table row and its search data."""


def trimmed(values: list[Any]) -> list[Any]:
    """`values` without its trailing nulls."""
    while values and values[-1] is None:
        values.pop()
    return values


def _rounded(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


class Encoder:
    """Turns a question's collected details into the page's form, texts into `store`."""

    def __init__(self, store: TextStore, form: TextForm) -> None:
        self.store = store
        self.form = form

    def _text(self, unit: dict[str, Any], details: dict[str, Any], whole: bool) -> list[Any] | None:
        text = unit.get("text")
        if text is None:
            return None
        form = replace(self.form, whole=True) if whole else self.form
        context = unit.get("context") if form.context else None
        return self.store.reference(text, details["aliases"], details["keywords"], form, context)

    def _unit(self, unit: dict[str, Any], fields: tuple[str, ...], details: dict[str, Any]) -> list:
        evidence = details["evidence"]
        key = unit.get("unit", unit.get("chunk"))
        is_evidence = evidence is not None and key == evidence["unit"]
        values = []
        for name in fields:
            value: Any = unit.get(name)
            if name == "text":
                value = self._text(unit, details, whole=is_evidence)
            elif name == "raw" and value == unit.get("verdict"):
                value = None
            elif name == "chunk" and value.startswith(unit["doc"] + "#"):
                value = value[len(unit["doc"]) :]
            values.append(_rounded(value))
        return trimmed(values)

    def side_evidence(self, evidence: dict[str, Any] | None, details: dict[str, Any]) -> Any:
        """Another record's evidence (`doc_id`, `unit_id`, `text`...) with its text stored."""
        if evidence is None:
            return None
        shown = {k: v for k, v in evidence.items() if k != "text"}
        if evidence.get("text") is not None:
            unit = {"text": evidence["text"]}
            shown["text"] = self._text(unit, details, whole=True)
        return shown

    def second_judge(self, disputed: dict[str, Any], details: dict[str, Any]) -> dict[str, Any]:
        """A disputed question's two verdicts on the unit the second judge judged otherwise:
        the build's judge's (`first`, as the build recorded it) and the second judge's."""
        evidence = disputed.get("evidence") or {}
        unit = evidence.get("unit_id")
        first = "yes" if disputed["label"] == "answerable" else None
        for judged in [w for d in details["token"] for w in d["windows"]] + details["vector"]:
            if unit is not None and judged.get("unit", judged.get("chunk")) == unit:
                first = judged.get("verdict")
        return {
            **{k: v for k, v in disputed.items() if k != "evidence"},
            "first": first,
            "evidence": self.side_evidence(evidence or None, details),
        }

    def details(
        self,
        details: dict[str, Any],
        audit: PoolAudit | None,
        flip: dict[str, Any] | None,
    ) -> tuple[dict[str, Any], int]:
        """The page's form of a question and its row's marks."""
        left_out = (*IN_ROW, *IN_SEARCH, "token", "vector")
        page = {k: v for k, v in details.items() if k not in left_out}
        if page["extracted"] == details["keywords"]:
            del page["extracted"]
        page["token"] = [
            [
                *(_rounded(d[f]) for f in DOCUMENT[:-1]),
                [self._unit(w, WINDOW, details) for w in d["windows"]],
            ]
            for d in details["token"]
        ]
        page["vector"] = [self._unit(c, CHUNK, details) for c in details["vector"]]
        marks = 0
        if audit is not None and details["id"] in audit.audited:
            marks |= AUDITED
            page["audit"] = {"found": None}
            found = audit.found.get(details["id"])
            if found is not None:
                marks |= FOUND
                shown = {k: v for k, v in found.items() if k != "evidence"}
                shown["evidence"] = self.side_evidence(found.get("evidence"), details)
                page["audit"]["found"] = shown
        disputed = audit.disputed.get(details["id"]) if audit is not None else None
        if disputed is not None:
            marks |= DISPUTED
            page["second_judge"] = self.second_judge(disputed, details)
        if flip is not None:
            marks |= FLIPPED
            page["flip"] = {
                side: {
                    **flip[side],
                    "evidence": self.side_evidence(flip[side]["evidence"], details),
                }
                for side in ("a", "b")
            }
        return page, marks
