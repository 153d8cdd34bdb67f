"""The explorer page on real text and at scale: its size on disk and its speed in browsers.

Real text (`../shared/data`, needed): a build of the first `--real-questions` llm-foundry
TriviaQA questions against the Wikipedia passages, the Common Crawl documents and the TriviaQA
evidence files (offline rules keywords and judge, FAISS flat over the bundled MiniLM), made
once under the work folder and reused. Its page is written as the report keeps it (texts
whole) and as the Hub's copy (excerpts but for the evidence): MB per 1,000 questions of each.

At scale: for each of `--sizes`, a synthetic finished build (`tests/support/explorer_support.py`)
whose windows and chunks have the lengths of the real build's (cycled) and its real text, and
the Hub's copy of its page: seconds to write, size on disk, files; then in headless Chromium
and Firefox ESR (the tests' clients), opened from disk, the median of `--loads` page loads of
the milliseconds to the first rows drawn and to all rows loaded, and the milliseconds in the
page of a label filter, a search (aliases, keywords and document ids too), a sort by question
and opening the last question.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEFAULT_WORKDIR,
    RESULTS,
    keep,
    luigi_command,
    luigi_env,
    save,
    stopwatch,
    table,
    write_luigi_config,
)
from benchmarks.real_text import SHARED_DATA, real_documents

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.explorer_support import Sizes, synthetic_run
from support.webdriver import Driver, headless_chromium

from tipqa.builder.assemble import load_config, token_index
from tipqa.builder.plan import Plan
from tipqa.report.explorer.collect import TextSource, collect_pool
from tipqa.report.explorer.store import EXCERPTS, WHOLE
from tipqa.report.explorer.write import write_explorer

FILTER = (
    "var s = document.getElementById('f-label'); s.value = 'unanswerable';"
    "var t = performance.now(); s.dispatchEvent(new Event('change'));"
    "return performance.now() - t;"
)
SEARCH = (
    "var s = document.getElementById('f-label'); s.value = '';"
    "document.getElementById('f-search').value = 'person00012';"
    "var t = performance.now(); s.dispatchEvent(new Event('change'));"
    "return [performance.now() - t, document.getElementById('shown').textContent];"
)
SORT = (
    "document.getElementById('f-search').value = '';"
    "var t = performance.now(); document.querySelectorAll('#grid-head .sort')[1].click();"
    "return performance.now() - t;"
)
OPEN = "window.tipqaOpening = performance.now(); location.hash = 'q={}';"
OPENED = "return window.tipqaQuestionDrawn > window.tipqaOpening"


def folder_bytes(folder: Path) -> int:
    """The bytes of every file under `folder`."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def real_run(workdir: Path, questions: int) -> Path:
    """The real-text build's config (built under `workdir` if not yet)."""
    data = SHARED_DATA
    if not (data / "corpus").is_dir():
        raise SystemExit(f"needs the real samples in {data} (set TIPQA_SHARED_DATA)")
    sections = {
        "build": {"name": f"real-{questions}", "shard_size": "200", "k1": "100", "k2": "10"},
        "pool.dev": {
            "source": "llm-foundry-jsonl",
            "paths": f'["{data / "triviaqa" / "llm-foundry-triviaqa-3000.jsonl"}"]',
            "limit": str(questions),
        },
        "splits": {"test_pool": "dev", "train_pool": ""},
        "corpus": {"source": "files"},
        "corpus.passages": {
            "paths": f'["{data / "corpus" / "wikipedia-passages-1000.jsonl"}"]',
            "text_field": "contents",
        },
        "corpus.web": {"paths": f'["{data / "corpus" / "web-cc"}"]'},
        "corpus.evidence": {
            "paths": f'["{data / "triviaqa" / "official-sample" / "evidence"}"]',
            "format": "text",
        },
        "token_index": {"backend": "tantivy"},
        "embedder": {"backend": "sentence-transformers", "model": "all-MiniLM-L6-v2"},
        "vector_index": {"backend": "faiss", "kind": "flat"},
        "keywords": {"backend": "rules"},
        "judge": {"backend": "rules"},
    }
    config = write_luigi_config(workdir / f"explorer-real-{questions}", sections)
    splits = config.parent / "outputs" / f"real-{questions}" / "splits" / "stats.json"
    if not splits.is_file():
        log = config.parent / "luigi.log"
        with open(log, "wb") as handle:
            done = subprocess.run(
                luigi_command("MakeSplits"),
                cwd=config.parent,
                env=luigi_env(config),
                stdout=handle,
                stderr=subprocess.STDOUT,
                check=False,
            )
        if done.returncode != 0:
            raise SystemExit(f"the real-text build failed: {log}")
    return config


