"""One registry per seam: a config string names an implementation and its settings class.

Implementations and their settings are registered as "module:attribute" paths, so that
choosing the embedded default never imports vllm, openai or elasticsearch. Every
implementation is constructed the same way: `cls(settings, **runtime)`, where `settings` is a
frozen `tipqa.core.settings.Settings` read strictly from the seam's config section and `runtime`
holds what only the caller knows (a path, a vector dimension, a client).

A seam may name optional capabilities (say, "counted"), each with a check of the class and its
settings class; a backend declares those it has where it is registered (`add(...,
capabilities=...)`), callers ask `has(name, capability)`, and `check(name)` says where a
declaration and the class disagree (one test runs it over every entry of every registry).

A registry may name modules that register more entries when imported (`registered_by`, as the
LLM providers in `tipqa.llm.providers`); it imports them on its first lookup, not before.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from tipqa.core.errors import ConfigError
from tipqa.core.settings import Settings, parse

T = TypeVar("T")
Check = Callable[[Any, type[Settings]], bool]
"""Whether an implementation (a class or factory) and its settings class have a capability."""


@dataclass(frozen=True)
class Entry:
    """A registered implementation, its settings class and its declared capabilities."""

    target: str | type
    settings: str | type[Settings]
    capabilities: frozenset[str] = field(default_factory=frozenset)


def declares(cls: Any, member: str) -> bool:
    """True when a class defines `member` or annotates it (an attribute set in `__init__`)."""
    if not isinstance(cls, type):
        return False
    return any(
        member in vars(klass) or member in vars(klass).get("__annotations__", {})
        for klass in cls.__mro__
    )


def has_attribute(name: str) -> Check:
    """A check that the implementation class defines or annotates `name`."""

    def check(target: Any, settings: type[Settings]) -> bool:
        return declares(target, name)

    return check


def settings_have(name: str) -> Check:
    """A check that the settings class has `name` (a field or a method)."""

    def check(target: Any, settings: type[Settings]) -> bool:
        return name in settings.field_names() or callable(getattr(settings, name, None))

    return check


def _load(target: str | type) -> Any:
    """Import "module:attribute" or "module:Class.method" (or return an object given directly)."""
    if not isinstance(target, str):
        return target
    module_name, _, attribute = target.partition(":")
    return functools.reduce(getattr, attribute.split("."), importlib.import_module(module_name))


class Registry(Generic[T]):
    """Named implementations of one seam, each with its settings class."""

    def __init__(
        self,
        seam: str,
        capabilities: Mapping[str, Check] | None = None,
        *,
        registered_by: Sequence[str] = (),
    ) -> None:
        self.seam = seam
        self.capabilities: dict[str, Check] = dict(capabilities or {})
        self._entries: dict[str, Entry] = {}
        self._unloaded = list(registered_by)

    def add(
        self,
        name: str,
        target: str | type,
        settings: str | type[Settings],
        *,
        capabilities: Collection[str] = (),
    ) -> None:
        """Register `target`, its settings class (each "module:Attribute", or the class) and
        the optional capabilities it has."""
        unknown = sorted(set(capabilities) - set(self.capabilities))
        if unknown:
            known = ", ".join(sorted(self.capabilities)) or "none"
            raise ConfigError(f"{self.seam} {name!r}: unknown capability {unknown}; known: {known}")
        entry = Entry(target, settings, frozenset(capabilities))
        if name in self._entries and self._entries[name] != entry:
            raise ConfigError(f"{self.seam}: {name!r} is already registered")
        self._entries[name] = entry

    def remove(self, name: str) -> None:
        """Forget the implementation registered under `name`."""
        self._entry(name)
        del self._entries[name]

    def _loaded(self) -> dict[str, Entry]:
        """The entries, after importing the modules that register more (once)."""
        while self._unloaded:
            importlib.import_module(self._unloaded.pop(0))
        return self._entries

    def has(self, name: str, capability: str) -> bool:
        """Whether `name` is registered with `capability` (its classes are not imported)."""
        if capability not in self.capabilities:
            raise ConfigError(f"{self.seam}: no capability {capability!r}")
        return capability in self._entry(name).capabilities

    def capabilities_of(self, target: Any, settings: type[Settings]) -> tuple[str, ...]:
        """The capabilities an implementation and its settings class have, by the seam's checks."""
        return tuple(
            name for name, check in sorted(self.capabilities.items()) if check(target, settings)
        )

    def check(self, name: str) -> list[str]:
        """Where the declared capabilities of `name` and its classes disagree (imports it)."""
        entry = self._entry(name)
        target, settings = self.resolve(name), self.settings_class(name)
        problems = []
        if not (isinstance(settings, type) and issubclass(settings, Settings)):
            problems.append(f"{self.seam} {name!r}: settings {settings!r} are not Settings")
            return problems
        for capability, check in sorted(self.capabilities.items()):
            found, declared = check(target, settings), capability in entry.capabilities
            if found != declared:
                said = "declared but missing" if declared else "present but not declared"
                problems.append(f"{self.seam} {name!r}: capability {capability!r} {said}")
        return problems

    @property
    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._loaded())

    def _entry(self, name: str) -> Entry:
        try:
            return self._loaded()[name]
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

    def misplaced(
        self,
        error: ConfigError,
        name: str,
        section: str,
        values: Mapping[str, Any],
        ignore: Collection[str],
    ) -> ConfigError:
        """`error` of parsing `name`'s section, naming the backends a misplaced key belongs to."""
        own = set(self.settings_class(name).field_names()) | set(ignore)
        for key in values:
            if key in own:
                continue
            owners = [
                other
                for other in self.names
                if other != name and key in self.settings_class(other).field_names()
            ]
            if owners:
                return ConfigError(
                    f"[{section}] {key!r} is a setting of {self.seam} {', '.join(owners)}, "
                    f"not of the selected {name!r}: remove it or change `backend`"
                )
        return error

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
