"""Typed, frozen settings: read strictly from a config section, fingerprinted by what they decide.

Every backend and every step declares its settings as a frozen dataclass deriving from
`Settings`, next to the code that uses them. `parse` reads a section's raw values into one:
an unknown key is an error that names the section, the key and the closest known key, and a
value of the wrong type is an error that names section, key and value. Fields declared with
`knob(...)` change how a step runs (threads, concurrency, timeouts, batch sizes) but not what
it writes, so `identity()` (the part of the settings that goes into a step's fingerprint)
leaves them out; fields declared with `search_only(...)` change what a search of an index
returns but not the index, so `build_identity()` (the index build's part) leaves them out too.

Raw values are strings as a config file holds them, or values of the right type already:

- `str`: as written; a JSON string literal (`"query: "`) keeps spaces a config file would strip.
- `int`, `float`; `bool`: true/false, yes/no, on/off, 1/0.
- `X | None`: an empty value (or `none`, `null`) is None.
- `Literal[...]`: one of the listed values.
- `tuple[str, ...]`: a JSON list, or items separated by commas or newlines.
- `dict[str, ...]`: a JSON object.

A value holding an inline comment (`key = value  # note`) is refused: Luigi's config parser
keeps such a comment in the value, so a comment goes on a line of its own.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import types
import typing
from collections.abc import Collection, Mapping
from typing import Any, ClassVar, Literal, TypeVar, get_args, get_origin

from tipqa.core.errors import ConfigError
from tipqa.core.extras import Extra

S = TypeVar("S", bound="Settings")

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_NONE = {"", "none", "null"}
_INLINE_COMMENT = re.compile(r"\s#")


@dataclasses.dataclass(frozen=True)
class Settings:
    """Base of every settings dataclass (frozen, typed, compared by value).

    A subclass that checks its values in `__post_init__` calls `super().__post_init__()`.
    `RETIRED_KEYS` maps a key that a class no longer has to what replaces it (said with the
    unknown-key error).
    """

    RETIRED_KEYS: ClassVar[Mapping[str, str]] = {}

    def extras(self) -> tuple[Extra, ...]:
        """The optional packages the backend of these settings needs (none by default)."""
        return ()

    def __post_init__(self) -> None:
        """Check the fields that take one of listed values (`Literal[...]`), however built."""
        for name, choices in _choices(type(self)).items():
            value = getattr(self, name)
            if value is not None and value not in choices:
                listed = ", ".join(str(choice) for choice in choices)
                raise ConfigError(f"{name} = {value!r}: expected one of {listed}")

    def identity(self) -> dict[str, Any]:
        """The settings that decide a step's output (knobs left out): a fingerprint's input."""
        return {
            field.name: plain(getattr(self, field.name))
            for field in dataclasses.fields(self)
            if field.metadata.get("fingerprint", True)
        }

    def build_identity(self) -> dict[str, Any]:
        """`identity()` without the fields that only a search reads (an index's fingerprint)."""
        searched = {f.name for f in dataclasses.fields(self) if f.metadata.get("search_only")}
        return {key: value for key, value in self.identity().items() if key not in searched}

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (for stats files and the dataset card)."""
        return {field.name: plain(getattr(self, field.name)) for field in dataclasses.fields(self)}

    @classmethod
    def field_names(cls) -> list[str]:
        """The keys a config section of these settings may hold."""
        return [field.name for field in keys(cls)]


def keys(cls: type[Settings]) -> list[dataclasses.Field[Any]]:
    """The fields a config section sets (not those read from sections of their own)."""
    return [field for field in dataclasses.fields(cls) if "sections" not in field.metadata]


_CHOICES: dict[type, dict[str, tuple[Any, ...]]] = {}


def _choices(cls: type) -> dict[str, tuple[Any, ...]]:
    """The fields of a settings class typed `Literal[...]` (or `Literal[...] | None`)."""
    if cls in _CHOICES:
        return _CHOICES[cls]
    found = {}
    for name, annotation in typing.get_type_hints(cls).items():
        options = (
            get_args(annotation)
            if get_origin(annotation) in (typing.Union, types.UnionType)
            else (annotation,)
        )
        for option in options:
            if get_origin(option) is Literal:
                found[name] = get_args(option)
    _CHOICES[cls] = found
    return found


def setting(default: Any, *, doc: str) -> Any:
    """A field that decides a step's output, with its meaning for the configuration reference."""
    return dataclasses.field(default=default, metadata={"doc": doc})


def knob(default: Any, *, doc: str = "") -> Any:
    """A field that changes how a step runs but not what it writes (left out of fingerprints)."""
    return dataclasses.field(default=default, metadata={"fingerprint": False, "doc": doc})


def sections(default: Any, *, doc: str) -> Any:
    """A field read from sections of its own (`doc` names them), not from a key."""
    return dataclasses.field(default=default, metadata={"sections": doc})


def search_only(default: Any, *, doc: str = "") -> Any:
    """A field of an index's settings that changes what a search returns, not what is built."""
    return dataclasses.field(default=default, metadata={"search_only": True, "doc": doc})


def plain(value: Any) -> Any:
    """Settings, tuples and mappings as JSON-ready dicts and lists."""
    if isinstance(value, Settings):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def closest(key: str, known: Collection[str]) -> str | None:
    """The known key nearest to a misspelled one, if any is near."""
    matches = difflib.get_close_matches(key, list(known), n=1, cutoff=0.5)
    return matches[0] if matches else None


def unknown_key(section: str, key: str, known: Collection[str], hint: str = "") -> ConfigError:
    """The error for a key no setting has, with the closest known key."""
    near = closest(key, known)
    suggestion = f"; did you mean {near!r}?" if near else ""
    listing = ", ".join(sorted(known)) or "none"
    return ConfigError(f"[{section}] unknown key {key!r}{suggestion} (known keys: {listing}){hint}")


def check_no_inline_comment(section: str, values: Mapping[str, Any]) -> None:
    """A ConfigError for the first value of `section` that holds an inline comment.

    A JSON value (a list, an object, a string literal) may hold ` #` as data and is left alone.
    """
    for key, raw in values.items():
        if not isinstance(raw, str) or not _INLINE_COMMENT.search(raw) or _is_json(raw):
            continue
        raise ConfigError(
            f"[{section}] {key} = {_shown(raw)}: an inline comment stays in the value (Luigi's "
            "config parser keeps it); put the comment on a line of its own"
        )


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def parse(
    cls: type[S],
    section: str,
    values: Mapping[str, Any],
    *,
    ignore: Collection[str] = (),
    hint: str = "",
    given: Mapping[str, Any] | None = None,
) -> S:
    """Read `values` (a config section) into `cls`, strictly.

    Keys in `ignore` belong to the section but not to `cls` (say, `backend`, read by the
    caller). `hint` is added to an unknown-key error (for example which backend is selected).
    `given` holds fields already read, from sections of their own (see `sections`).
    """
    fields = {field.name: field for field in keys(cls)}
    hints = typing.get_type_hints(cls)
    options: dict[str, Any] = {}
    for key, raw in values.items():
        if key in ignore:
            continue
        if key not in fields:
            retired = cls.RETIRED_KEYS.get(key)
            note = f"{hint}; {retired}" if retired else hint
            raise unknown_key(section, key, [*fields, *ignore], note)
        options[key] = convert(raw, hints[key], section, key)
    try:
        return cls(**options, **(given or {}))
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"[{section}] {exc}") from exc


