"""Fixtures shared across test folders: Label Studio, the vLLM engine's environment, the tiny model.

The vLLM ones are defined once (in `vllm_fixtures`) so that every test of a session gets the same
tiny model, and so one engine.
"""

from __future__ import annotations

from collections.abc import Iterator

import label_studio_server
import pytest
from vllm_fixtures import tiny_model, vllm_environment

__all__ = ["label_studio", "tiny_model", "vllm_environment"]


@pytest.fixture(scope="session")
def label_studio(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[label_studio_server.LabelStudio]:
    """A real Label Studio on loopback for the whole session (skipped without its venv)."""
    command = label_studio_server.executable()
    if command is None:
        pytest.skip(
            f"no Label Studio: set {label_studio_server.VENV_ENV} to a venv with "
            "`pip install label-studio` (.ci/labelstudio.sh makes one)"
        )
    pytest.importorskip("label_studio_sdk", reason="the labelstudio extra is not installed")
    process, server = label_studio_server.start(command, tmp_path_factory.mktemp("label-studio"))
    try:
        yield server
    finally:
        label_studio_server.stop(process)
