"""A step is complete when its stats file records its fingerprint and its outputs exist."""

from __future__ import annotations

from pathlib import Path

from pipelines.base import StepTarget
from tipqa.core.jsonl import write_json
from tipqa.core.stats import SCHEMA_VERSION


def test_a_step_whose_output_was_deleted_is_not_complete(tmp_path: Path) -> None:
    stats, hub = tmp_path / "hub.stats.json", tmp_path / "hub"
    write_json(stats, {"fingerprint": "f1", "schema_version": SCHEMA_VERSION})
    hub.mkdir()
    assert StepTarget(stats, "f1", [hub]).exists()
    assert not StepTarget(stats, "f2", [hub]).exists(), "another fingerprint"
    hub.rmdir()
    assert not StepTarget(stats, "f1", [hub]).exists(), "the folder was deleted"
    assert StepTarget(stats, "f1").exists(), "a step whose stats file is its output"
