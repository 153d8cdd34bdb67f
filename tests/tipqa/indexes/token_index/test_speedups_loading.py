"""Loading the C speed-ups: the Python code runs when they were not built, a broken build raises."""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tipqa.indexes.token_index import speedups

ASK = "from tipqa.indexes.token_index import speedups; print(speedups.native())"


def package(root: Path, extension: bytes | None) -> Path:
    """A `tipqa.indexes.token_index` under `root`: this `speedups.py`, `extension` its module."""
    folder = root / "tipqa" / "indexes" / "token_index"
    folder.mkdir(parents=True)
    (root / "tipqa" / "__init__.py").touch()
    (root / "tipqa" / "indexes" / "__init__.py").touch()
    (folder / "__init__.py").touch()
    shutil.copy(speedups.__file__, folder / "speedups.py")
    if extension is not None:
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        (folder / f"_speedups{suffix}").write_bytes(extension)
    return root


def native_in(root: Path) -> subprocess.CompletedProcess[str]:
    """What `speedups.native()` gives in a fresh interpreter importing `tipqa` from `root`."""
    env = {k: v for k, v in os.environ.items() if k not in (speedups.PURE_PYTHON, "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, "-c", ASK], cwd=root, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_package_without_the_module_runs_the_python_code(tmp_path: Path) -> None:
    result = native_in(package(tmp_path, None))
    assert (result.returncode, result.stdout) == (0, "None\n"), result.stderr


def test_a_module_that_cannot_be_loaded_raises(tmp_path: Path) -> None:
    result = native_in(package(tmp_path, b"not a shared library"))
    assert result.returncode == 1
    assert "ImportError: the C speed-ups are built but cannot be loaded" in result.stderr
    assert f"{speedups.PURE_PYTHON}=1" in result.stderr
