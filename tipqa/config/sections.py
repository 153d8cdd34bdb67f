"""Section names: a name that looks like one of ours must be one of ours.

A configuration file holds our sections, Luigi's own (`[core]`, `[worker]`, ...) and the
parameters of Luigi tasks (`[CreateDataset]`). Ours are fixed names (`[judge]`) and families
of named sections (`[pool.NAME]`, `[corpus.NAME]`): a family is declared by its prefix, and
every check here works for any declared family. A section that is not ours is left alone,
unless its name is a near miss of ours: a misspelled fixed name (`[judges]`), a family's name
misspelled or with another separator (`[pools.dev]`, `[poo.dev]`, `[pool-dev]`, `[copus.web]`)
or another case (`[Pool.dev]`). Such a section would otherwise be ignored without a word (a
misspelled pool leaves the build without its questions, a misspelled corpus group without its
files), so it is refused, with the name it was meant to be.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping

from tipqa.core.errors import ConfigError

LUIGI_SECTIONS = frozenset(
    {
        "batch_email",
        "core",
        "cors",
        "email",
        "execution_summary",
        "resources",
        "retcode",
        "scheduler",
        "sendgrid",
        "smtp",
        "task_history",
        "worker",
    }
)
"""Luigi's own sections: never ours, even where a name is near one of ours (`cors`)."""

TASK_SECTION = re.compile(r"[A-Z][A-Za-z0-9]*\Z")
"""The section of a Luigi task's parameters, named after its class (`[CreateDataset]`); one
named like one of ours but for the case (`[Judge]`) is taken for ours, misspelled."""

SEPARATOR = re.compile(r"[.\-_:/\s]")
NEAR = 0.75
"""How alike (difflib's ratio) a name and one of ours are when it is taken for a misspelling."""


def ours(name: str, known: Collection[str], families: Collection[str]) -> bool:
    """True when `name` is one of our fixed sections or a member of a declared family."""
    return name in known or any(
        name.startswith(prefix) and len(name) > len(prefix) for prefix in families
    )


def meant(name: str, known: Collection[str], families: Collection[str]) -> str | None:
    """The section of ours that `name` misspells, or None when it is not near one of ours."""
    lowered = name.lower()
    if ours(lowered, known, families):
        return lowered
    split = SEPARATOR.search(lowered)
    stem, member = (lowered[: split.start()], lowered[split.end() :]) if split else (lowered, "")
    family = _family(stem, families)
    if family is not None and member:
        return family + member
    near = difflib.get_close_matches(lowered, list(known), n=1, cutoff=NEAR)
    if near:
        return near[0]
    if family is not None:
        return family + "NAME"
    for prefix in families:
        bare = prefix.rstrip(".")
        if split is None and lowered.startswith(bare):
            return prefix + lowered[len(bare) :]
    return None


def _family(stem: str, families: Collection[str]) -> str | None:
    """The prefix of the family whose name `stem` is, or nearly is."""
    for prefix in families:
        if difflib.SequenceMatcher(None, stem, prefix.rstrip(".")).ratio() >= NEAR:
            return prefix
    return None


def check_section_names(
    names: Iterable[str], known: Collection[str], families: Mapping[str, str]
) -> None:
    """A ConfigError for the first section whose name is a near miss of one of ours.

    `families` maps each family's prefix to what a member is (said with the error).
    """
    for name in names:
        if ours(name, known, families) or name in LUIGI_SECTIONS:
            continue
        if TASK_SECTION.match(name) and not ours(name.lower(), known, families):
            continue
        intended = meant(name, known, families)
        if intended is None:
            continue
        member = next(
            (what for prefix, what in families.items() if intended.startswith(prefix)), ""
        )
        said = f" ({member})" if member else ""
        raise ConfigError(f"unknown section [{name}]; did you mean [{intended}]{said}?")
