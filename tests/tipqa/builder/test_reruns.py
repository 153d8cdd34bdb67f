"""The rerun table says what changing a key really changes: the fingerprints agree with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.plan_support import base, changed, fingerprints, merged, write_inputs

from tipqa.builder.reruns import Row, rerun_rows, table

CASES = [
    ("judge", "model", "judge-b"),
    ("judge", "max_words", "500"),
    ("build", "k1", "50"),
    ("build", "k2", "5"),
    ("build", "shard_size", "3"),
    ("token_index", "ranking", "bm25-pool"),
    ("embedder", "query_prefix", "query: "),
    ("embedder", "passage_prefix", "passage: "),
    ("vector_index", "rerank", "50"),
    ("vector_index", "kind", "flat"),
    ("vector_index", "chunk_overlap_tokens", "8"),
    ("splits", "seed", "1"),
    ("hub", "pretty_name", "Another name"),
    ("annotation", "triplets", "10"),
    ("labelstudio", "project_prefix", "other"),
    ("evaluate", "threshold", "0.5"),
    ("audit", "sample", "0.5"),
    ("audit", "apply", "true"),
    ("audit", "verbatim", "false"),
]


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    """The table's rows (computed once)."""
    return rerun_rows()


def row_of(rows: list[Row], section: str, key: str) -> Row:
    """The row that names `key` of `[section]`."""
    found = [row for row in rows if row.section == f"[{section}]" and key in row.keys]
    assert len(found) == 1, f"[{section}] {key}: {len(found)} rows"
    return found[0]


@pytest.mark.parametrize(("section", "key", "value"), CASES, ids=[f"{s}.{k}" for s, k, _ in CASES])
def test_a_row_reruns_what_the_fingerprints_change(
    rows: list[Row], tmp_path: Path, section: str, key: str, value: str
) -> None:
    before = base(write_inputs(tmp_path))
    after = merged(before, section, **{key: value})
    compared = set(fingerprints(before))
    assert changed(before, after) == set(row_of(rows, section, key).reruns) & compared


def test_knobs_are_in_no_row(rows: list[Row]) -> None:
    keys = {(row.section, key) for row in rows for key in row.keys}
    for knob in (("[judge]", "timeout"), ("[judge]", "max_concurrency"), ("[build]", "name")):
        assert knob not in keys


def test_the_table_has_a_line_per_row_and_one_for_knobs(rows: list[Row]) -> None:
    lines = table().splitlines()
    assert len(lines) == 2 + len(rows) + 1
    assert lines[-1].startswith("| any key of kind *knob*")
