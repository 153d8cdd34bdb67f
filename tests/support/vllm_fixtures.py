"""Fixtures for tests of the real vLLM engine: its environment, the tiny model, and the
tiny model for one module's engine.

Import them into a `conftest.py` (`from vllm_fixtures import model_path, tiny_model, ...`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support import vllm_model


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


@pytest.fixture(scope="module")
def model_path(vllm_environment: Path, tiny_model: Path) -> Iterator[str]:
    """The tiny model's path; an engine the module's tests started is stopped after them."""
    from tipqa.llm import vllm_engine

    running = bool(vllm_engine._ENGINE)
    yield str(tiny_model)
    if not running:
        vllm_engine.shutdown_engine()