def convert(raw: Any, annotation: Any, section: str, key: str) -> Any:
    """`raw` as a value of type `annotation`, or a ConfigError naming section, key and value."""
    try:
        return _convert(raw, annotation)
    except _Mismatch as mismatch:
        raise ConfigError(
            f"[{section}] {key} = {_shown(raw)}: expected {mismatch.expected}"
        ) from None


class _Mismatch(Exception):
    """A raw value does not fit the declared type (carries what was expected)."""

    def __init__(self, expected: str) -> None:
        super().__init__(expected)
        self.expected = expected


def _shown(raw: Any) -> str:
    """A raw value as it reads in an error message (strings quoted, long ones cut)."""
    text = raw if isinstance(raw, str) else json.dumps(plain(raw), default=str)
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _convert(raw: Any, annotation: Any) -> Any:
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in args if arg is not type(None)]
        if raw is None or (isinstance(raw, str) and raw.strip().lower() in _NONE):
            return None
        if len(options) == 1:
            return _convert(raw, options[0])
        for option in options:
            try:
                return _convert(raw, option)
            except _Mismatch:
                continue
        raise _Mismatch(" or ".join(_describe(option) for option in options))
    if origin is Literal:
        value = _unquote(raw) if isinstance(raw, str) else raw
        if value in args:
            return value
        raise _Mismatch("one of " + ", ".join(str(arg) for arg in args))
    if origin is tuple:
        return tuple(_convert(item, args[0]) for item in _items(raw))
    if origin in (dict, Mapping) or annotation is dict:
        return _mapping(raw)
    if annotation is bool:
        return _boolean(raw)
    if annotation is int:
        return _integer(raw)
    if annotation is float:
        return _number(raw)
    if annotation is str:
        if isinstance(raw, str):
            return _unquote(raw)
        if isinstance(raw, os.PathLike):
            return os.fspath(raw)
        raise _Mismatch("a string")
    if annotation is Any:
        return raw
    raise _Mismatch(f"a value of type {annotation!r}")


def _describe(annotation: Any) -> str:
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    return names.get(annotation, str(annotation))


def _unquote(text: str) -> str:
    """A JSON string literal's value (keeps leading and trailing spaces); other text as is."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _Mismatch(f"a valid JSON string literal ({exc.msg})") from None
        if isinstance(value, str):
            return value
    return text


def _boolean(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
        return raw.strip().lower() in _TRUE
    raise _Mismatch("true or false")


def _integer(raw: Any) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        try:
            return int(raw.strip())
        except ValueError:
            pass
    raise _Mismatch("an integer")


def _number(raw: Any) -> float:
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(raw.strip())
        except ValueError:
            pass
    raise _Mismatch("a number")


def _items(raw: Any) -> list[Any]:
    """A list value: a JSON list, or items separated by commas or newlines."""
    if isinstance(raw, (list, tuple)):
        return list(raw)
    if not isinstance(raw, str):
        raise _Mismatch("a list (JSON, or items separated by commas or newlines)")
    text = raw.strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _Mismatch(f"a JSON list ({exc.msg})") from None
        if not isinstance(value, list):
            raise _Mismatch("a JSON list")
        return value
    return [item.strip() for line in text.splitlines() for item in line.split(",") if item.strip()]


def _mapping(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return {str(key): value for key, value in raw.items()}
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise _Mismatch(f"a JSON object ({exc.msg})") from None
        if isinstance(value, dict):
            return value
    raise _Mismatch("a JSON object")
