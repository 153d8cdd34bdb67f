"""Section names: a near miss of one of ours, a family's member included, is refused."""

from __future__ import annotations

import pytest

from tipqa.config import read_config
from tipqa.core.errors import ConfigError


@pytest.mark.parametrize(
    ("section", "meant"),
    [
        ("pools.dev", "pool.dev"),
        ("pool-dev", "pool.dev"),
        ("poo.dev", "pool.dev"),
        ("Pool.dev", "pool.dev"),
        ("pooldev", "pool.dev"),
        ("pools", "pool.NAME"),
        ("copus.web", "corpus.web"),
        ("corpus_web", "corpus.web"),
        ("evaluate_openai", "evaluate.openai"),
        ("judges", "judge"),
        ("Judge", "judge"),
        ("judge.confrim", "judge.confirm"),
        ("audit.judges", "audit.judge"),
    ],
)
def test_a_misspelled_section_is_refused_naming_what_it_meant(section: str, meant: str) -> None:
    with pytest.raises(ConfigError) as error:
        read_config({"corpus": {"source": "files"}, section: {"source": "demo"}})
    assert str(error.value).startswith(f"unknown section [{section}]; did you mean [{meant}]")


def test_the_sections_of_luigi_and_of_its_tasks_are_left_alone() -> None:
    others = ["core", "cors", "worker", "retcode", "resources", "PullAnnotation", "CreateDataset"]
    read_config({name: {} for name in others})


def test_a_family_is_checked_by_its_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    from tipqa import config

    monkeypatch.setitem(config.SECTION_FAMILIES, "audit.", "an audit")
    with pytest.raises(
        ConfigError, match=r"\[audits.deep\]; did you mean \[audit.deep\] \(an audit\)"
    ):
        read_config({"audits.deep": {}})
