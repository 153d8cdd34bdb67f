"""The registry: unknown names list the known ones, lazy imports, settings filtered."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tipqa.errors import ConfigError
from tipqa.registry import Registry


class Backend:
    """A constructor with one required and two optional parameters."""

    def __init__(self, path: str, *, size: int = 3, label: str = "x") -> None:
        self.path, self.size, self.label = path, size, label


def test_unknown_name_lists_known_ones() -> None:
    reg: Registry[Backend] = Registry("token index")
    reg.add("tantivy", Backend)
    reg.add("elasticsearch", "nowhere.module:Thing")
    with pytest.raises(ConfigError) as info:
        reg.resolve("lucene")
    message = str(info.value)
    assert "token index" in message and "'lucene'" in message
    assert "known: elasticsearch, tantivy" in message
    assert reg.names == ["elasticsearch", "tantivy"]


def test_registering_a_name_twice() -> None:
    reg: Registry[Backend] = Registry("seam")
    reg.add("a", Backend)
    reg.add("a", Backend)
    with pytest.raises(ConfigError, match="already registered"):
        reg.add("a", "other:Thing")


def test_module_is_imported_only_when_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "tipqa_lazy_probe_module"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            """
            class Probe:
                def __init__(self, value=1):
                    self.value = value
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    reg: Registry[object] = Registry("probe")
    reg.add("probe", f"{name}:Probe")
    assert name not in sys.modules
    with pytest.raises(ConfigError):
        reg.resolve("other")
    assert name not in sys.modules
    cls = reg.resolve("probe")
    assert name in sys.modules
    assert reg.create("probe", value=5).value == 5
    assert cls.__name__ == "Probe"


def test_registering_does_not_import_a_missing_module() -> None:
    reg: Registry[object] = Registry("seam")
    reg.add("ghost", "tipqa_no_such_module_anywhere:Thing")
    with pytest.raises(ModuleNotFoundError):
        reg.resolve("ghost")


def test_create_from_filters_by_signature_and_drops_unset() -> None:
    reg: Registry[Backend] = Registry("seam")
    reg.add("b", Backend)
    made = reg.create_from(
        "b", {"path": "/p", "size": None, "label": "", "backend": "b", "url": "http://x"}
    )
    assert (made.path, made.size, made.label) == ("/p", 3, "x")
    made = reg.create_from("b", {"path": "/q", "size": 0, "label": "y"})
    assert (made.path, made.size, made.label) == ("/q", 0, "y")


def test_create_from_without_required_setting_fails() -> None:
    reg: Registry[Backend] = Registry("seam")
    reg.add("b", Backend)
    with pytest.raises(TypeError):
        reg.create_from("b", {"path": ""})
