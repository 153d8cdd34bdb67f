"""Tests of the shared record-to-document parser."""

from __future__ import annotations

import logging

import pytest

from tipqa.core.errors import InputError
from tipqa.core.stats import StepStats
from tipqa.sources.corpus.base import (
    MISSING,
    RENAMED_LISTED,
    RENAMED_WARNINGS,
    WARNINGS_PER_KIND,
    DocumentParser,
    get_field,
)
from tipqa.sources.corpus.files import FileGroupSettings


def test_get_field_nested_flattened_and_missing() -> None:
    record = {"meta": {"set": "A", "deep": {"x": 1}}, "meta.flat": "F", "n": None}
    assert get_field(record, "meta.set") == "A"
    assert get_field(record, "meta.deep.x") == 1
    assert get_field(record, "meta.flat") == "F"
    assert get_field(record, "n") is None
    assert get_field(record, "meta.none") is MISSING
    assert get_field(record, "meta.set.x") is MISSING


def test_integer_ids_become_strings_and_booleans_are_rejected() -> None:
    stats = StepStats("corpus")
    parser = DocumentParser(stats, FileGroupSettings())
    doc = parser.parse({"id": 12, "text": "t"}, origin="f", path="f", line=1)
    assert doc is not None and doc.id == "12"
    assert parser.parse({"id": True, "text": "t"}, origin="f", path="f", line=2) is None
    assert stats.errors["invalid_id"] == 1


@pytest.mark.parametrize(("check", "expected"), [(True, 1), (False, 0)])
def test_duplicate_check_can_be_turned_off(check: bool, expected: int) -> None:
    stats = StepStats("corpus")
    parser = DocumentParser(stats, FileGroupSettings(), check_duplicates=check)
    for line in (1, 2):
        assert parser.parse({"id": "same", "text": "t"}, origin="f", path="f", line=line)
    assert stats.counts["duplicate_ids"] == expected


def test_warnings_are_limited_per_kind(caplog: pytest.LogCaptureFixture) -> None:
    parser = DocumentParser(StepStats("corpus"), FileGroupSettings())
    with caplog.at_level(logging.WARNING, logger="tipqa.sources.corpus.base"):
        for line in range(1, WARNINGS_PER_KIND + 10):
            parser.parse({"text": ""}, origin="f", path="f", line=line)
    assert parser.stats.errors["empty_text"] == WARNINGS_PER_KIND + 9
    assert len(caplog.records) == WARNINGS_PER_KIND + 1
    assert "f, line 1" in caplog.records[0].getMessage()


def test_empty_text_field_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="text_field"):
        DocumentParser(StepStats("corpus"), FileGroupSettings(text_field=""))


def test_a_repeated_id_is_kept_under_a_derived_id_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stats = StepStats("corpus")
    parser = DocumentParser(stats, FileGroupSettings())
    with caplog.at_level(logging.WARNING, logger="tipqa.sources.corpus.base"):
        ids = [
            parser.parse({"id": doc_id, "text": "t"}, origin="a.jsonl", path="a.jsonl", line=n)
            for n, doc_id in enumerate(["d2", "d2#2", "d2", "d2", "x"], start=1)
        ]
    assert [doc.id for doc in ids if doc is not None] == ["d2", "d2#2", "d2#3", "d2#4", "x"]
    assert stats.counts["duplicate_ids"] == 2 and stats.info["renamed_ids"] == [
        "d2#3 (a.jsonl, line 3)",
        "d2#4 (a.jsonl, line 4)",
    ]
    assert "'d2'" in caplog.text and "a.jsonl, line 3" in caplog.text and "d2#3" in caplog.text


def test_a_derived_id_that_a_later_document_has_is_derived_again() -> None:
    parser = DocumentParser(StepStats("corpus"), FileGroupSettings())
    ids = [
        parser.parse({"id": doc_id, "text": "t"}, origin="f", path="f", line=n)
        for n, doc_id in enumerate(["d", "d", "d#2"], start=1)
    ]
    assert [doc.id for doc in ids if doc is not None] == ["d", "d#2", "d#2#2"]


def test_duplicate_ids_first_skips_later_copies_and_refuse_raises() -> None:
    stats = StepStats("corpus")
    first = DocumentParser(stats, FileGroupSettings(), duplicate_ids="first")
    assert first.parse({"id": "d", "text": "t"}, origin="f", path="f", line=1) is not None
    assert first.parse({"id": "d", "text": "u"}, origin="f", path="f", line=2) is None
    assert stats.errors["duplicate_id"] == 1 and stats.counts["duplicate_ids"] == 1
    refuse = DocumentParser(StepStats("corpus"), FileGroupSettings(), duplicate_ids="refuse")
    refuse.parse({"id": "d", "text": "t"}, origin="f", path="f", line=1)
    with pytest.raises(InputError, match="id 'd' repeats an earlier document's") as error:
        refuse.parse({"id": "d", "text": "u"}, origin="f", path="f", line=2)
    assert error.value.path == "f" and error.value.line == 2


def test_warnings_of_repeated_ids_stop_after_a_few_then_say_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    parser = DocumentParser(StepStats("corpus"), FileGroupSettings())
    with caplog.at_level(logging.WARNING, logger="tipqa.sources.corpus.base"):
        for line in range(1, 40):
            parser.parse({"id": "same", "text": "t"}, origin="f", path="f", line=line)
    assert len(caplog.records) == RENAMED_WARNINGS + 1
    assert "further" in caplog.records[-1].getMessage()
    assert parser.stats.counts["duplicate_ids"] == 38
    assert len(parser.stats.info["renamed_ids"]) == RENAMED_LISTED
