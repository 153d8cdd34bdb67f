"""Tests of the shared record-to-document parser."""

from __future__ import annotations

import logging

import pytest

from tipqa.core.stats import StepStats
from tipqa.sources.corpus.base import MISSING, WARNINGS_PER_KIND, DocumentParser, get_field
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
