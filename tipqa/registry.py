"""One registry per seam: a config string names an implementation, imported lazily.

Implementations are registered as "module:attribute" paths so that choosing the embedded
default never imports vllm, openai or elasticsearch.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Generic, TypeVar

from tipqa.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named implementations of one seam."""

    def __init__(self, seam: str) -> None:
        self.seam = seam
        self._entries: dict[str, str | type] = {}

    def add(self, name: str, target: str | type) -> None:
        """Register `target` ("package.module:Class", or the class itself) under `name`."""
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
        if not isinstance(target, str):
            return target
        module_name, _, attribute = target.partition(":")
        module = importlib.import_module(module_name)
        return getattr(module, attribute)

    def create(self, name: str, **options: Any) -> T:
        """Instantiate the implementation registered under `name` with `options`."""
        return self.resolve(name)(**options)

    def create_from(self, name: str, settings: dict[str, Any]) -> T:
        """Instantiate `name` with those `settings` its constructor accepts.

        One configuration section can then serve every backend of a seam: unset values (None
        or "") are left to the backend's defaults, and keys it does not take are ignored.
        """
        cls = self.resolve(name)
        accepted = inspect.signature(cls).parameters
        options = {
            key: value
            for key, value in settings.items()
            if key in accepted and value is not None and value != ""
        }
        return cls(**options)
