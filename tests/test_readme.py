"""The README: short, its links lead somewhere, and its install is the documentation's."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")
FENCE = re.compile(r"```bash\n(.*?)\n```", re.S)


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    targets = [target for target, _ in LINK.findall(README.read_text())]
    local = [target for target in targets if "://" not in target]
    assert local, "the README links into the documentation"
    missing = [target for target in local if not (ROOT / target).exists()]
    assert missing == []


def slug(heading: str) -> str:
    """A heading's anchor as MkDocs (and GitHub, for these headings) make it."""
    words = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"\s+", "-", words)


def test_every_anchor_of_the_readme_is_a_heading_of_its_page() -> None:
    for target, anchor in LINK.findall(README.read_text()):
        if not anchor or "://" in target:
            continue
        headings = re.findall(r"^#+ (.+)$", (ROOT / target).read_text(), re.M)
        assert anchor[1:] in {slug(heading) for heading in headings}, f"{target}{anchor}"


def test_the_readme_install_is_the_getting_started_install() -> None:
    readme_install = FENCE.findall(README.read_text())[0]
    guide = (ROOT / "docs" / "getting-started.md").read_text()
    assert readme_install in FENCE.findall(guide)


def test_the_readme_is_short() -> None:
    assert len(README.read_text().splitlines()) <= 250


def test_ci_runs_the_readme_test_command_right_after_the_readme_install() -> None:
    readme = README.read_text()
    install, *_ = FENCE.findall(readme)
    command = FENCE.findall(readme.split("Run the tests", 1)[1])[0]
    assert command == "python -m pytest"
    assert re.search(r"about \d+ minutes on two busy cores", readme), "the README says how long"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    dev = install.splitlines()[-2].split("#")[0].strip()
    assert dev == 'pip install -e ".[dev]"'
    installed = ci.index('pip install --quiet -e ".[dev]"')
    tests = [n for n, line in enumerate(ci) if line.startswith(("python -m pytest", "TIPQA"))]
    assert tests[0] > installed and not any(
        "pip install" in ci[n] for n in range(installed + 1, tests[0])
    )
    assert ci[tests[0]].split("#")[0].split() == ["TIPQA_EXTRA_SKIPS=$skips", *command.split()]
    assert "-m 'not slow'" in (ROOT / "pyproject.toml").read_text(), "the quick suite by default"
