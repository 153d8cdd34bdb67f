"""Fixtures of the judge tests (the vLLM environment and tiny model are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support import openai_server as fake


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator:
    """A started local OpenAI-compatible server playing the judge (no OpenAI variables leak in)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with fake.FakeOpenAIServer() as running:
        yield running
