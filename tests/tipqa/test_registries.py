"""Every entry of every registry resolves, and its declared capabilities are what it has."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import tipqa
from tipqa.core.errors import ConfigError, MissingExtraError
from tipqa.core.registry import Registry, settings_have

DEFINITION = re.compile(r"^(\w+): Registry\[.*\] = Registry\(", re.MULTILINE)
ROOT = Path(tipqa.__file__).parent


def registries() -> list[tuple[str, Registry]]:
    """Each registry defined in tipqa (found in the source), as "module:NAME" and the object."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for name in DEFINITION.findall(path.read_text(encoding="utf-8")):
            parts = path.relative_to(ROOT.parent).with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found.append((f"{module}:{name}", getattr(importlib.import_module(module), name)))
    return found


ENTRIES = [(label, registry, name) for label, registry in registries() for name in registry.names]


def test_every_registry_is_found() -> None:
    seams = {registry.seam for _, registry in registries()}
    assert {"relevance judge", "keyword extractor", "answerer", "token index"} <= seams
    assert len(seams) >= 9


@pytest.mark.parametrize(
    ("registry", "name"),
    [(registry, name) for _, registry, name in ENTRIES],
    ids=[f"{label}[{name}]" for label, _, name in ENTRIES],
)
def test_entry_resolves_with_the_capabilities_it_declares(registry: Registry, name: str) -> None:
    try:
        problems = registry.check(name)
    except (ImportError, MissingExtraError) as exc:
        pytest.skip(f"{registry.seam} {name!r} needs a package not installed here: {exc}")
    assert problems == []


def test_a_wrong_declaration_is_named() -> None:
    registry: Registry = Registry("demo", {"remote": settings_have("model")})
    registry.add(
        "plain", "tipqa.llm.judges.rules:RuleJudge", "tipqa.llm.judges.rules:RuleJudgeSettings"
    )
    registry.add(
        "liar",
        "tipqa.llm.judges.rules:RuleJudge",
        "tipqa.llm.judges.rules:RuleJudgeSettings",
        capabilities=("remote",),
    )
    assert registry.check("plain") == [] and not registry.has("plain", "remote")
    assert registry.check("liar") == ["demo 'liar': capability 'remote' declared but missing"]
    registry.add(
        "llm", "tipqa.llm.judges.llm:LLMJudge", "tipqa.llm.judges.openai:OpenAIJudgeSettings"
    )
    assert registry.check("llm") == ["demo 'llm': capability 'remote' present but not declared"]
    with pytest.raises(ConfigError, match="unknown capability"):
        registry.add(
            "x",
            "tipqa.llm.judges.rules:RuleJudge",
            "tipqa.llm.judges.rules:RuleJudgeSettings",
            capabilities=("fast",),
        )
