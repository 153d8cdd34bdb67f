"""The build report: outcome funnel and answerable share by keyword-matching documents."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image
import pytest
from support.partition_fixtures import DEV, INFO, build_splits

from tipqa.core.errors import InputError
from tipqa.core.fingerprint import StepRecord
from tipqa.core.jsonl import read_json, write_json
from tipqa.core.layout import RunLayout
from tipqa.core.records import LabeledQuestion
from tipqa.core.steps import Step
from tipqa.dataset.corpus_reading import CorpusReading
from tipqa.report.build import (
    MATCH_BINS,
    match_bin,
    match_shares,
    render_markdown,
    write_report,
)


def row(label: str, matches: int | None) -> LabeledQuestion:
    return LabeledQuestion("q", "Q?", "A", ["A"], label, "token", "r", [], matches, None)


def test_match_bins_cover_every_count_once() -> None:
    assert [match_bin(n) for n in (0, 1, 2, 10, 11, 100, 101, 1_000, 1_001)] == [
        "0", "1", "2-10", "2-10", "11-100", "11-100", "101-1,000", "101-1,000", "1,001-10,000"
    ]  # fmt: skip
    assert match_bin(10_000) == "1,001-10,000" and match_bin(10**9) == ">10,000"
    assert match_bin(None) == "unknown"
    for count in range(0, 20_000, 7):
        assert sum(b.holds(count) for b in MATCH_BINS) == 1


def test_answerable_share_per_bin() -> None:
    rows = [row("answerable", 1), row("answerable", 1), row("unanswerable", 1)]
    rows += [row("unanswerable", 0), row("answerable", 50), row("discarded", 500)]
    shares = {s["bin"]: s for s in match_shares(rows)}
    assert shares["1"]["share"] == pytest.approx(2 / 3)
    assert shares["0"]["share"] == 0.0 and shares["11-100"]["share"] == 1.0
    assert shares["101-1,000"]["share"] is None
    assert "unknown" not in shares
    assert match_shares([row("answerable", None)])[-1] == {
        "bin": "unknown", "answerable": 1, "unanswerable": 0, "share": 1.0
    }  # fmt: skip


def test_report_files(tmp_path: Path) -> None:
    reading = CorpusReading(120, {"invalid_json": 1, "missing_text": 2}, duplicate_ids=1)
    run = build_splits(tmp_path, per_label=3, build={**INFO, "corpus_reading": reading.to_dict()})
    out = run.report
    stats = write_report(run, StepRecord(Step.REPORT, {}))
    assert stats.counts["test.questions"] == DEV["answerable"] + DEV["unanswerable"]
    for name in ("funnel.png", "matches.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        height, width, _ = matplotlib.image.imread(out / name).shape
        assert height > 200 and width > 400
    data = read_json(out / "report.json")
    assert data["funnel"]["pools"]["dev"]["to_vector"] == 4 + 3 + 1
    assert data["funnel"]["splits"]["test"]["unanswerable_vector"] == 4
    test_shares = {s["bin"]: s for s in data["matches"]["test"]}
    assert sum(s["answerable"] for s in test_shares.values()) == DEV["answerable"]
    text = (out / "report.md").read_text()
    assert "| dev | 16 | 6 | 2 | 0 | 8 | 3 | 4 | 1 |" in text
    assert "| test | 13 | 6 | 3 | 4 |" in text
    assert "![Outcomes per stage](funnel.png)" in text and "(matches.png)" in text
    assert "**Warning: the judge of this build was offline rules" in text
    assert "Split `validation`:" in text
    assert read_json(out / "report.stats.json")["step"] == "report"
    assert data["corpus"] == reading.to_dict()
    assert "## Corpus records" in text and "| `missing_text` | no text field | 2 |" in text
    assert "read 120 documents and skipped 3 records" in text
    assert "Duplicate ids (documents whose id an earlier document has): 1." in text
    assert "## Corpus records" not in render_markdown({**data, "corpus": None})


def test_report_needs_the_splits(tmp_path: Path) -> None:
    record = StepRecord(Step.REPORT, {})
    with pytest.raises(InputError, match="no stats file"):
        write_report(RunLayout(tmp_path / "nowhere"), record)
    bad = RunLayout(tmp_path / "bad")
    bad.splits.mkdir(parents=True)
    bad.splits_stats.write_text('{"schema_version": 1, "info": {}}')
    with pytest.raises(InputError, match="not a split statistics file"):
        write_report(bad, record)


def test_the_report_counts_the_questions_left_without_keywords_with_a_hint(
    tmp_path: Path,
) -> None:
    run = build_splits(tmp_path, per_label=3)
    stats = read_json(run.splits_stats)
    stats["info"]["pools"]["dev"]["no_keywords"] = 5
    write_json(run.splits_stats, stats)
    write_report(run, StepRecord(Step.REPORT, {}))
    text = (run.report / "report.md").read_text()
    assert "Questions left without keywords" in text and "| dev | 5 of 16 |" in text
    assert "an LLM keyword extractor" in text
    assert read_json(run.report / "report.json")["no_keywords"] == {"dev": 5, "train": 0}
