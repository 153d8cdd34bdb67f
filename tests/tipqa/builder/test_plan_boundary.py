"""The build plan with a training order: which boundary setting changes which step."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from support.plan_support import FROM_TOKEN_JUDGE, base, fingerprints, merged, write_inputs

from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.core.errors import ConfigError, InputError
from tipqa.core.steps import Step
from tipqa.training_order.synthetic import write_megatron


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """A corpus file, a questions file and a judge prompt of our own."""
    return write_inputs(tmp_path)


@pytest.fixture
def dated(inputs: dict[str, Path], tmp_path: Path) -> dict[str, dict[str, str]]:
    """`base` with a training order (a tiny Megatron stream) and checkpoints."""
    write_megatron(np.arange(320, dtype=np.int64).reshape(10, 32) % 7, tmp_path / "document")
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_text('{"model": "a tokenizer\'s content"}')
    table = tmp_path / "order.csv"
    table.write_text("doc_id,first_step\nd1,3\n")
    inputs.update(stream=tmp_path / "document.bin", tokenizer=tokenizer, table=table)
    order = {
        "backend": "megatron",
        "path": str(tmp_path / "document"),
        "tokenizer": str(tokenizer),
        "seq_length": "32",
        "batch_size": "2",
    }
    return {**base(inputs), "training_order": order,
            "boundary": {"checkpoints": "0, 1, 2"}}  # fmt: skip


def dated_fingerprints(sections: dict[str, dict[str, str]]) -> dict[str, str]:
    """`fingerprints` and the training index and the boundary of pool dev."""
    plan = Plan(read_config(sections))
    out = fingerprints(sections)
    out[Step.BOUNDARY] = plan.boundary("dev").fingerprint
    if plan.training_index is not None:
        out[Step.TRAINING_INDEX] = plan.training_index.fingerprint
    return out


def dated_changes(before: dict, after: dict) -> set[str]:
    old, new = dated_fingerprints(before), dated_fingerprints(after)
    return {step for step in old.keys() | new.keys() if old.get(step) != new.get(step)}


AFTER_BOUNDARY = {Step.BOUNDARY, Step.HUB_FOLDER, Step.REPORT}
DATED_CHANGES = [
    ("checkpoints", "boundary", {"checkpoints": "0, 5, ..., 20"}, AFTER_BOUNDARY),
    ("match_tokens", "training_order", {"match_tokens": "4"},
     {Step.TRAINING_INDEX, *AFTER_BOUNDARY}),
    ("eod id", "training_order", {"eod_id": "0"}, {Step.TRAINING_INDEX, *AFTER_BOUNDARY}),
    ("batch size", "training_order", {"batch_size": "4"}, {Step.TRAINING_INDEX, *AFTER_BOUNDARY}),
    ("overlap (matching only)", "training_order", {"overlap": "0"}, AFTER_BOUNDARY),
    ("index knobs", "training_order",
     {"workers": "8", "range_mb": "1", "keys_per_round": "10", "index_dir": "/elsewhere"}, set()),
    ("judge model", "judge", {"model": "judge-b"}, {*FROM_TOKEN_JUDGE, Step.BOUNDARY}),
    ("judge all candidates", "boundary", {"judge_all_candidates": "true"},
     {*FROM_TOKEN_JUDGE, Step.BOUNDARY}),
    ("run name", "build", {"name": "other"}, set()),
]  # fmt: skip


@pytest.mark.parametrize(
    ("what", "section", "values", "expected"), DATED_CHANGES, ids=[c[0] for c in DATED_CHANGES]
)
def test_boundary_settings_change_exactly_the_steps_they_decide(
    dated: dict, what: str, section: str, values: dict[str, str], expected: set[str]
) -> None:
    assert dated_changes(dated, merged(dated, section, **values)) == expected, what


def test_the_training_index_is_the_stream_s_not_the_build_s(
    dated: dict, inputs: dict[str, Path]
) -> None:
    before = dated_fingerprints(dated)
    corpus = inputs["corpus"]
    corpus.write_text(corpus.read_text() + '{"id": "d2", "text": "Varnholt is a town."}\n')
    assert dated_fingerprints(dated)[Step.TRAINING_INDEX] == before[Step.TRAINING_INDEX]
    stream = inputs["stream"]
    stat = stream.stat()
    os.utime(stream, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    after = dated_fingerprints(dated)
    assert after[Step.TRAINING_INDEX] != before[Step.TRAINING_INDEX]
    inputs["tokenizer"].write_text('{"model": "another tokenizer"}')
    again = dated_fingerprints(dated)
    assert {s for s in after if after[s] != again[s]} == {Step.TRAINING_INDEX, *AFTER_BOUNDARY}
    with_id = merged(dated, "training_order", eod_id="0")
    before_id = dated_fingerprints(with_id)
    inputs["tokenizer"].write_text('{"model": "a third tokenizer"}')
    changed_id = dated_fingerprints(with_id)
    assert {s for s in before_id if before_id[s] != changed_id[s]} == AFTER_BOUNDARY


def test_a_table_order_has_no_index_and_counts_its_files(
    dated: dict, inputs: dict[str, Path]
) -> None:
    sections = {**dated, "training_order": {"backend": "table", "paths": str(inputs["table"])}}
    plan = Plan(read_config(sections))
    assert plan.training_index is None
    assert Step.TRAINING_INDEX not in plan.boundary("dev").record.inputs
    before = dated_fingerprints(sections)
    inputs["table"].write_text("doc_id,first_step\nd1,4\n")
    os.utime(inputs["table"], ns=(1, 2))
    after = dated_fingerprints(sections)
    assert {s for s in before if before[s] != after[s]} == AFTER_BOUNDARY


def test_without_a_training_order_nothing_of_the_boundary_counts(
    dated: dict, inputs: dict[str, Path]
) -> None:
    plain = base(inputs)
    assert fingerprints({**plain, "boundary": {"judge_all_candidates": "false"}}) == fingerprints(
        plain
    )
    assert Plan(read_config(plain)).training_index is None
    with pytest.raises(ConfigError, match=r"needs a \[training_order\]"):
        Plan(read_config(plain)).boundary("dev")
    without = fingerprints(plain)
    added = {step for step, fp in dated_fingerprints(dated).items() if without.get(step) != fp}
    assert added == {Step.TRAINING_INDEX, *AFTER_BOUNDARY}
    missing = merged(dated, "training_order", path=str(inputs["stream"].with_name("none")))
    with pytest.raises(InputError, match="no such file"):
        _ = Plan(read_config(missing)).training_index
