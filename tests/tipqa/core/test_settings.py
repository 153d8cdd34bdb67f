"""Typed settings: strict parsing of raw values, and what goes into a fingerprint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from tipqa.core.errors import ConfigError
from tipqa.core.settings import Settings, check_no_inline_comment, knob, parse, search_only


@dataclass(frozen=True)
class Example(Settings):
    """One field of every kind a section may hold."""

    model: str = "m"
    mode: Literal["logprobs", "choice"] = "logprobs"
    limit: int | None = None
    ratio: float = 0.5
    flag: bool = False
    paths: tuple[str, ...] = ()
    prefix: str | None = None
    depth: int = search_only(64)
    threads: int = knob(2)


def test_raw_strings_become_typed_values() -> None:
    raw = {
        "model": " org/model ",
        "mode": "choice",
        "limit": "",
        "ratio": "2",
        "flag": "Yes",
        "paths": "a.jsonl, b/*.zst\nc.parquet",
        "prefix": '"query: "',
        "depth": "128",
        "threads": "4",
    }
    parsed = parse(Example, "example", raw)
    assert parsed == Example(
        "org/model",
        "choice",
        None,
        2.0,
        True,
        ("a.jsonl", "b/*.zst", "c.parquet"),
        "query: ",
        128,
        4,
    )
    assert parse(Example, "example", {"limit": "none", "paths": '["x, y"]'}).paths == ("x, y",)
    assert parse(Example, "example", {"flag": True, "limit": 3}).limit == 3


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("limit", "ten", "an integer"),
        ("ratio", "half", "a number"),
        ("flag", "perhaps", "true or false"),
        ("mode", "beam", "one of logprobs, choice"),
        ("paths", "[oops", "a JSON list"),
        ("prefix", '"unterminated\\"', "a valid JSON string literal"),
    ],
)
def test_a_wrong_value_names_section_key_and_value(key: str, raw: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(Example, "example", {key: raw})
    assert str(info.value).startswith(f"[example] {key} = {raw!r}: expected {expected}")


def test_an_unknown_key_suggests_the_closest() -> None:
    with pytest.raises(
        ConfigError, match=r"\[example\] unknown key 'modell'; did you mean 'model'\?"
    ):
        parse(Example, "example", {"modell": "x"})
    with pytest.raises(ConfigError, match=r"did you mean 'backend'\?"):
        parse(Example, "example", {"bakend": "x"}, ignore={"backend"})


def test_literals_are_checked_however_settings_are_made() -> None:
    with pytest.raises(ConfigError, match="mode = 'beam': expected one of logprobs, choice"):
        Example(mode="beam")  # type: ignore[arg-type]


def test_identity_leaves_out_knobs_and_build_identity_search_settings() -> None:
    settings = Example(threads=8, depth=32)
    assert "threads" not in settings.identity() and settings.identity()["depth"] == 32
    assert "depth" not in settings.build_identity()
    assert Example(threads=1).identity() == Example(threads=8).identity()
    assert settings.to_dict()["threads"] == 8 and settings.to_dict()["paths"] == []


def test_an_inline_comment_is_refused_where_luigi_keeps_it_in_the_value() -> None:
    with pytest.raises(ConfigError, match=r"\[training_order\] backend = .*inline comment"):
        check_no_inline_comment("training_order", {"backend": "megatron        # or table"})
    check_no_inline_comment("hub", {"url": "http://host/page#part", "x": '"keep # this"'})
    check_no_inline_comment("judge", {"extra_body": '{"stop": [" #"]}'})
