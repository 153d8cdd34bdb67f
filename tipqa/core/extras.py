"""The optional packages a backend may need, each with the extra that installs it.

A backend's settings name theirs (`Settings.extras()`), so that a build checks every package
its configuration selects before anything runs, without importing any of them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass

from tipqa.core.errors import MissingExtraError


@dataclass(frozen=True)
class Extra:
    """An importable package and the `tipqa[...]` extra that installs it."""

    package: str
    extra: str

    def installed(self) -> bool:
        """True when the package can be imported (it is found, not imported)."""
        return importlib.util.find_spec(self.package) is not None


OPENAI = Extra("openai", "openai")
VLLM = Extra("vllm", "vllm")
ELASTICSEARCH = Extra("elasticsearch", "elasticsearch")
OPENVINO = Extra("openvino", "openvino")
TOKENIZERS = Extra("tokenizers", "boundary")
SCIKIT_LEARN = Extra("sklearn", "annotation")
KRIPPENDORFF = Extra("krippendorff", "annotation")


def require(extras: Iterable[Extra], needed_by: str) -> None:
    """MissingExtraError, naming the extra, for the first of `extras` that is not installed."""
    for extra in extras:
        if not extra.installed():
            raise MissingExtraError(extra.package, extra.extra, needed_by=needed_by)
