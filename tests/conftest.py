"""Fixtures shared across test folders: Label Studio, the vLLM engine's environment, the tiny model,
the demo world built once per session (`seed_support`).

The vLLM ones are defined once (in `vllm_fixtures`) so that every test of a session gets the same
tiny model, and so one engine.

A test that needs an optional package says so with `@pytest.mark.needs("openai")` (or a module's
`pytestmark`): without the package it is skipped, naming the extra that installs it, so the
tests of the README's install (`.[dev]`) pass. With `TIPQA_EXTRA_SKIPS=<file>`, the ids of the
tests skipped that way are written to the file, one per line, for a later run with the extras
installed (`python -m pytest @<file>`, as `.ci/run` does).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import label_studio_server
from support.seed_support import demo_builds
from support.vllm_fixtures import model_path, tiny_model, vllm_environment

__all__ = ["demo_builds", "label_studio", "model_path", "tiny_model", "vllm_environment"]

EXTRA_OF = {
    "openai": "openai",
    "elasticsearch": "elasticsearch",
    "krippendorff": "annotation",
    "openpyxl": "annotation",
    "sklearn": "annotation",
    "label_studio_sdk": "labelstudio",
    "tokenizers": "boundary",
    "mlcroissant": "croissant",
    "lm_eval": "lm-eval",
    "openvino": "openvino",
    "mkdocs": "docs",
}
NEEDS = "needs the optional package"
SCREENSHOTS = pytest.StashKey[Path]()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test marked `needs(package, ...)` when a package is not installed."""
    for mark in item.iter_markers("needs"):
        for package in mark.args:
            if importlib.util.find_spec(package) is None:
                extra = EXTRA_OF[package]
                pytest.skip(f"{NEEDS} {package!r}: pip install -e '.[{extra}]'")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Write the id of a test skipped for a missing package to `$TIPQA_EXTRA_SKIPS`."""
    path = os.environ.get("TIPQA_EXTRA_SKIPS")
    if path and report.skipped and NEEDS in str(report.longrepr):
        with open(path, "a") as record:
            record.write(report.nodeid + "\n")


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Name the folder the browser tests saved their screenshots in, if they ran."""
    if SCREENSHOTS in config.stash:
        terminalreporter.write_line(f"screenshots: {config.stash[SCREENSHOTS]}")


@pytest.fixture(scope="session")
def screenshots(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the browser tests save their screenshots in (named at the end of the run)."""
    folder = tmp_path_factory.mktemp("screenshots")
    request.config.stash[SCREENSHOTS] = folder
    return folder


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
