"""Fixtures of the LLM tests: the local OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest
from support import openai_server as fake

ENVIRONMENT = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
ENVIRONMENT += tuple(v.lower() for v in ENVIRONMENT[2:])


@pytest.fixture
def server_module() -> ModuleType:
    """The fake server's module (rules, Reply)."""
    return fake


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator:
    """A started fake server with the judge rule; no OpenAI or proxy variables leak in."""
    for variable in ENVIRONMENT:
        monkeypatch.delenv(variable, raising=False)
    with fake.FakeOpenAIServer() as server:
        yield server
