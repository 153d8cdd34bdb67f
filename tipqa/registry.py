"""One registry per seam: a config string names an implementation and its settings class.

Implementations and their settings are registered as "module:attribute" paths, so that
choosing the embedded default never imports vllm, openai or elasticsearch. Every
implementation is constructed the same way: `cls(settings, **runtime)`, where `settings` is a
frozen `tipqa.settings.Settings` read strictly from the seam's config section and `runtime`
holds what only the caller knows (a path, a vector dimension, a client).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tipqa.errors import ConfigError
from tipqa.settings import Settings, parse

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    """A registered implementation and its settings class, each as "module:attribute"."""

    target: str | type
    settings: str | type[Settings]


def _load(target: str | type) -> Any:
    """Import "module:attribute" or "module:Class.method" (or return an object given directly)."""
    if not isinstance(target, str):
        return target
    module_name, _, attribute = target.partition(":")
    return functools.reduce(getattr, attribute.split("."), importlib.import_module(module_name))


class Registry(Generic[T]):
    """Named implementations of one seam, each with its settings class."""

    def __init__(self, seam: str) -> None:
        self.seam = seam
        self._entries: dict[str, Entry] = {}

    def add(self, name: str, target: str | type, settings: str | type[Settings]) -> None:
        """Register `target` and its settings class (each "module:Attribute", or the class)."""
        entry = Entry(target, settings)
        if name in self._entries and self._entries[name] != entry:
            raise ConfigError(f"{self.seam}: {name!r} is already registered")
        self._entries[name] = entry

    @property
    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entries)

    def _entry(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self.names)
            raise ConfigError(f"unknown {self.seam} {name!r}; known: {known}") from None

    def resolve(self, name: str) -> Callable[..., T]:
        """Import and return the implementation (a class or factory) registered under `name`."""
        factory: Callable[..., T] = _load(self._entry(name).target)
        return factory

    def settings_class(self, name: str) -> type[Settings]:
        """The settings class of the implementation registered under `name`."""
        cls: type[Settings] = _load(self._entry(name).settings)
        return cls

    def parse(
        self, name: str, section: str, values: Mapping[str, Any], ignore: Collection[str] = ()
    ) -> Settings:
        """Read a config section into the settings of `name`, strictly."""
        hint = f" for {self.seam} {name!r}"
        return parse(self.settings_class(name), section, values, ignore=ignore, hint=hint)

    def create(self, name: str, settings: Settings | None = None, **runtime: Any) -> T:
        """Construct `name` with its settings (the defaults when None) and runtime objects."""
        expected = self.settings_class(name)
        if settings is None:
            settings = expected()
        elif type(settings) is not expected:
            raise ConfigError(
                f"{self.seam} {name!r} takes {expected.__name__}, got {type(settings).__name__}"
            )
        return self.resolve(name)(settings, **runtime)
