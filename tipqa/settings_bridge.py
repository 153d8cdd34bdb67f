"""Build a settings-first backend from a config section's keys (until the registries do it).

# wiring: lead — `Registry.create_from` passes a section's keys as keyword arguments to the
# registered target, keeping those its signature names. A backend converted to the settings
# convention takes one settings object instead, so its registry entry points at a
# `SectionFactory`: its signature lists the settings' fields (plus the runtime arguments), and a
# call parses those keys strictly into the settings (`tipqa.settings.parse`) and builds the
# backend. Delete this module once the registries carry each entry's settings class.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from tipqa.settings import Settings, parse

T = TypeVar("T")


class SectionFactory(Generic[T]):
    """`backend(parse(settings_class, section, keys), **runtime)` behind a keyword signature."""

    def __init__(
        self,
        backend: Callable[..., T],
        settings_class: type[Settings],
        section: str,
        runtime: Sequence[str] = ("progress",),
    ) -> None:
        self.backend = backend
        self.settings_class = settings_class
        self.section = section
        self.runtime = tuple(runtime)
        names = [*settings_class.keys(), *self.runtime]
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in names]
        )

    def __call__(self, **options: Any) -> T:
        """Parse the settings keys of `options`; pass the runtime ones through."""
        runtime = {name: options.pop(name) for name in self.runtime if name in options}
        settings = parse(self.settings_class, self.section, options)
        return self.backend(settings, **runtime)
