"""The configuration reference, written from the settings classes themselves.

`python -m tipqa.config_reference` prints every section, backend and key with its type, its
default and whether it is a knob (changes how a step runs, not what it writes: a change
reruns nothing); `--readme README.md` writes it between the README's reference markers.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from typing import Any

from tipqa.config import CORPUS_GROUP_PREFIX, SEAMS, SIMPLE_SECTIONS
from tipqa.config_pools import PoolLimit
from tipqa.corpus.base import CORPUS_READERS
from tipqa.corpus.files import FileGroupSettings
from tipqa.evaluate.answerers import ANSWERERS
from tipqa.evaluate.settings import ANSWERER_SECTION
from tipqa.questions.base import QUESTION_SOURCES
from tipqa.registry import Registry
from tipqa.settings import Settings, keys, plain


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
        yield "| " + " | ".join(cells) + " |"


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


def reference() -> str:
    """The whole reference, as Markdown."""
    parts = [table(f"[{name}]", cls) for name, cls in SIMPLE_SECTIONS.items()]
    for name, (registry, selector, _, step) in SEAMS.items():
        if step is not None:
            parts.append(table(f"[{name}] (every backend)", step))
        parts += _backends(name, registry, selector)
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


def in_readme(text: str, block: str) -> str:
    """`text` (a README) with `block` between its reference markers."""
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{block}{END}{tail}"


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if sys.argv[1:2] == ["--readme"]:
        readme = Path(sys.argv[2])
        readme.write_text(in_readme(readme.read_text(), reference()))
    else:
        print(reference())
