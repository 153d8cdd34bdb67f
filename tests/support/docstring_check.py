"""Dotted names in backticks (`tipqa.core.fingerprint.StepRecord`) that name nothing any more.

A docstring or a documentation page that points at a module, class or function by its dotted
name goes stale when the code moves. `stale_names` reads every docstring of tipqa/, pipelines/
and benchmarks/ and every page of README.md and docs/, and resolves each such name without
importing anything: the longest leading part that is a module of the tree (a `.py` file or a
package), then each further part a name that module (or class) defines or assigns; a name a
module only imports is not its own, except in a package's face (`__init__.py`).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tipqa", "pipelines", "benchmarks")
DOTTED = re.compile(r"`+((?:tipqa|pipelines|benchmarks)(?:\.\w+)+)(?:\(\))?`+")


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _module_file(root: Path, dotted: str) -> Path | None:
    """The file of the module `dotted` under `root`, if there is one."""
    base = root.joinpath(*dotted.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _names(body: list[ast.stmt], face: bool) -> dict[str, ast.AST]:
    """The names a module or class body defines or assigns (with their nodes), and those it
    imports when it is a package's face (`__init__.py`, which re-exports)."""
    found: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
        elif face and isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                found[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, ast.If):
            found.update(_names([*node.body, *node.orelse], face))
    return found


def resolves(dotted: str, root: Path = ROOT) -> bool:
    """True when `dotted` names a module of the tree, or a name defined in one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = _module_file(root, ".".join(parts[:cut]))
        if path is None:
            continue
        body: list[ast.stmt] = _tree(path).body
        for part in parts[cut:]:
            node = _names(body, path.name == "__init__.py").get(part)
            if node is None:
                return False
            if not isinstance(node, ast.ClassDef):
                return part == parts[-1]
            body = node.body
        return True
    return False


def _docstrings(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of the module's docstring and of every class's and function's."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for node in ast.walk(_tree(path)):
        if isinstance(node, kinds) and (text := ast.get_docstring(node, clean=False)):
            yield (node.body[0].lineno, text)


def _texts(root: Path) -> Iterator[tuple[str, str]]:
    """(where, text) of every docstring of the packages and of every documentation page."""
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for line, text in _docstrings(path):
                yield (f"{path.relative_to(root)}:{line}", text)
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        yield (str(page.relative_to(root)), page.read_text(encoding="utf-8"))


def stale_names(root: Path = ROOT) -> list[str]:
    """`where: name` of every backticked dotted name that resolves to nothing."""
    return [
        f"{where}: {name}"
        for where, text in _texts(root)
        for name in DOTTED.findall(text)
        if not resolves(name, root)
    ]
