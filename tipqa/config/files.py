"""The config files a build reads, checked before Luigi reads them.

Luigi reads its config files as soon as it is imported (before it loads tipqa), and a file it
cannot parse (a section or key written twice, as pasting a snippet into a `luigi.cfg` easily
does; a key outside any section) stops it with a traceback. `check_config_files` parses each
file as Luigi will and says what is wrong in one `ConfigError` naming file, line, section and
key; the commands of tipqa that read a configuration call it before they import Luigi.
"""

from __future__ import annotations

import configparser
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tipqa.core.errors import ConfigError

LUIGI_FILES = ("/etc/luigi/client.cfg", "/etc/luigi/luigi.cfg", "client.cfg", "luigi.cfg")
"""The files Luigi reads when they exist, later ones winning (then `LUIGI_CONFIG_PATH`)."""


def luigi_files() -> list[Path]:
    """The config files Luigi will read from here: its usual places and `LUIGI_CONFIG_PATH`."""
    named = [*LUIGI_FILES, os.environ.get("LUIGI_CONFIG_PATH", "")]
    return [Path(name) for name in named if name and Path(name).is_file()]


def check_config_files(paths: Iterable[str | os.PathLike[str]]) -> None:
    """A ConfigError for the first file that Luigi's parser would refuse (each read alone)."""
    for path in paths:
        parser = configparser.ConfigParser(interpolation=None, strict=True)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        try:
            parser.read(path, encoding="utf-8")
        except configparser.Error as exc:
            raise ConfigError(_said(exc, str(path))) from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not a text file in UTF-8 ({exc.reason})") from None


def parser_values(parser: configparser.RawConfigParser) -> dict[str, dict[str, Any]]:
    """Every section of a parser read in (Luigi's), each value interpolated as Luigi does; a
    value that cannot be (a lone `%`, a `${VARIABLE}` not set) is a ConfigError naming it."""
    sections: dict[str, dict[str, Any]] = {}
    for section in parser.sections():
        values = sections.setdefault(section, {})
        for key in parser.options(section):
            try:
                values[key] = parser.get(section, key)
            except configparser.Error as exc:
                raise ConfigError(
                    f"[{section}] {key}: {exc.message.splitlines()[0]} (a % sign is written "
                    "%%; ${NAME} is the environment variable NAME)"
                ) from None
    return sections


def _said(error: configparser.Error, path: str) -> str:
    """One line for a parsing error of a config file."""
    if isinstance(error, configparser.DuplicateOptionError):
        return (
            f"{path}, line {error.lineno}: key {error.option!r} is written twice in "
            f"[{error.section}]; keep one"
        )
    if isinstance(error, configparser.DuplicateSectionError):
        return (
            f"{path}, line {error.lineno}: section [{error.section}] is written twice in this "
            "file; merge the two into one"
        )
    if isinstance(error, configparser.MissingSectionHeaderError):
        return f"{path}, line {error.lineno}: {error.line.strip()!r} is outside any [section]"
    if isinstance(error, configparser.ParsingError):
        lines = ", ".join(str(number) for number, _ in error.errors)
        return f"{path}: lines that are neither a [section] nor key = value: {lines}"
    return f"{path}: {error.message}"
