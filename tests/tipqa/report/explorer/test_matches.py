"""Where aliases and keywords occur in a text (the token index's tokens), and the excerpts."""

from __future__ import annotations

from tipqa.report.explorer.matches import ALIAS, KEYWORD, Match, excerpt_spans, find_matches


def shown(text: str, matches: list[Match]) -> list[tuple[str, int]]:
    return [(text[m.start : m.end], m.kind) for m in matches]


def test_phrases_match_as_tokens_whatever_the_case_and_the_punctuation() -> None:
    text = "Visitors love the EIFFEL-tower; the Tower of Paris is tall. Parisian towers too."
    matches = find_matches(text, ["Eiffel Tower"], ["Paris", "tower"])
    assert shown(text, matches) == [
        ("EIFFEL-tower", ALIAS),
        ("Tower", KEYWORD),
        ("Paris", KEYWORD),
    ]  # fmt: skip  "Parisian" and "towers" are other tokens; the alias wins its overlap


def test_a_token_over_40_characters_is_skipped_as_the_index_skips_it() -> None:
    text = "New " + "x" * 41 + " York and new york"
    assert shown(text, find_matches(text, ["New York"], [])) == [
        (text[: -len(" and new york")], ALIAS), ("new york", ALIAS),
    ]  # fmt: skip


def test_excerpts_keep_the_text_around_the_first_matches_aliases_first() -> None:
    words = [f"w{i:03d}" for i in range(400)]
    words[10], words[200], words[300], words[350] = "Paris", "Eiffel", "Paris", "Paris"
    text = " ".join(words)
    matches = find_matches(text, ["Eiffel"], ["Paris"])
    spans = excerpt_spans(text, matches, around=20)
    assert len(matches) == 4 and len(spans) == 3  # the alias, then the first two keywords
    assert [text[a:b].split()[len(text[a:b].split()) // 2] for a, b in spans] == [
        "Paris", "Eiffel", "Paris",
    ]  # fmt: skip
    assert all(a == 0 or text[a - 1] == " " for a, _ in spans)  # cut at whitespace
    assert all(b == len(text) or text[b] == " " for _, b in spans)
    assert excerpt_spans("no match here at all", [], around=4) == [(0, 8)]
