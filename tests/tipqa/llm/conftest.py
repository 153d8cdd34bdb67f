"""Fixtures of the LLM tests: the local OpenAI-compatible server."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ENVIRONMENT = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
ENVIRONMENT += tuple(v.lower() for v in ENVIRONMENT[2:])


def load_server_module() -> ModuleType:
    """Import tests/openai_server.py (tests are not a package under --import-mode=importlib)."""
    name = "tipqa_tests_openai_server"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "openai_server.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def server_module() -> ModuleType:
    """The fake server's module (rules, Reply)."""
    return load_server_module()


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator:
    """A started fake server with the judge rule; no OpenAI or proxy variables leak in."""
    for variable in ENVIRONMENT:
        monkeypatch.delenv(variable, raising=False)
    with load_server_module().FakeOpenAIServer() as server:
        yield server
