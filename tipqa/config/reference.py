"""The configuration reference, written from the settings classes themselves.

`python -m tipqa.config.reference` prints every section, backend and key with its type, its
default and whether it is a knob (changes how a step runs, not what it writes: a change
reruns nothing); `--write docs/configuration/reference.md` writes it between that page's
reference markers, and `--write-schemas docs/outputs.md` the records a run writes (tests check
that both pages hold the current text).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import typing
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tipqa.config import CORPUS_GROUP_PREFIX, SEAMS, SELECTOR, SIMPLE_SECTIONS
from tipqa.config.judges import SECOND_JUDGES
from tipqa.config.pools import PoolLimit
from tipqa.core import cli, records
from tipqa.core.errors import InputError
from tipqa.core.registry import Registry
from tipqa.core.settings import Settings, keys, plain
from tipqa.evaluate.settings import ANSWERER_SECTION
from tipqa.llm.answerers.base import ANSWERERS
from tipqa.sources.corpus.base import CORPUS_READERS
from tipqa.sources.corpus.files import FileGroupSettings
from tipqa.sources.questions.base import QUESTION_SOURCES


def _type(annotation: object) -> str:
    text = str(annotation).replace("typing.", "").replace("NoneType", "None")
    return text.replace("<class '", "").replace("'>", "")


def _default(field: dataclasses.Field[object]) -> str:
    if field.default is dataclasses.MISSING:
        return ""
    value = plain(field.default)
    return "empty" if value in ("", (), []) else f"`{value}`"


def rows(cls: type[Settings]) -> Iterator[str]:
    """One Markdown table row per key of a settings class."""
    hints = typing.get_type_hints(cls)
    for field in keys(cls):
        kind = "knob" if not field.metadata.get("fingerprint", True) else ""
        if field.metadata.get("search_only"):
            kind = "search"
        doc = field.metadata.get("doc", "")
        cells = [f"`{field.name}`", _type(hints[field.name]), _default(field), kind, doc]
        yield "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def _cell(text: str) -> str:
    """`text` as a table cell: a pipe of its own (`X | None`) escaped so it splits no cell."""
    return text.replace("|", "\\|")


def table(title: str, cls: type[Settings]) -> str:
    """A section (or a backend's part of one) as a Markdown table."""
    header = ["| key | type | default | kind | meaning |", "|---|---|---|---|---|"]
    doc = (cls.__doc__ or "").strip().splitlines()[0]
    return "\n".join([f"**{title}** — {doc}", "", *header, *rows(cls), ""])


def _backends(section: str, registry: Registry[Any], selector: str) -> list[str]:
    return [
        table(f"[{section}] {selector} = {name}", registry.settings_class(name))
        for name in registry.names
    ]


def second_judges() -> str:
    """The second-judge sections: the keys of [judge]'s backends, inherited where unset."""
    lines = [
        f"**[{name}]** — {what}: the keys of a `[judge] backend = ...` table above (any "
        "backend), `max_words` and `max_windows` excepted; a key it leaves unset is "
        "inherited from [judge] when its backend has that key (`backend` too)."
        for name, what in SECOND_JUDGES.items()
    ]
    return "\n\n".join(lines) + "\n"


def reference() -> str:
    """The whole reference, as Markdown."""
    parts = [table(f"[{name}]", cls) for name, cls in SIMPLE_SECTIONS.items()]
    for name, seam in SEAMS.items():
        if seam.step is not None:
            parts.append(table(f"[{name}] (every backend)", seam.step))
        parts += _backends(name, seam.registry, SELECTOR)
        if name == "judge":
            parts.append(second_judges())
    parts += _backends("corpus", CORPUS_READERS, "source")
    parts.append(table(f"[{CORPUS_GROUP_PREFIX}NAME] (source = files)", FileGroupSettings))
    parts.append(table("[pool.NAME] (every source, `demo` too)", PoolLimit))
    parts += _backends("pool.NAME", QUESTION_SOURCES, "source")
    parts += [
        table(f"[{ANSWERER_SECTION}{name}] (Evaluate --model-backend {name})", cls)
        for name, cls in ((n, ANSWERERS.settings_class(n)) for n in ANSWERERS.names)
    ]
    return "\n".join(parts)


START, END = "<!-- reference:start -->", "<!-- reference:end -->"
RECORDS_START, RECORDS_END = "<!-- records:start -->", "<!-- records:end -->"
OUTPUT_RECORDS = (
    ("questions.jsonl (pools, shards)", records.Question),
    ("keywords.jsonl", records.Keywords),
    ("token_candidates.jsonl", records.TokenCandidates),
    ("token_judgments.jsonl, vector_judgments.jsonl, audit_judgments.jsonl", records.Judgment),
    ("token_decisions.jsonl, vector_decisions.jsonl", records.Decision),
    ("vector_candidates.jsonl", records.VectorCandidates),
    ("instances.jsonl", records.VectorInstance),
    ("judged_units.jsonl", records.JudgedUnit),
    ("answerable.jsonl, ..., the splits' questions.jsonl", records.LabeledQuestion),
    ("evidence (inside a decision or a labelled question)", records.Evidence),
    (
        "confirmation (inside a judgment, an instance or evidence; `[judge.confirm]` only)",
        records.Confirmation,
    ),
    ("the findings of audit.json (`found`)", records.AuditFinding),
    ("evidence of a finding", records.AuditEvidence),
    ("verbatim.jsonl (pools)", records.Verbatim),
)
"""The JSON-lines files of a run and the record each line holds."""


def record_schemas() -> str:
    """Every record a run writes as JSON lines: its file, fields and their types."""
    parts = [f"Schema version {records.SCHEMA_VERSION} (`tipqa.core.records`).", ""]
    for files, cls in OUTPUT_RECORDS:
        hints = typing.get_type_hints(cls)
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        fields = ", ".join(f"`{f.name}` ({_type(hints[f.name])})" for f in dataclasses.fields(cls))
        parts += [f"**{files}** — `{cls.__name__}`: {doc}", "", fields, ""]
    return "\n".join(parts)


def between(text: str, start: str, end: str, block: str) -> str:
    """`text` with `block` between its `start` and `end` markers (an error if one is missing)."""
    if text.count(start) != 1 or text.count(end) != 1:
        raise InputError(f"the page needs one {start} and one {end} marker")
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    return f"{head}{start}\n{block}{end}{tail}"


def write_page(page: Path, update: Callable[[str], str]) -> None:
    """Write `update(text)` over the page's text; an InputError naming the page if it fails."""
    try:
        page.write_text(update(page.read_text(encoding="utf-8")), encoding="utf-8")
    except InputError as exc:
        raise InputError(str(exc), path=str(page)) from None


def in_page(text: str, block: str) -> str:
    """`text` (a page) with `block` between its reference markers."""
    return between(text, START, END, block)


def with_schemas(text: str) -> str:
    """`text` (the outputs page) with the record schemas between their markers."""
    return between(text, RECORDS_START, RECORDS_END, record_schemas())


def parser() -> argparse.ArgumentParser:
    """The command line's argument parser."""
    parse = argparse.ArgumentParser(
        prog=cli.prog("python -m tipqa.config.reference"),
        description="Print the configuration reference, or write it (or the record schemas) "
        "between a page's markers.",
    )
    where = parse.add_mutually_exclusive_group()
    where.add_argument("--write", type=Path, metavar="PAGE", help="write the reference into PAGE")
    where.add_argument(
        "--write-schemas", type=Path, metavar="PAGE", help="write the record schemas into PAGE"
    )
    return parse


def run(argv: Sequence[str]) -> int:
    """Run the command line; return the exit status."""
    args = parser().parse_args(argv)
    if args.write is not None:
        write_page(args.write, lambda text: in_page(text, reference()))
    elif args.write_schemas is not None:
        write_page(args.write_schemas, with_schemas)
    else:
        sys.stdout.write(reference() + "\n")
    return 0


if __name__ == "__main__":
    cli.main(run)
