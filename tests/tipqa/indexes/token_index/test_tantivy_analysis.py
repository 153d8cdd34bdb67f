"""Tests that the tantivy analysis yields exactly the tokens of `tipqa.core.text.tokenize`."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tipqa.core.text import tokenize
from tipqa.indexes.token_index.tantivy_analysis import (
    all_characters,
    analyzer,
    prepare,
    token_char_pattern,
    tokenization,
)

TRICKY: list[str] = orjson.loads(
    (Path(__file__).parents[3] / "data" / "token_index" / "tricky.json").read_bytes()
)


def modes() -> list[object]:
    """Every exact tokenization this tantivy build supports: the regex one always."""
    found = [pytest.param("regex", frozenset(), id="regex")]
    if tokenization().kind == "simple":
        found.append(pytest.param("simple", tokenization().blank, id="simple"))
    return found


def every_code_point() -> str:
    """Each Unicode scalar value between two letters, separated by spaces."""
    return " ".join(f"q{c}q" for c in all_characters())


def test_all_characters_are_every_scalar_value() -> None:
    chars = all_characters()
    assert len(chars) == 0x110000 - 0x800
    assert chars[0] == "\x00"
    assert chars[-1] == "\U0010ffff"
    assert "\ud7ff" in chars
    assert "\ue000" in chars


@pytest.mark.parametrize(("kind", "blank"), modes())
def test_agrees_with_tokenize_on_every_code_point(kind: str, blank: frozenset[str]) -> None:
    text = every_code_point()
    assert analyzer(kind).analyze(prepare(text, blank)) == tokenize(text)


@pytest.mark.parametrize(("kind", "blank"), modes())
@pytest.mark.parametrize("text", TRICKY)
def test_agrees_with_tokenize_on_tricky_text(text: str, kind: str, blank: frozenset[str]) -> None:
    assert analyzer(kind).analyze(prepare(text, blank)) == tokenize(text)


def test_tantivy_default_analyzer_would_disagree() -> None:
    import tantivy

    default = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .build()
    )
    disagree = [text for text in TRICKY if default.analyze(text) != tokenize(text)]
    assert len(disagree) >= 3


def test_long_runs_are_removed_only_when_too_long() -> None:
    text = "Start " + "A" * 40 + " mid x" + "b" * 41 + "_tail " + "é" * 41 + "-end"
    prepared = prepare(text, frozenset())
    assert tokenize(prepared) == tokenize(text) == ["start", "a" * 40, "mid", "tail", "end"]
    assert prepare("Short words only.", frozenset()) == "short words only."


def test_blank_turns_marks_into_separators() -> None:
    mode = tokenization()
    if not mode.blank:
        pytest.skip("this tantivy build needs no blanking")
    assert "\u093f" in mode.blank
    assert mode.blank.isdisjoint("abc é 5 日 ½")
    assert prepare("हि x", mode.blank) == "ह  x"


def test_regex_pattern_lists_ascii_token_characters() -> None:
    assert token_char_pattern().startswith(r"[\x{30}-\x{39}\x{41}-\x{5A}\x{61}-\x{7A}")
    assert token_char_pattern().endswith("]+")


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown tokenization"):
        analyzer("whitespace")
