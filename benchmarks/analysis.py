"""The token index's text analysis and phrase counting on real text, with and without C.

    python -m benchmarks.analysis [--repeats 5]

On the real documents and questions of `../shared/data` (Wikipedia passages, Common Crawl
documents, TriviaQA evidence, a third of them with non-ASCII characters; the 10,000-document
demo world, all ASCII, where they are absent), each mode in its own process
(`TIPQA_PURE_PYTHON=1` for the Python one): MB/s of
`tantivy_analysis.analyse` (the build's Python share: prepared text and `repeats` terms) over
all documents, the ASCII ones and the others, best of `--repeats`; and the microseconds per
document of counting the answer aliases of a TriviaQA question in it, over 100 questions
(`tantivy_verify.PhraseCounter`: what a query does with each of its matches). The C speed-ups
are `tipqa.indexes.token_index.speedups`.
Writes results/analysis-<time>.json, and results/analysis.json and analysis.md (kept in git).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.common import (
    DEFAULT_WORKDIR,
    RESULTS,
    corpus_files,
    ensure_world,
    keep,
    save,
    table,
    world_questions,
)
from benchmarks.real_text import real_documents, real_questions
from tipqa.core.records import Question
from tipqa.indexes.token_index.speedups import PURE_PYTHON

QUESTIONS = 100


def _best(run: Callable[[], object], repeats: int) -> float:
    """The shortest of `repeats` timings of `run`, in seconds."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def demo_texts() -> list[str]:
    """The texts of the 10,000-document demo world (all ASCII), where there are no real ones."""
    from tipqa.sources.corpus.files import FileCorpus

    files = corpus_files(ensure_world(10_000, DEFAULT_WORKDIR))
    return [d.text for d in FileCorpus.of(files, progress=False)]


def demo_questions() -> list[Question]:
    """The first questions of the 10,000-document demo world."""
    return world_questions(ensure_world(10_000, DEFAULT_WORKDIR))[:QUESTIONS]


def child(repeats: int) -> dict[str, float]:
    """The measurements of this process's mode."""
    from tipqa.core.text import tokenize
    from tipqa.indexes.token_index import speedups
    from tipqa.indexes.token_index.tantivy_analysis import analyse, tokenization
    from tipqa.indexes.token_index.tantivy_verify import PhraseCounter

    blank = tokenization().blank
    texts = [d.text for d in real_documents()] or demo_texts()
    groups = {
        "all": texts,
        "ascii": [t for t in texts if t.lower().isascii()],
        "non-ascii": [t for t in texts if not t.lower().isascii()],
    }
    row: dict[str, float] = {"compiled": float(speedups.native() is not None)}
    for name, group in groups.items():
        if not group:
            continue
        megabytes = sum(len(t.encode()) for t in group) / 1e6

        def analyse_group(group: list[str] = group) -> object:
            return [analyse(t, blank) for t in group]

        seconds = _best(analyse_group, repeats)
        row[f"analyse_{name}_mb_s"] = round(megabytes / seconds, 1)
    counters = [
        PhraseCounter(list(dict.fromkeys(p for p in map(tuple, map(tokenize, q.aliases)) if p)))
        for q in real_questions(limit=QUESTIONS) or demo_questions()
    ]
    bodies = [t.encode() for t in texts]
    seconds = _best(lambda: [c(b) for c in counters for b in bodies], repeats)
    row["count_us_per_doc"] = round(seconds / max(len(bodies) * len(counters), 1) * 1e6, 2)
    row["real_text"] = float(bool(real_documents()))
    row["documents"] = len(texts)
    row["non_ascii_share"] = round(len(groups["non-ascii"]) / max(len(texts), 1), 3)
    row["phrases_per_question"] = round(sum(len(c.phrases) for c in counters) / len(counters), 1)
    return row


def main() -> None:
    """Run both modes, print and save the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        print(json.dumps(child(options.repeats)))
        return
    rows = []
    for mode, env in (("C", {}), ("pure Python", {PURE_PYTHON: "1"})):
        command = [sys.executable, "-m", "benchmarks.analysis", "--child"]
        command += ["--repeats", str(options.repeats)]
        output = subprocess.run(
            command, env={**os.environ, **env}, check=True, capture_output=True, text=True
        ).stdout
        rows.append({"mode": mode, **json.loads(output.strip().splitlines()[-1])})
    if not rows[0]["compiled"]:
        raise SystemExit("the C speed-ups are not compiled here (pip install -e . with a compiler)")
    ratios = {
        key: round(rows[0][key] / rows[1][key], 2) for key in rows[0] if key.startswith("analyse")
    }
    ratios["count"] = round(rows[1]["count_us_per_doc"] / rows[0]["count_us_per_doc"], 2)
    columns = ["mode", *[k for k in rows[0] if k.startswith(("analyse", "count"))]]
    text = table(rows, columns) + "\n\nC over pure Python (speed): " + json.dumps(ratios)
    print(text)
    path = save("analysis", {"rows": rows, "speedup": ratios}, options.results)
    facts = {
        k: rows[0][k] for k in ("real_text", "documents", "non_ascii_share", "phrases_per_question")
    }
    keep(
        path,
        f"# Token analysis on real text ({path.stem.split('-', 1)[1]})\n\n"
        f"{json.dumps(facts)}\n\n{text}\n",
    )


if __name__ == "__main__":
    main()
