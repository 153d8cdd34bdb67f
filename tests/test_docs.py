"""The documentation site: generated pages current, every page in the nav, runnable blocks run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tipqa import config_reference, rerun_table

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUNNABLE = re.compile(r"<!-- runnable -->\n```(\w+)\n(.*?)\n```", re.S)
RUN_IN_ORDER = ("getting-started.md", "python-api.md")
"""Pages whose runnable blocks run, one after the other, in one folder."""


def runnable_blocks(page: Path) -> list[tuple[str, str]]:
    """(language, code) of each block marked `<!-- runnable -->` on `page`."""
    return RUNNABLE.findall(page.read_text(encoding="utf-8"))


def test_the_configuration_reference_is_up_to_date() -> None:
    page = DOCS / "configuration" / "reference.md"
    text = page.read_text()
    assert config_reference.in_page(text, config_reference.reference()) == text, (
        "run: python -m tipqa.config_reference --write docs/configuration/reference.md"
    )


def test_the_record_schemas_are_up_to_date() -> None:
    page = DOCS / "outputs.md"
    text = page.read_text()
    assert config_reference.with_schemas(text) == text, (
        "run: python -m tipqa.config_reference --write-schemas docs/outputs.md"
    )


def test_the_rerun_table_is_up_to_date() -> None:
    page = DOCS / "configuration" / "reruns.md"
    text = page.read_text()
    assert rerun_table.in_page(text, rerun_table.table()) == text, (
        "run: python -m tipqa.rerun_table --write docs/configuration/reruns.md"
    )


def test_a_page_without_its_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="marker"):
        config_reference.in_page("# a page that lost its markers\n", "the reference")


def _nav_pages(entries: list) -> list[str]:
    pages = []
    for entry in entries:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_pages(config["nav"])
    pages = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))
    assert sorted(nav) == pages


def test_the_runnable_pages_have_runnable_blocks() -> None:
    for name in RUN_IN_ORDER:
        blocks = runnable_blocks(DOCS / name)
        assert blocks, f"{name} has no block marked <!-- runnable -->"
        assert {language for language, _ in blocks} <= {"bash", "python"}


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of the site whose mkdocs.yml is in `root`."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)


@pytest.mark.needs("mkdocs")
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    result = mkdocs_build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "architecture" / "index.html").exists()


@pytest.mark.needs("mkdocs")
def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copyfile(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    with open(tmp_path / "docs" / "index.md", "a") as page:
        page.write("\n[a page that is not there](nowhere.md)\n")
    result = mkdocs_build(tmp_path, tmp_path / "site")
    assert result.returncode != 0
    assert "nowhere.md" in result.stderr


@pytest.mark.slow
def test_the_runnable_blocks_run_against_the_demo(tmp_path: Path) -> None:
    shutil.copyfile(ROOT / "luigi.cfg", tmp_path / "luigi.cfg")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for name in RUN_IN_ORDER:
        for number, (language, code) in enumerate(runnable_blocks(DOCS / name), start=1):
            command = ["bash", "-euo", "pipefail", "-c", code]
            if language == "python":
                command = [sys.executable, "-c", code]
            result = subprocess.run(
                command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
            )
            assert result.returncode == 0, (
                f"{name}, runnable block {number} exited {result.returncode}:\n{code}\n"
                f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
            )
