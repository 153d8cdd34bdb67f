"""The build's configuration as the Luigi tasks see it: Luigi's config files, read strictly.

Luigi reads `luigi.cfg` in the working directory and the files in `LUIGI_CONFIG_PATH`; every
section of ours in them is read into typed settings by `tipqa.config.read_config` (see
docs/configuration/reference.md), and every optional package the selected backends need is
looked for, so that a missing extra stops a build before anything runs. The files are read and
parsed once per process: again only when Luigi is given another config file
(`add_config_path`), which is what a `complete()` of any of a build's thousands of tasks relies
on to stay cheap.
"""

from __future__ import annotations

import functools

import luigi.configuration

from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.config.files import parser_values

RawSections = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def _raw_sections() -> RawSections:
    """Every section of Luigi's configuration, as raw strings (interpolated as Luigi does)."""
    parser = luigi.configuration.get_config()
    return _read_parser(id(parser), tuple(luigi.configuration.LuigiConfigParser._config_paths))


@functools.lru_cache(maxsize=4)
def _read_parser(parser_id: int, paths: tuple[str, ...]) -> RawSections:
    """The sections of the parser read from `paths` (the arguments are the cache's key)."""
    values = parser_values(luigi.configuration.get_config())
    return tuple((section, tuple(items.items())) for section, items in values.items())


@functools.lru_cache(maxsize=4)
def _read(raw: RawSections) -> Plan:
    config = read_config({section: dict(items) for section, items in raw})
    config.check_extras()
    return Plan(config)


def plan() -> Plan:
    """The build plan of this run: its configuration, and every step's inputs record."""
    return _read(_raw_sections())
