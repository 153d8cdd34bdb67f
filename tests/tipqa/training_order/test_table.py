"""The `table` training order: doc_id -> first_step from Parquet, CSV or JSON lines."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tipqa.core.errors import ConfigError, InputError
from tipqa.core.settings import parse
from tipqa.training_order.base import TRAINING_ORDERS, WantedSpan
from tipqa.training_order.table import TableOrder, TableOrderSettings


def no_fetch(ids: list[str]) -> dict:
    raise AssertionError("a table needs no documents")


def test_table_from_three_formats(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("doc_id,first_step\nd1,10\nd2,0\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"doc_id": "d3", "first_step": 7}\n', encoding="utf-8")
    pq.write_table(
        pa.table({"doc_id": ["d1", "d4"], "first_step": [4, 99]}), tmp_path / "c.parquet"
    )
    order = TableOrder(TableOrderSettings(paths=(str(tmp_path),)))
    spans = [WantedSpan(f"s{i}", f"d{i}", "any text") for i in range(1, 6)]
    found = order.first_steps(spans, no_fetch)
    assert {k: v.step for k, v in found.items()} == {
        "s1": 4, "s2": 0, "s3": 7, "s4": 99, "s5": None,
    }  # fmt: skip
    assert {v.matched for v in found.values()} == {"table"}
    assert order.stats.counts["repeated_documents"] == 1 and order.stats.counts["rows"] == 5
    assert order.stats.counts["spans_not_found"] == 1


@pytest.mark.parametrize(
    ("content", "line", "field", "message"),
    [
        ("doc_id,first_step\nd1,ten\n", 2, "first_step", "whole number of steps"),
        ("doc_id,first_step\nd1,-3\n", 2, "first_step", "whole number of steps"),
        ("doc_id,first_step\nd1,3\n,4\n", 3, "doc_id", "missing or empty document id"),
        ("doc_id,first_step\nd1,3,9\n", 2, None, "3 fields, the header has 2"),
    ],
)
def test_bad_rows_name_file_line_and_field(
    tmp_path: Path, content: str, line: int, field: str | None, message: str
) -> None:
    path = tmp_path / "t.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message) as info:
        TableOrder(TableOrderSettings(paths=(str(path),)))
    assert (info.value.path, info.value.line, info.value.field) == (str(path), line, field)


def test_column_names_and_settings(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": 12, "step": 3.0}\n', encoding="utf-8")
    settings = parse(
        TableOrderSettings,
        "training_order",
        {"paths": str(path), "doc_field": "id", "step_field": "step"},
    )
    assert TableOrder(settings).steps == {"12": 3}
    with pytest.raises(ConfigError, match="paths"):
        TableOrder(TableOrderSettings())
    assert TRAINING_ORDERS.resolve("table") is TableOrder
