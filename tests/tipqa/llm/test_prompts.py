"""Prompt templates: shipped files, user files, hashes and single-pass rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipqa.core.errors import ConfigError
from tipqa.llm.prompts import SHIPPED, PromptTemplate, load_template


def test_shipped_templates_load_and_have_distinct_hashes() -> None:
    templates = [load_template(name) for name in SHIPPED]
    assert all(t.text.strip() for t in templates)
    assert len({t.sha256 for t in templates}) == len(templates)
    judge = load_template("judge-v1")
    for slot in ("{document}", "{question}", "{answer}"):
        assert slot in judge.text
    assert len(judge.sha256) == 64 and judge.short_hash == judge.sha256[:12]
    keywords = load_template("keywords-v1").as_json()
    assert isinstance(keywords, dict) and keywords


def test_hash_follows_the_text() -> None:
    a, b = PromptTemplate("x", "Q: {question}"), PromptTemplate("y", "Q: {question}")
    assert a.sha256 == b.sha256
    assert PromptTemplate("x", "Q: {question} ").sha256 != a.sha256


def test_render_is_single_pass() -> None:
    template = PromptTemplate("t", "Doc: {document}\nQ: {question}\nA: {answer}")
    text = template.render(document="see {answer} and {question}", question="Q?", answer="Z")
    assert text == "Doc: see {answer} and {question}\nQ: Q?\nA: Z"


def test_render_leaves_unknown_slots_and_other_braces() -> None:
    template = PromptTemplate("t", '{"a": 1} {missing} {answer}')
    assert template.render(answer="B") == '{"a": 1} {missing} B'


def test_user_template_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.txt"
    path.write_text("Is {document} enough for {question}? {answer}", encoding="utf-8")
    template = load_template(str(path))
    assert template.name == str(path)
    assert template.render(document="D", question="Q", answer="A") == "Is D enough for Q? A"
    assert template.sha256 != load_template("judge-v1").sha256


def test_unknown_name_lists_shipped_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="judge-v1, keywords-v1"):
        load_template("judge-v9")
    with pytest.raises(ConfigError, match="not a file"):
        load_template(str(tmp_path))


@pytest.mark.parametrize("text", ["not json", "[1, 2]"])
def test_as_json_rejects_non_objects(text: str) -> None:
    with pytest.raises(ConfigError, match="'t'"):
        PromptTemplate("t", text).as_json()
