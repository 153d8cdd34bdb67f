"""One name per concept: no two public classes of tipqa share a name."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import tipqa

ROOT = Path(tipqa.__file__).parent
SHARED_NAMES: dict[str, tuple[str, ...]] = {}
"""The public class names still defined twice, and where: each is to get names of its own.
Any other name defined twice, or one of these defined in a third place, fails the test."""


def public_classes(root: Path) -> dict[str, list[str]]:
    """Each public (not `_`-prefixed) top-level class name under `root`, and where it is
    defined (paths from the repository root, in sorted order)."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        where = path.relative_to(root.parent).as_posix()
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found[node.name].append(where)
    return found


def test_no_two_public_classes_share_a_name() -> None:
    shared = {name: tuple(paths) for name, paths in public_classes(ROOT).items() if len(paths) > 1}
    new = {name: paths for name, paths in shared.items() if SHARED_NAMES.get(name) != paths}
    assert not new, f"public classes of one name in two places (give each its own): {new}"


def test_a_class_defined_twice_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "a").mkdir(parents=True)
    (package / "a" / "one.py").write_text("class Unit:\n    pass\nclass _Hidden:\n    pass\n")
    (package / "two.py").write_text("class Unit:\n    pass\nclass _Hidden:\n    pass\n")
    assert dict(public_classes(package)) == {"Unit": ["pkg/a/one.py", "pkg/two.py"]}
