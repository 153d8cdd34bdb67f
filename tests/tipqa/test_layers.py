"""The layers of the package: every import goes down the stack of docs/architecture.md.

Each first-level package of tipqa/ (and pipelines/) has a floor. A module may import its own
package and the packages on lower floors, never one on its own floor or above: so the seams do
not import one another, and no feature imports the build. Imports inside functions and under
`TYPE_CHECKING` count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FLOORS: dict[str, int] = {
    "core": 0,
    "sources": 1,
    "indexes": 1,
    "llm": 1,
    "stages": 2,
    "dataset": 2,
    "training_order": 2,
    "evaluate": 3,
    "annotation": 3,
    "audit": 3,
    "export": 4,
    "lmeval_task": 4,
    "hub": 5,
    "boundary": 6,
    "config": 7,
    "builder": 8,
    "report": 9,
    "pipelines": 10,
    "__main__": 11,
    "tipqa": 12,
}
"""The floor of each package (the stack in docs/architecture.md, read bottom up); `tipqa` is
the package's face (`tipqa/__init__.py`, the names a notebook imports), which no layer imports."""

ROOT = "tipqa"


def package(module: str) -> str:
    """The layer a dotted module belongs to: its first-level package under tipqa/."""
    parts = module.split(".")
    if parts[0] == "pipelines":
        return "pipelines"
    return parts[1] if len(parts) > 1 and parts[1] in FLOORS else ROOT


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import of tipqa or pipelines in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module]
            if node.module == "tipqa":
                modules = [f"tipqa.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found += [(node.lineno, m) for m in modules if m.split(".")[0] in ("tipqa", "pipelines")]
    return found


def upward(root: Path) -> list[str]:
    """Each import under `root`'s tipqa/ and pipelines/ that does not go down the stack."""
    wrong = []
    for path in sorted([*(root / "tipqa").rglob("*.py"), *(root / "pipelines").rglob("*.py")]):
        relative = path.relative_to(root).with_suffix("")
        own = package(".".join(relative.parts))
        for line, module in imports(path):
            other = package(module)
            if other == own:
                continue
            if FLOORS[other] >= FLOORS[own]:
                wrong.append(f"{relative}.py:{line}: {own} -> {other} ({module})")
    return wrong


def test_every_package_has_a_floor() -> None:
    tipqa = REPO / "tipqa"
    packages = {p.name for p in tipqa.iterdir() if (p / "__init__.py").is_file()}
    assert packages | {"__main__", "pipelines", ROOT} == set(FLOORS)


def test_imports_go_down_the_stack() -> None:
    assert upward(REPO) == []


@pytest.mark.parametrize(
    ("where", "line", "expected"),
    [
        ("tipqa/sources/corpus/x.py", "from tipqa.llm.chat import Decoding", "sources -> llm"),
        ("tipqa/evaluate/x.py", "from tipqa.builder.plan import Plan", "evaluate -> builder"),
        ("tipqa/core/x.py", "import tipqa.dataset.splits", "core -> dataset"),
        ("pipelines/x.py", "from tipqa import __main__", "pipelines -> __main__"),
        ("tipqa/dataset/x.py", "import tipqa", "dataset -> tipqa"),
        ("tipqa/llm/judges/x.py", "from tipqa.sources.corpus import base", "llm -> sources"),
    ],
)
def test_an_upward_import_is_named(tmp_path: Path, where: str, line: str, expected: str) -> None:
    path = tmp_path / where
    path.parent.mkdir(parents=True)
    path.write_text(f"def late() -> None:\n    {line}\n")
    (tmp_path / "tipqa" / "core").mkdir(parents=True, exist_ok=True)
    (tmp_path / "tipqa" / "core" / "ok.py").write_text("from tipqa.core import errors\n")
    [wrong] = upward(tmp_path)
    assert wrong.startswith(f"{where}:2: {expected} ")
