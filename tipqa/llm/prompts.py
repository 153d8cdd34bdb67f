"""Prompt templates are files: shipped ones in `tipqa/llm/templates/`, or a user's own path.

A template's identity is the SHA-256 of its bytes; it goes into every cache key and into the
stats, so changing a prompt never reuses answers given to another prompt.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from tipqa.core.errors import ConfigError

_SLOT = re.compile(r"\{(\w+)\}")
SHIPPED = {
    "judge-v1": "judge-v1.txt",
    "keywords-v1": "keywords-v1.json",
    "answer-v1": "answer-v1.txt",
    "p-true-v1": "p-true-v1.txt",
    "uabench-answer-v1": "uabench-answer-v1.txt",
    "uabench-judge-v1": "uabench-judge-v1.txt",
}


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt template's text, its origin and its content hash."""

    name: str
    text: str

    @property
    def sha256(self) -> str:
        """Hex digest of the template text."""
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def short_hash(self) -> str:
        """First 12 hex digits of the hash, for names and logs."""
        return self.sha256[:12]

    @functools.cached_property
    def _pieces(self) -> list[str]:
        """The text split at its slots: text, slot name, text, ..., text."""
        return _SLOT.split(self.text)

    def render(self, **fields: str) -> str:
        """Fill the `{field}` slots (plain replacement: braces in the inputs stay as they are)."""
        pieces = self._pieces
        out = pieces.copy()
        for i in range(1, len(pieces), 2):
            out[i] = fields.get(pieces[i], "{" + pieces[i] + "}")
        return "".join(out)

    def require_slots(self, *slots: str) -> None:
        """Raise ConfigError naming the `{slot}`s the template lacks."""
        missing = [slot for slot in slots if "{" + slot + "}" not in self.text]
        if missing:
            raise ConfigError(
                f"prompt template {self.name!r} lacks the slot(s) "
                + ", ".join("{" + slot + "}" for slot in missing)
            )

    def as_json(self) -> dict[str, Any]:
        """The template parsed as JSON (for few-shot chat templates)."""
        try:
            data = orjson.loads(self.text)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"prompt template {self.name!r} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"prompt template {self.name!r} must be a JSON object")
        return data


def load_template(name_or_path: str) -> PromptTemplate:
    """Load a shipped template by name (e.g. "judge-v1") or a user's template by file path."""
    if name_or_path in SHIPPED:
        text = resources.files("tipqa.llm.templates").joinpath(SHIPPED[name_or_path]).read_text()
        return PromptTemplate(name_or_path, text)
    path = Path(name_or_path)
    if not path.is_file():
        known = ", ".join(sorted(SHIPPED))
        raise ConfigError(f"prompt template {name_or_path!r}: not a file nor one of {known}")
    return PromptTemplate(str(path), path.read_text(encoding="utf-8"))
