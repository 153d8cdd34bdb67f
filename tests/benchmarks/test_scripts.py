"""Every benchmark module imports, and every benchmark script answers `--help`, so a change in
tipqa that breaks one is found by the quick tests (mypy checks benchmarks/ too)."""

from __future__ import annotations

import contextlib
import importlib
import io
import runpy
import sys
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parents[2] / "benchmarks"
MODULES = sorted(f"benchmarks.{p.stem}" for p in FOLDER.glob("*.py") if p.stem != "__init__")
SCRIPTS = [
    name
    for name in MODULES
    if 'if __name__ == "__main__":' in (FOLDER / f"{name.split('.')[1]}.py").read_text()
]


def test_the_benchmarks_are_found() -> None:
    assert {"benchmarks.llm_cache", "benchmarks.explorer", "benchmarks.completeness"} <= set(
        SCRIPTS
    )
    assert {"benchmarks.common", "benchmarks.counting_server"} <= set(MODULES) - set(SCRIPTS)


@pytest.mark.parametrize("name", MODULES)
def test_a_benchmark_module_imports(name: str) -> None:
    assert importlib.import_module(name).__doc__, f"{name} has no docstring"


@pytest.mark.filterwarnings("ignore:.*found in sys.modules after import:RuntimeWarning")
@pytest.mark.parametrize("name", SCRIPTS)
def test_a_benchmark_script_answers_help(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [name, "--help"])
    said = io.StringIO()
    with contextlib.redirect_stdout(said), pytest.raises(SystemExit) as exit_:
        runpy.run_module(name, run_name="__main__")
    assert exit_.value.code == 0
    assert said.getvalue().startswith("usage:")
