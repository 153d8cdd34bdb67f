"""Fixtures of the judge tests: the tiny random-weight model and the environment vLLM runs in."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest


def load_model_module() -> ModuleType:
    """Import tests/vllm_model.py (tests are not a package under --import-mode=importlib)."""
    name = "tipqa_tests_vllm_model"
    if name not in sys.modules:
        path = Path(__file__).resolve().parents[2] / "vllm_model.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


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
    return load_model_module().build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))