def on_real_text(workdir: Path, questions: int) -> tuple[dict[str, Any], Sizes]:
    """MB per 1,000 questions of both copies of the real build's page, and its text sizes."""
    config = load_config(str(real_run(workdir, questions)))
    run = config.layout()
    plan = Plan(config)
    fetch = token_index(plan.token_index, plan.layout).get
    row: dict[str, Any] = {"questions": questions}
    for name, form in (("report", WHOLE), ("hub", EXCERPTS)):
        out = workdir / f"explorer-real-{questions}" / name
        with stopwatch() as written:
            counts = write_explorer(run, TextSource(fetch), out, form=form)
        row[f"{name}_mb_per_1000"] = folder_bytes(out) / 1e6 / (counts["questions"] / 1000)
        row[f"{name}_write_s"] = written["seconds"]
        row["questions"] = counts["questions"]
    windows, chunks = [], []
    for item in collect_pool("dev", run.pool("dev"), {}, TextSource(fetch)):
        details = item.details
        windows += [len(w["text"]) for d in details["token"] for w in d["windows"] if w["text"]]
        chunks += [len(c["text"]) for c in details["vector"]]
    row["window_chars_mean"] = statistics.mean(windows)
    row["chunk_chars_mean"] = statistics.mean(chunks)
    filler = "\n\n".join(d.text for d in real_documents())
    return row, Sizes(filler=filler, windows=windows, chunks=chunks)


def in_browser(browser: Driver, page: Path, loads: int, last_id: str) -> dict[str, Any]:
    """Load times (median of `loads`) and interaction times of the page."""
    first, full = [], []
    for _ in range(loads):
        browser.open("about:blank")
        browser.open(page.as_uri())
        first.append(float(browser.wait_for("return window.tipqaFirstRows", 600)))
        full.append(float(browser.wait_for("return window.tipqaAllRows", 600)))
    filtered = float(browser.script(FILTER))
    browser.wait_for("return window.tipqaSearchReady", 600)
    searched, shown = browser.script(SEARCH)
    sorted_ms = float(browser.script(SORT))
    browser.script(OPEN.format(last_id))
    browser.wait_for(OPENED, 120)
    opened = float(browser.script("return window.tipqaQuestionDrawn - window.tipqaOpening"))
    return {
        "first_rows_ms": statistics.median(first),
        "all_rows_ms": statistics.median(full),
        "filter_ms": filtered,
        "search_ms": float(searched),
        "search_shown": shown,
        "sort_ms": sorted_ms,
        "open_question_ms": opened,
    }


def browsers(names: list[str], downloads: Path) -> Iterator[tuple[str, AbstractContextManager]]:
    """The browsers asked for that are installed, each as a context that starts it."""
    for name in names:
        if name == "chromium":
            chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
            if chromium and driver:
                yield name, headless_chromium(chromium, driver, downloads)
        elif firefox := shutil.which("firefox-esr") or shutil.which("firefox"):
            from support.bidi import headless_firefox

            yield name, headless_firefox(firefox, downloads)


def at_scale(
    sizes: list[int], text: Sizes, workdir: Path, loads: int, engines: list[str]
) -> list[dict[str, Any]]:
    """Write each size's build and its Hub copy of the page, then time the page in browsers."""
    rows = []
    for size in sizes:
        root = workdir / f"explorer-{size}"
        shutil.rmtree(root, ignore_errors=True)
        with stopwatch() as built:
            run, fetch = synthetic_run(root / "run", size, sizes=text)
        with stopwatch() as written:
            write_explorer(run, TextSource(fetch), root / "page", form=EXCERPTS)
        page = root / "page"
        total = folder_bytes(page)
        common = {
            "questions": size,
            "build_s": built["seconds"],
            "write_s": written["seconds"],
            "page_mb": total / 1e6,
            "mb_per_1000": total / 1e6 / (size / 1000),
            "files": sum(1 for p in page.rglob("*") if p.is_file()),
        }
        for engine, start in browsers(engines, root):
            with start as browser:
                row = {"browser": engine, **common}
                row.update(in_browser(browser, page / "index.html", loads, f"q{size - 1:06d}"))
            rows.append(row)
            print(table([row], list(row)), flush=True)
        shutil.rmtree(root, ignore_errors=True)
    return rows


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--real-questions", type=int, default=1_000)
    parser.add_argument("--loads", type=int, default=3, help="page loads per size (median)")
    parser.add_argument("--browsers", nargs="+", default=["chromium", "firefox"])
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    real, text = on_real_text(args.workdir, args.real_questions)
    print(table([real], list(real)), flush=True)
    rows = at_scale(args.sizes, text, args.workdir, args.loads, args.browsers)
    columns = [
        "browser", "questions", "write_s", "page_mb", "mb_per_1000", "files", "first_rows_ms",
        "all_rows_ms", "filter_ms", "search_ms", "sort_ms", "open_question_ms",
    ]  # fmt: skip
    markdown = "\n\n".join(
        [
            "Real text, both copies of the page:",
            table([real], list(real)),
            "At scale, the Hub's copy (windows and chunks of the real text's sizes):",
            table(rows, columns),
        ]
    )
    keep(save("explorer", {"real_text": real, "sizes": rows}, args.results), markdown + "\n")


if __name__ == "__main__":
    main()
