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
from support import docs_check, docstring_check

from tipqa.__main__ import COMMANDS
from tipqa.builder import reruns as rerun_table
from tipqa.config import reference as config_reference
from tipqa.core.errors import InputError

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
        "run: python -m tipqa.config.reference --write docs/configuration/reference.md"
    )


def test_every_row_of_the_reference_has_its_five_cells() -> None:
    rows = [row for row in config_reference.reference().splitlines() if row.startswith("| `")]
    assert any("int \\| None" in row for row in rows)
    for row in rows:
        assert len(re.split(r"(?<!\\)\|", row.strip())) == 7, row


def test_the_record_schemas_are_up_to_date() -> None:
    page = DOCS / "outputs.md"
    text = page.read_text()
    assert config_reference.with_schemas(text) == text, (
        "run: python -m tipqa.config.reference --write-schemas docs/outputs.md"
    )


def test_the_rerun_table_is_up_to_date() -> None:
    page = DOCS / "configuration" / "reruns.md"
    text = page.read_text()
    assert rerun_table.in_page(text, rerun_table.table()) == text, (
        "run: python -m tipqa.builder.reruns --write docs/configuration/reruns.md"
    )


def test_every_command_and_configuration_of_the_docs_is_the_code_s() -> None:
    report = docs_check.check_pages()
    assert report.problems == []
    assert report.counts["shell blocks checked"] >= 20
    assert report.counts["config blocks checked"] >= 9
    assert all(reason for _, reason in report.skipped), "a skipped block says why"


def copy_of_the_docs(folder: Path) -> Path:
    """A copy of README.md and docs/ under `folder` (the root of a drifted copy)."""
    shutil.copytree(DOCS, folder / "docs")
    shutil.copyfile(ROOT / "README.md", folder / "README.md")
    return folder


DRIFTS = {
    "a renamed task parameter": ("docs/publishing.md", "--repo-id you/", "--repository-id you/"),
    "an unknown task": ("README.md", "pipelines CreateDataset --local", "pipelines Create --local"),
    "a module that is not there": (
        "docs/scoring.md",
        "python -m tipqa.evaluate outputs/demo/splits/test",
        "python -m tipqa.evaluation outputs/demo/splits/test",
    ),
    "a flag the module does not take": ("docs/scoring.md", "--trials 10000", "--trial-count 1"),
    "an inline comment in a config block": (
        "docs/boundary.md",
        "backend = megatron\npath",
        "backend = megatron        # or table\npath",
    ),
    "an unknown config key": ("docs/backends/local-servers.md", "max_words = 7000", "max_word = 7"),
    "an extra pyproject.toml lacks": (
        "docs/annotation.md",
        '".[annotation,labelstudio]"',
        '".[annotation,label-studio]"',
    ),
    "a program that is gone": ("README.md", "hf download you/", "huggingface-cli download you/"),
    "an option the program lacks": ("README.md", "--repo-type dataset", "--repository dataset"),
    "a task group a build does not write": (
        "README.md",
        "--tasks tip_triviaqa ",
        "--tasks tip_triviaqa,tip_triviaqa_checkpoints ",
    ),
    "a tipqa command that is not there": ("docs/scoring.md", "tipqa lmeval-task", "tipqa lmeval"),
    "a luigid flag that is not there": ("docs/troubleshooting.md", "--state-path", "--statepath"),
    "an unmarked block that cannot be checked": (
        "docs/backends/elasticsearch.md",
        "<!-- docs-check: skip (starts a Docker container) -->\n",
        "",
    ),
    "a bad flag in inline code": ("docs/scoring.md", "--k 10 100", "--depth 10 100"),
    "a bad flag of a tipqa command in inline code": (
        "docs/getting-started.md",
        "tipqa build --workers 4",
        "tipqa build --task",
    ),
}


