"""The registry: unknown names list the known ones, lazy imports, settings classes per entry."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tipqa.core.errors import ConfigError
from tipqa.core.registry import Registry
from tipqa.core.settings import Settings


@dataclass(frozen=True)
class BackendSettings(Settings):
    """Two settings."""

    size: int = 3
    label: str = "x"


class Backend:
    """A backend constructed from its settings and a runtime path."""

    def __init__(self, settings: BackendSettings, path: str) -> None:
        self.settings, self.path = settings, path


def registry() -> Registry[Backend]:
    reg: Registry[Backend] = Registry("token index")
    reg.add("tantivy", Backend, BackendSettings)
    reg.add("elasticsearch", "nowhere.module:Thing", "nowhere.module:Settings")
    return reg


def test_unknown_name_lists_known_ones() -> None:
    reg = registry()
    with pytest.raises(ConfigError) as info:
        reg.resolve("lucene")
    message = str(info.value)
    assert "token index" in message and "'lucene'" in message
    assert "known: elasticsearch, tantivy" in message
    assert reg.names == ["elasticsearch", "tantivy"]


def test_registering_a_name_twice() -> None:
    reg = registry()
    reg.add("tantivy", Backend, BackendSettings)
    with pytest.raises(ConfigError, match="already registered"):
        reg.add("tantivy", "other:Thing", BackendSettings)


def test_module_is_imported_only_when_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "tipqa_lazy_probe_module"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            """
            from dataclasses import dataclass
            from tipqa.core.settings import Settings

            @dataclass(frozen=True)
            class ProbeSettings(Settings):
                value: int = 1

            class Probe:
                def __init__(self, settings):
                    self.value = settings.value
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    reg: Registry[object] = Registry("probe")
    reg.add("probe", f"{name}:Probe", f"{name}:ProbeSettings")
    assert name not in sys.modules
    with pytest.raises(ConfigError):
        reg.resolve("other")
    assert name not in sys.modules
    settings = reg.parse("probe", "probe", {"value": "5"})
    assert name in sys.modules
    assert reg.create("probe", settings).value == 5
    assert reg.create("probe").value == 1


def test_the_modules_that_register_more_are_imported_on_the_first_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = "tipqa_registering_probe_module"
    reg: Registry[Backend] = Registry("probe", registered_by=(name,))
    (tmp_path / f"{name}.py").write_text(
        "from tests_registry_probe import REGISTRY\n"
        "REGISTRY.add('more', 'nowhere.module:Thing', 'nowhere.module:Settings')\n"
    )
    probe = type(sys)("tests_registry_probe")
    probe.REGISTRY = reg  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tests_registry_probe", probe)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    reg.add("tantivy", Backend, BackendSettings)
    assert name not in sys.modules
    assert reg.names == ["more", "tantivy"] and name in sys.modules
    with pytest.raises(ConfigError, match="already registered"):
        reg.add("more", Backend, BackendSettings)


def test_registering_does_not_import_a_missing_module() -> None:
    reg: Registry[object] = Registry("seam")
    reg.add("ghost", "tipqa_no_such_module_anywhere:Thing", BackendSettings)
    with pytest.raises(ModuleNotFoundError):
        reg.resolve("ghost")


def test_parse_is_strict_and_names_the_backend() -> None:
    reg = registry()
    made = reg.create("tantivy", reg.parse("tantivy", "token_index", {"size": "7"}), path="/p")
    assert (made.settings.size, made.settings.label, made.path) == (7, "x", "/p")
    with pytest.raises(
        ConfigError, match=r"\[token_index\] unknown key 'sise'; did you mean 'size'"
    ):
        reg.parse("tantivy", "token_index", {"sise": "7"})
    with pytest.raises(ConfigError, match="for token index 'tantivy'"):
        reg.parse("tantivy", "token_index", {"url": "http://x"})
    with pytest.raises(ConfigError, match=r"\[token_index\] size = 'big': expected an integer"):
        reg.parse("tantivy", "token_index", {"size": "big"})


def test_create_checks_the_settings_class() -> None:
    @dataclass(frozen=True)
    class Other(Settings):
        pass

    with pytest.raises(ConfigError, match="takes BackendSettings, got Other"):
        registry().create("tantivy", Other(), path="/p")
