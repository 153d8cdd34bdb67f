"""What the corpus reader kept and skipped, read from a token index build's stats."""

from __future__ import annotations

from tipqa.dataset.corpus_reading import CorpusReading

STATS = {
    "counts": {
        "corpus.documents": 301,
        "corpus.duplicate_ids": 1,
        "corpus.utf8_replaced": 2,
        "documents": 300,
    },
    "errors": {"invalid_utf8": 1, "invalid_json": 3, "too_long": 0},
}


def test_the_reading_comes_from_the_reader_counts_and_the_errors() -> None:
    reading = CorpusReading.from_index_stats(STATS)
    assert reading == CorpusReading(301, {"invalid_json": 3, "invalid_utf8": 1}, 1, 2)
    assert reading.skipped_total == 4
    assert CorpusReading.from_dict(reading.to_dict()) == reading
    assert reading.to_dict()["skipped_total"] == 4


def test_the_summary_line_says_the_skips_by_kind_and_the_duplicate_ids() -> None:
    line = CorpusReading.from_index_stats(STATS).summary_line()
    assert line == (
        "301 documents read, 4 records skipped (invalid_json 3, invalid_utf8 1), "
        "1 duplicate id, 2 records with bytes that are not UTF-8 replaced"
    )
    assert CorpusReading(1, {}, 0).summary_line() == (
        "1 document read, 0 records skipped, 0 duplicate ids"
    )


def test_the_markdown_has_a_table_of_the_skips() -> None:
    text = CorpusReading.from_index_stats(STATS).markdown()
    assert "read 301 documents and skipped 4 records, by kind:" in text
    assert "| `invalid_json` | not valid JSON | 3 |" in text
    assert "| `invalid_utf8` | bytes that are not UTF-8 | 1 |" in text
    assert "Duplicate ids (documents whose id an earlier document has): 1." in text
    assert "replaced by U+FFFD: 2." in text
    clean = CorpusReading(5, {}, 0).markdown()
    assert "skipped none." in clean and "| Kind |" not in clean and "U+FFFD" not in clean


def test_the_ids_derived_for_repeated_ids_are_listed_in_the_summary_and_the_report() -> None:
    stats = {
        "counts": {"corpus.documents": 5, "corpus.duplicate_ids": 2},
        "errors": {},
        "info": {"corpus.renamed_ids": ["d2#2 (a.jsonl, line 3)", "d2#3 (b.jsonl, line 1)"]},
    }
    reading = CorpusReading.from_dict(CorpusReading.from_index_stats(stats).to_dict())
    assert reading.renamed_ids == ("d2#2 (a.jsonl, line 3)", "d2#3 (b.jsonl, line 1)")
    assert "2 duplicate ids (kept as d2#2, d2#3)" in reading.summary_line()
    text = reading.markdown()
    assert "`d2#2` (a.jsonl, line 3)" in text and "`d2#3` (b.jsonl, line 1)" in text


def test_repeated_ids_skipped_as_the_first_policy_says_are_not_called_kept() -> None:
    stats = {
        "counts": {"corpus.documents": 5, "corpus.duplicate_ids": 1},
        "errors": {"duplicate_id": 1},
    }
    reading = CorpusReading.from_index_stats(stats)
    assert reading.renamed_ids == () and "kept as" not in reading.summary_line()
    assert "a repeated id (later copies skipped" in reading.markdown()