@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_each_kind_of_drift_fails_the_check(drift: str, tmp_path: Path) -> None:
    name, before, after = DRIFTS[drift]
    root = tmp_path / "docs-root"
    (root / "docs").mkdir(parents=True)
    source = (ROOT / name).read_text()
    assert before in source, f"{name} no longer holds {before!r}: update the drift"
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(source)
    if name != "README.md":
        (root / "README.md").write_text("# an empty README\n")
    assert docs_check.check_pages(root).problems == []
    (root / name).write_text(source.replace(before, after, 1))
    problems = docs_check.check_pages(root).problems
    assert problems, f"{drift}: the check found nothing"


def test_every_dotted_name_of_a_docstring_or_page_names_something() -> None:
    assert docstring_check.stale_names() == []


def test_a_dotted_name_that_names_nothing_is_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("`tipqa.core.a.Kept.check` and `tipqa.core.a.moved()`\n")
    (tmp_path / "tipqa" / "core").mkdir(parents=True)
    (tmp_path / "tipqa" / "core" / "a.py").write_text(
        '"""Records: see `tipqa.core.a.Kept`, not `tipqa.core.b.Gone`."""\n'
        "from tipqa.core.c import moved\n\n\n"
        "class Kept:\n    def check(self) -> None: ...\n"
    )
    assert docstring_check.stale_names(tmp_path) == [
        "tipqa/core/a.py:1: tipqa.core.b.Gone",
        "README.md: tipqa.core.a.moved",
    ]


def test_a_page_without_its_markers_is_refused() -> None:
    with pytest.raises(InputError, match="marker"):
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


@pytest.fixture(scope="module")
def ran_pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A fresh folder with the demo's luigi.cfg after the runnable blocks ran in it, in order.

    Returns the folder and one message per block that failed. The first block is the demo
    build, which the check of the documented outputs reads too (one build for both).
    """
    folder = tmp_path_factory.mktemp("pages")
    shutil.copyfile(ROOT / "luigi.cfg", folder / "luigi.cfg")
    (folder / "tmp").mkdir()
    # TMPDIR: Luigi's lock (one `luigi` per command line) in the folder, not the machine's
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TMPDIR": str(folder / "tmp")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    failures = []
    for name in RUN_IN_ORDER:
        for number, (language, code) in enumerate(runnable_blocks(DOCS / name), start=1):
            command = ["bash", "-euo", "pipefail", "-c", code]
            if language == "python":
                command = [sys.executable, "-c", code]
            result = subprocess.run(
                command, cwd=folder, env=env, capture_output=True, text=True, timeout=900
            )
            if result.returncode != 0:
                failures.append(
                    f"{name}, runnable block {number} exited {result.returncode}:\n{code}\n"
                    f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
                )
    return folder, failures


@pytest.mark.slow
def test_the_runnable_blocks_run_against_the_demo(ran_pages: tuple[Path, list[str]]) -> None:
    assert ran_pages[1] == []


@pytest.mark.slow
def test_every_output_the_pages_name_is_written_by_the_demo_build(
    ran_pages: tuple[Path, list[str]], tmp_path: Path
) -> None:
    run = ran_pages[0] / "outputs" / "demo"
    report = docs_check.check_outputs(run)
    assert report.problems == []
    assert report.counts["outputs checked"] >= 30
    drifted = copy_of_the_docs(tmp_path)
    page = drifted / "docs" / "outputs.md"
    page.write_text(page.read_text().replace("  summary.md  ", "  summaries.md"))
    assert any(
        "summaries.md" in problem for problem in docs_check.check_outputs(run, drifted).problems
    )


@pytest.mark.slow
def test_tipqa_build_is_the_readme_s_build(ran_pages: tuple[Path, list[str]]) -> None:
    folder = ran_pages[0]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TMPDIR": str(folder / "tmp")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "tipqa", "build"]
    result = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (folder / "outputs" / "demo" / "summary.md").read_text() in result.stdout


def test_getting_started_names_every_tipqa_command() -> None:
    text = (DOCS / "getting-started.md").read_text()
    missing = [name for name in COMMANDS if f"`{name}`" not in text]
    assert not missing, f"docs/getting-started.md does not name: {missing}"
