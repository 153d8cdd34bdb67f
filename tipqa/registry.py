"""One registry per seam: a config string names an implementation, imported lazily.

Implementations are registered as "module:attribute" paths so that choosing the embedded
default never imports vllm, openai or elasticsearch.
"""

from __future__ import annotations

import importlib
from typing import Any, Generic, TypeVar

from tipqa.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named implementations of one seam."""

    def __init__(self, seam: str) -> None:
        self.seam = seam
        self._entries: dict[str, str] = {}

    def add(self, name: str, target: str) -> None:
        """Register `target` ("package.module:Class") under `name`."""
        if name in self._entries and self._entries[name] != target:
            raise ConfigError(f"{self.seam}: {name!r} is already registered")
        self._entries[name] = target

    @property
    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entries)

    def resolve(self, name: str) -> type[T]:
        """Import and return the implementation registered under `name`."""
        try:
            target = self._entries[name]
        except KeyError:
            known = ", ".join(self.names)
            raise ConfigError(f"unknown {self.seam} {name!r}; known: {known}") from None
        module_name, _, attribute = target.partition(":")
        module = importlib.import_module(module_name)
        return getattr(module, attribute)

    def create(self, name: str, **options: Any) -> T:
        """Instantiate the implementation registered under `name` with `options`."""
        return self.resolve(name)(**options)
