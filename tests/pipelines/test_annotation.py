"""ExportAnnotation and AnnotationAgreement with the real `luigi` command on the small world."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.annotation_support import fill_csv, label_studio_export
from support.tests_support import luigi_config

from tipqa.annotation.items import AnnotationItem
from tipqa.core.jsonl import read_json, read_records

pytestmark = [pytest.mark.slow, pytest.mark.needs("sklearn", "krippendorff")]

SETTINGS = {"triplets": "40", "double": "10", "annotators": "3", "seed": "2", "bootstrap": "40"}


def run(config: Path, task: str) -> subprocess.CompletedProcess[str]:
    """`luigi --module pipelines.annotation TASK --local-scheduler` with `config`."""
    env = {**os.environ, "LUIGI_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "luigi", "--module", "pipelines.annotation", task]
    return subprocess.run(
        [*command, "--local-scheduler"],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )


def test_export_then_agreement_on_the_demo_world(tmp_path: Path) -> None:
    completed = tmp_path / "completed"
    config = luigi_config(
        tmp_path,
        annotation={**SETTINGS, "completed_dir": str(completed)},
        retcode={"missing_data": "20"},
    )
    exported = run(config, "ExportAnnotation")
    assert exported.returncode == 0, exported.stderr[-3000:]
    root = tmp_path / "outputs" / "t" / "annotation" / "dev"
    key = read_records(root / "key.jsonl", AnnotationItem)
    stats = read_json(root / "export.stats.json")
    assert len(key) == stats["counts"]["sampled"] > 10
    assert {i.final_label for i in key} == {"answerable", "unanswerable"}
    assert {i.stage for i in key} == {"token", "vector"}
    assert stats["counts"]["token_windows_recomputed"] == sum(i.stage == "token" for i in key)

    missing = run(config, "AnnotationAgreement")
    assert missing.returncode == 20, missing.stderr[-3000:]
    for name in ("annotator-01", "annotator-02", "annotator-03"):
        assert (
            f"completed annotation file {completed / name}.csv (or .xlsx, .json)" in missing.stderr
        )

    flipped = next(i for i in key if "annotator-01" in i.annotators)
    for name in ("annotator-01", "annotator-02", "annotator-03"):
        labels = {i.item_id: (i.judge_label, False, "") for i in key if name in i.annotators}
        if name == "annotator-01":
            labels[flipped.item_id] = ({"yes": "no", "no": "yes"}[flipped.judge_label], True, "x")
        if name == "annotator-02":
            label_studio_export(
                root / "label-studio" / f"{name}.json", completed / f"{name}.json", labels
            )
        else:
            fill_csv(root / "csv" / f"{name}.csv", completed / f"{name}.csv", labels)
    done = run(config, "AnnotationAgreement")
    assert done.returncode == 0, done.stderr[-3000:]
    report = read_json(root / "agreement" / "agreement.json")
    pairs = sum(len(i.annotators) for i in key)
    assert report["llm_human"]["pairs"] == pairs
    assert report["llm_human"]["agreement"]["value"] == pytest.approx(100 * (pairs - 1) / pairs)
    assert [d["item_id"] for d in report["disagreements"]] == [flipped.item_id]
    assert (root / "agreement" / "agreement.md").exists()
    assert all((root / "agreement" / name).exists() for name in report["figures"])
