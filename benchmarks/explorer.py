"""The explorer page at scale: writing it, its size on disk, and its speed in headless Chromium.

For each size a synthetic finished build (`tests/explorer_support.py`: partition, shards,
splits, made-up documents for the window texts) is written under the work folder, then its
explorer. In headless Chromium (the tests' WebDriver client, `tests/webdriver.py`) the page is
opened from disk `--loads` times: milliseconds from navigation to the first rows drawn and to
all rows loaded; then a label filter, a text search, a sort by question and opening a question
(milliseconds in the page, from the change to the redrawn table or page).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import DEFAULT_WORKDIR, RESULTS, save, stopwatch, table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from explorer_support import synthetic_run
from webdriver import Browser, headless_chromium

from tipqa.report.explorer.collect import TextSource
from tipqa.report.explorer.write import write_explorer

FILTER = (
    "var s = document.getElementById('f-label'); s.value = '1';"
    "var t = performance.now(); s.dispatchEvent(new Event('change'));"
    "return performance.now() - t;"
)
SEARCH = (
    "var s = document.getElementById('f-label'); s.value = '';"
    "var i = document.getElementById('f-search'); i.value = 'person00012';"
    "var t = performance.now(); s.dispatchEvent(new Event('change'));"
    "return [performance.now() - t, document.getElementById('shown').textContent];"
)
SORT = (
    "document.getElementById('f-search').value = '';"
    "var t = performance.now(); document.querySelectorAll('#grid-head .sort')[1].click();"
    "return performance.now() - t;"
)


def folder_bytes(folder: Path) -> int:
    """The bytes of every file under `folder`."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def in_browser(browser: Browser, page: Path, loads: int, last_id: str) -> dict[str, float]:
    """Load times (median of `loads`) and interaction times of the page."""
    first, full = [], []
    for _ in range(loads):
        browser.open("about:blank")
        browser.open(page.as_uri())
        first.append(float(browser.wait_for("return window.tipqaFirstRows", 120.0, 0.02)))
        full.append(float(browser.wait_for("return window.tipqaAllRows", 120.0, 0.02)))
    filtered = float(browser.script(FILTER))
    searched, shown = browser.script(SEARCH)
    sorted_ms = float(browser.script(SORT))
    started = time.perf_counter()
    browser.script(f"location.hash = 'q={last_id}';")
    browser.wait_for("return document.querySelector('.why-text')", 120.0, 0.02)
    opened = (time.perf_counter() - started) * 1000
    return {
        "first_rows_ms": statistics.median(first),
        "all_rows_ms": statistics.median(full),
        "filter_ms": filtered,
        "search_ms": float(searched),
        "search_shown": shown,
        "sort_ms": sorted_ms,
        "open_question_ms": opened,
    }


def measure(sizes: list[int], workdir: Path, loads: int) -> dict[str, Any]:
    """Write each size's build and page, then time the page in Chromium."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        raise SystemExit("needs chromium, chromedriver: apt-get install chromium chromium-driver")
    rows = []
    with headless_chromium(chromium, driver) as browser:
        for size in sizes:
            root = workdir / f"explorer-{size}"
            shutil.rmtree(root, ignore_errors=True)
            with stopwatch() as built:
                run, fetch = synthetic_run(root / "run", size)
            with stopwatch() as written:
                counts = write_explorer(run, TextSource(fetch), root / "page")
            page = root / "page"
            total = folder_bytes(page)
            rows_bytes = sum(p.stat().st_size for p in (page / "data").glob("rows-*.js"))
            row = {
                "questions": size,
                "build_s": built["seconds"],
                "write_s": written["seconds"],
                "write_questions_per_s": size / written["seconds"],
                "page_mb": total / 1e6,
                "kb_per_1000": total / 1e3 / (size / 1000),
                "table_kb_per_1000": rows_bytes / 1e3 / (size / 1000),
                "files": sum(1 for _ in page.rglob("*") if _.is_file()),
                "texts_recomputed": counts["texts_recomputed"],
            }
            row.update(in_browser(browser, page / "index.html", loads, f"q{size - 1:06d}"))
            rows.append(row)
            print(table([row], list(row)), flush=True)
            shutil.rmtree(root, ignore_errors=True)
    return {"sizes": rows}


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--loads", type=int, default=3, help="page loads per size (median)")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    print("saved", save("explorer", measure(args.sizes, args.workdir, args.loads), args.results))


if __name__ == "__main__":
    main()
