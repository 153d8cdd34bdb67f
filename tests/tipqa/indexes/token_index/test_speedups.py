"""The C speed-ups of the token index give exactly what its Python code gives."""

from __future__ import annotations

import random

import pytest

from tipqa.core.text import count_phrase, tokenize
from tipqa.indexes.token_index import speedups, tantivy_schema, tantivy_verify
from tipqa.indexes.token_index.tantivy_analysis import (
    all_characters,
    code_point_bitmap,
    prepare_in_python,
    tokenization,
)

_speedups = pytest.importorskip("tipqa.indexes.token_index._speedups")  # .ci/run checks it is built

WORDS = [b"a", b"ab", b"new", b"york", b"9x", b"x" * 40, b"y" * 41, b"NEW"]
SEPARATORS = [b" ", b"  ", b", ", b"_", b"-\n", b"\0", b"\x7f", b"z" * 45 + b" "]
EDGES = [
    b"",
    b" ,;",
    b"a",
    b"a_b",
    b"x" * 40,
    b"x" * 41,
    b"new " + b"q" * 300 + b" york",  # a dropped run: its neighbours become adjacent
    b"the " * 64,  # 63 repeats: one low term
    b"the " * 65,  # 64: one high term, no low one
    b"the " * 200 + b"cat " * 129,  # low and high terms
    b"the " * 100_000,  # several high bits
    b" ".join(b"t%d" % i for i in range(5000)),  # all distinct: no repeats at all
]


def random_text(rng: random.Random) -> bytes:
    return b"".join(
        rng.choice(WORDS).lower() + rng.choice(SEPARATORS) for _ in range(rng.randint(0, 60))
    )


@pytest.mark.parametrize("text", EDGES, ids=range(len(EDGES)))
def test_analysis_matches_python(text: bytes) -> None:
    assert _speedups.analyse_ascii(text) == tantivy_schema.analyse_ascii(text)


def test_analysis_of_random_texts_matches_python() -> None:
    rng = random.Random(3)
    for _ in range(2000):
        text = random_text(rng)
        assert _speedups.analyse_ascii(text) == tantivy_schema.analyse_ascii(text), text


def test_repeats_rebuild_every_frequency() -> None:
    text = b"b " * 3 + b"a " * 1000 + b"c" + b" z" * 70
    _, repeats = _speedups.analyse_ascii(text)
    assert repeats.split() == ["b:2", "a:39", "a^0", "a^1", "a^2", "a^3", "z:5", "z^0"]
    assert 1 + 39 + 64 * (1 + 2 + 4 + 8) == 1000


def by_tokens(text: bytes, phrases: tuple[tuple[bytes, ...], ...]) -> int:
    tokens = tokenize(text.decode())
    return sum(count_phrase(tokens, [t.decode() for t in phrase]) for phrase in phrases)


@pytest.mark.parametrize("text", EDGES, ids=range(len(EDGES)))
def test_counts_match_python(text: bytes) -> None:
    phrases = ((b"new", b"york"), (b"the",), (b"the", b"the"), (b"x" * 40,), (b"a", b"b"))
    assert _speedups.count(text, phrases) == tantivy_verify.count_ascii(text, phrases)
    assert _speedups.count(text, phrases) == by_tokens(text, phrases)


def test_counts_of_random_texts_match_python() -> None:
    rng = random.Random(5)
    vocabulary = [w.lower() for w in WORDS if len(w) <= 40]
    for _ in range(500):
        phrases = tuple({tuple(rng.choices(vocabulary, k=rng.randint(1, 3))) for _ in range(3)})
        for _ in range(10):
            text = random_text(rng)
            expected = by_tokens(text, phrases)
            assert _speedups.count(text, phrases) == expected, (text, phrases)
            assert tantivy_verify.count_ascii(text, phrases) == expected


def test_overlapping_occurrences_count() -> None:
    assert _speedups.count(b"a a a a", ((b"a", b"a"),)) == 3
    assert _speedups.count(b"a a", ((), (b"a", b"a", b"a"))) == 0


