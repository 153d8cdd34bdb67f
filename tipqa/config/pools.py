"""The question pools of a config: `[pool.NAME]` sections, or the JSON `[questions] pools`.

Each pool names its source (`demo`, or a registered question source with its settings) and may
keep only its first `limit` questions. Without any pool, the build uses the demo world's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tipqa.core.errors import ConfigError
from tipqa.core.settings import Settings, parse, setting, unknown_key
from tipqa.sources.demo.world import DEMO
from tipqa.sources.questions.base import QUESTION_SOURCES

Sections = Mapping[str, Mapping[str, Any]]
POOL_PREFIX = "pool."
DEFAULT_POOLS = {"dev": {"source": DEMO}}


@dataclass(frozen=True)
class Pool:
    """A question pool: its name, its source (`demo` or a registered source) and a limit."""

    name: str
    source: str
    settings: Settings | None
    limit: int | None = None

    def identity(self) -> dict[str, Any]:
        """The source, its settings and the limit (the pool's files are hashed apart)."""
        settings = self.settings.identity() if self.settings is not None else {}
        return {"source": self.source, **settings, "limit": self.limit}


def selected(values: Mapping[str, Any], selector: str, default: str, section: str) -> str:
    """The backend (or source) that `selector` names in a section, else `default`."""
    raw = values.get(selector, default)
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(f"[{section}] {selector} must name a backend")
    return raw.strip()


def read_pools(sections: Sections) -> tuple[Pool, ...]:
    """The question pools: `[pool.NAME]` sections and/or `[questions] pools` (JSON)."""
    questions = dict(sections.get("questions", {}))
    raw = questions.pop("pools", None)
    if questions:
        raise unknown_key("questions", next(iter(questions)), ["pools"])
    listed: dict[str, Mapping[str, Any]] = {}
    if raw is not None:
        listed = _pools_json(raw)
    for section, values in sections.items():
        if not section.startswith(POOL_PREFIX):
            continue
        name = section[len(POOL_PREFIX) :]
        if name in listed:
            raise ConfigError(
                f"pool {name!r} is set twice: in [questions] pools and in [{section}]"
            )
        listed[name] = values
    if not listed:
        listed = dict(DEFAULT_POOLS)
    return tuple(read_pool(name, values) for name, values in listed.items())


def _pools_json(raw: Any) -> dict[str, Mapping[str, Any]]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"[questions] pools is not valid JSON ({exc.msg}); or write each pool as a "
                "[pool.NAME] section"
            ) from None
    if not isinstance(raw, Mapping) or not all(isinstance(v, Mapping) for v in raw.values()):
        raise ConfigError('[questions] pools must map pool names to settings: {"dev": {...}}')
    return {str(name): value for name, value in raw.items()}


def read_pool(name: str, values: Mapping[str, Any]) -> Pool:
    """One pool's source, its settings, and `limit` (the first N questions)."""
    section = f"{POOL_PREFIX}{name}"
    if not name or "/" in name:
        raise ConfigError(f"[{section}] a pool name must be a non-empty folder name")
    if "source" not in values:
        raise ConfigError(f"[{section}] needs `source` (demo or one of {QUESTION_SOURCES.names})")
    source = selected(values, "source", DEMO, section)
    limit = parse(PoolLimit, section, {k: v for k, v in values.items() if k == "limit"}).limit
    if source == DEMO:
        extra = [key for key in values if key not in ("source", "limit")]
        if extra:
            raise ConfigError(f"[{section}] source = demo takes no other keys, got {extra[0]!r}")
        return Pool(name, DEMO, None, limit)
    settings = QUESTION_SOURCES.parse(source, section, values, ignore={"source", "limit"})
    return Pool(name, source, settings, limit)


@dataclass(frozen=True)
class PoolLimit(Settings):
    """A pool's `limit`: keep only its first N questions."""

    limit: int | None = setting(None, doc="keep only the first N questions (reading stops there)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"a pool's limit must be at least 1, got {self.limit}")
