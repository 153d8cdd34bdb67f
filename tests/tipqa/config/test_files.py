"""Config files are checked before Luigi reads them: what it cannot parse is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipqa.config.files import check_config_files, luigi_files
from tipqa.core.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "[judge]\nbackend = rules\n[build]\n[judge]\n",
            "line 4: section [judge] is written twice",
        ),
        ("[build]\nk1 = 20\nk2 = 3\nk1 = 30\n", "line 4: key 'k1' is written twice in [build]"),
        ("k1 = 20\n[build]\n", "line 1: 'k1 = 20' is outside any [section]"),
    ],
)
def test_what_luigi_cannot_parse_is_named(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / "luigi.cfg").write_text(text)
    with pytest.raises(ConfigError) as error:
        check_config_files([tmp_path / "luigi.cfg"])
    assert str(error.value).startswith(f"{tmp_path / 'luigi.cfg'}, {said}")


def test_a_section_in_two_files_is_fine_and_the_files_are_luigis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "luigi.cfg").write_text("[build]\nk1 = 20\n")
    (tmp_path / "more.cfg").write_text("[build]\nk1 = 30\n")
    check_config_files([tmp_path / "luigi.cfg", tmp_path / "more.cfg"])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LUIGI_CONFIG_PATH", str(tmp_path / "more.cfg"))
    assert tmp_path / "more.cfg" in luigi_files() and Path("luigi.cfg") in luigi_files()