def test_wrong_arguments_are_type_errors() -> None:
    with pytest.raises(TypeError):
        _speedups.analyse_ascii("text")
    with pytest.raises(TypeError):
        _speedups.count(b"a", [(b"a",)])
    with pytest.raises(TypeError):
        _speedups.count(b"a", (("a",),))
    with pytest.raises(TypeError):
        _speedups.count("a", ((b"a",),))


def test_pure_python_can_be_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    speedups.native.cache_clear()
    try:
        monkeypatch.setenv(speedups.PURE_PYTHON, "1")
        assert speedups.native() is None
        speedups.native.cache_clear()
        monkeypatch.setenv(speedups.PURE_PYTHON, "0")
        assert speedups.native() is _speedups
    finally:
        speedups.native.cache_clear()


def test_characters_that_lower_case_to_ascii_are_left_to_python() -> None:
    lowering = [
        chr(c)
        for c in range(128, 0x110000)
        if not 0xD800 <= c < 0xE000 and any(ord(x) < 128 for x in chr(c).lower())
    ]
    assert lowering, "this Python lower-cases no non-ASCII character to ASCII"
    for char in lowering:
        assert _speedups.count(f"the {char} word".encode(), ((b"the",),)) is None, char


def test_counts_in_utf8_text_are_exact_or_left_to_python() -> None:
    rng = random.Random(11)
    words = ["new", "york", "ab", "Café", "naïve", "Éa", "x" * 41, "\u212aelvin", "İa", "é" * 41]
    separators = [" ", ", ", " — ", "\u0301", "«", "\u00a0", "_", "\n"]
    phrases = ((b"new", b"york"), (b"a",), (b"ab", b"new"), (b"caf",), (b"elvin",))
    decided = 0
    for _ in range(3000):
        text = "".join(
            rng.choice(words) + rng.choice(separators) for _ in range(rng.randint(0, 20))
        )
        found = _speedups.count(text.encode().lower(), phrases)
        if found is not None:
            decided += 1
            assert found == by_tokens(text.encode(), phrases), text
    assert decided > 100  # the fast path is taken, not only left to Python


UNICODE_WORDS = ["straße", "οδυσσεύς", "naïve", "ab", "١٢٣", "ⓐ", "x\u0301", "日本語", "a_b", "ǅ"]


def test_unicode_repeats_match_python() -> None:
    rng = random.Random(13)
    separators = [" ", "—", "\u00a0", "_", "«", "\u0301", "\n", "😀"]
    for _ in range(2000):
        text = "".join(
            rng.choice(UNICODE_WORDS) + rng.choice(separators) for _ in range(rng.randint(0, 40))
        )
        assert _speedups.repeats(text) == tantivy_schema.prepared_repeats(text), text


def test_unicode_token_characters_are_pythons() -> None:
    """Every code point twice, spaced: each token character is a repeated token of its own."""
    text = " ".join(all_characters()) * 2
    found = _speedups.repeats(text)
    assert found == tantivy_schema.prepared_repeats(text)
    assert len(found.split()) > 100_000


def test_repeats_takes_str() -> None:
    with pytest.raises(TypeError):
        _speedups.repeats(b"bytes")


def test_prepare_matches_python() -> None:
    rng = random.Random(17)
    blank = tokenization().blank or frozenset("\u0301\u05b4")
    marks = sorted(blank)[:50]
    words = [*UNICODE_WORDS, "x" * 41, "é" * 45, "ab" * 30, "a_" * 30]
    separators = [" ", "  ", "\u00a0", "\u2003", "\n\t", "—", *marks[:5]]
    for _ in range(3000):
        text = "".join(
            rng.choice(words) + rng.choice(separators) + rng.choice(["", rng.choice(marks)])
            for _ in range(rng.randint(0, 30))
        )
        lowered = text.lower()
        for chars in (blank, frozenset()):
            expected = prepare_in_python(lowered, chars)
            assert _speedups.prepare(lowered, code_point_bitmap(chars)) == expected, text


def test_prepare_keeps_text_that_needs_nothing() -> None:
    text = "short words only, ünïcode too"
    assert _speedups.prepare(text, code_point_bitmap(frozenset())) is text


def test_prepare_spaces_every_blank_character() -> None:
    blank = tokenization().blank
    text = "".join(sorted(blank))
    assert _speedups.prepare(text, code_point_bitmap(blank)) == " " * len(text)
