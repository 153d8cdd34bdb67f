"""The explorer page in real headless Chromium, opened from disk as a researcher opens it."""

from __future__ import annotations

import configparser
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from explorer_support import synthetic_run
from tests_support import luigi_config, run_luigi
from webdriver import Browser, headless_chromium

from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.write import write_explorer

pytestmark = [pytest.mark.slow, pytest.mark.chromium]

HOSTILE = (
    '<script>window.tipqaPwned = "script";</script>'
    '<img src="x" onerror="window.tipqaPwned = \'onerror\'">'
    '<b onmouseover="window.tipqaPwned = 1">bold</b>'
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module (skipped without chromium and chromedriver)."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.skip("no chromium / chromedriver (Debian: apt-get install chromium chromium-driver)")
    with headless_chromium(chromium, driver) as session:
        yield session


def test_the_demo_build_s_page_shows_an_unanswerable_question_s_windows(
    browser: Browser, tmp_path: Path
) -> None:
    config = luigi_config(
        tmp_path,
        vector_index={"backend": "candidates"},
        build={"name": "t", "shard_size": "100", "k1": "20", "k2": "10"},  # few tasks
    )
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(config)
    parser.remove_option("vector_index", "kind")  # the candidate vector stage: no embedding
    with open(config, "w") as handle:
        parser.write(handle)
    result = run_luigi(config, "BuildReport")
    assert result.returncode == 0, result.stderr[-3000:]
    page = tmp_path / "outputs" / "t" / "report" / "explorer" / "index.html"
    browser.open(page.as_uri())
    browser.wait_for("return window.tipqaAllRows")
    browser.script(
        "var s = document.getElementById('f-label');"
        "s.value = String(Array.from(s.options).findIndex(o => o.text === 'unanswerable') - 1);"
        "s.dispatchEvent(new Event('change'));"
    )
    labels = browser.script(
        "return Array.from(document.querySelectorAll('#grid-space .grid-row'))"
        ".map(r => r.children[4].textContent);"
    )
    assert labels and set(labels) == {"unanswerable"}
    browser.click("#grid-space .grid-row")
    browser.wait_for("return document.querySelector('.token-stage .unit')")
    page_text = browser.text()
    assert "Why unanswerable" in page_text and "All no:" in page_text
    aliases = browser.script(
        "return Array.from(document.querySelectorAll('.chip.alias')).map(c => c.textContent);"
    )
    marked = browser.script(
        "return Array.from(document.querySelectorAll('.token-stage .window mark.alias'))"
        ".map(m => m.textContent);"
    )
    verdicts = browser.script(
        "return Array.from(document.querySelectorAll('.token-stage .verdict'))"
        ".map(v => v.textContent);"
    )
    assert verdicts and set(verdicts) == {"no"}
    assert marked and {m.lower() for m in marked} <= {a.lower() for a in aliases}
    browser.screenshot(tmp_path / "unanswerable-question.png")
    assert (tmp_path / "unanswerable-question.png").stat().st_size > 10_000


def test_corpus_html_and_script_show_as_text_and_run_nothing(
    browser: Browser, tmp_path: Path
) -> None:
    run, fetch = synthetic_run(tmp_path / "run", 8, hostile=HOSTILE)
    write_explorer(run, TextSource(fetch), tmp_path / "page")
    browser.open((tmp_path / "page" / "index.html").as_uri())
    browser.wait_for("return window.tipqaAllRows")
    for question in ("q000000", "q000001", "q000002"):
        browser.open((tmp_path / "page" / "index.html").as_uri() + f"#q={question}")
        browser.wait_for("return document.querySelector('.why-text')")
        text = browser.text()
        assert "<script>window.tipqaPwned" in text and 'onerror="window.tipqaPwned' in text
        injected = browser.script(
            "return document.querySelectorAll('main script, main img:not(.figure), main b').length"
        )
        assert injected == 0
        browser.script(
            "document.querySelectorAll('main *').forEach(e => "
            "e.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})));"
        )
        assert browser.script("return window.tipqaPwned === undefined") is True
    browser.screenshot(tmp_path / "hostile-question.png")
