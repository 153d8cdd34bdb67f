"""The end-of-run summary, read from the partitions' and the splits' stats files."""

from __future__ import annotations

from pathlib import Path

from partition_fixtures import INFO, build_splits

from tipqa.corpus_reading import CorpusReading
from tipqa.summary import summarize, write_summary


def test_the_summary_says_what_the_corpus_reader_skipped(tmp_path: Path) -> None:
    reading = CorpusReading(300, {"invalid_utf8": 1, "invalid_json": 2}, duplicate_ids=4)
    run = build_splits(tmp_path / "read", build={**INFO, "corpus_reading": reading.to_dict()})
    text = write_summary(run, ["dev", "train"])
    assert run.summary.read_text() == text
    assert (
        "- corpus: 300 documents read, 3 records skipped (invalid_json 2, invalid_utf8 1), "
        "4 duplicate ids\n"
    ) in text
    assert text.index("- split **") < text.index("- corpus: ")
    unrecorded = build_splits(tmp_path / "unrecorded")
    assert "- corpus:" not in summarize(unrecorded, ["dev", "train"])
