"""Fixtures of the judge tests: the tiny random-weight model and the environment vLLM runs in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai_server as fake
import pytest
import vllm_model


@pytest.fixture(scope="session")
def vllm_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Environment for the CPU engine: a 1 GiB KV cache, and temporary files kept in our folder."""
    root = tmp_path_factory.mktemp("vllm-env")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")
        for variable, folder in (
            ("TMPDIR", "tmp"),
            ("VLLM_RPC_BASE_PATH", "rpc"),
            ("VLLM_CACHE_ROOT", "cache"),
            ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
        ):
            (root / folder).mkdir()
            patch.setenv(variable, str(root / folder))
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("VLLM_NO_USAGE_STATS", "1")
        yield root


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random Llama chat model saved with save_pretrained (made once per session)."""
    return vllm_model.build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator:
    """A started local OpenAI-compatible server playing the judge (no OpenAI variables leak in)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with fake.FakeOpenAIServer() as running:
        yield running
