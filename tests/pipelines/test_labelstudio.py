"""PushAnnotation, PullAnnotation and AnnotationAgreement with the real `luigi` command.

The export is the golden key's (written where ExportAnnotation would, with its stats file, so
Luigi does not build a partition); Label Studio is the session's real one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from tests_support import luigi_config

from tipqa.annotation.export import write_exports
from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.sampling import Sample, SamplingSettings
from tipqa.jsonl import read_json, read_records
from tipqa.stats import StageStats

KEY = Path(__file__).resolve().parents[1] / "data" / "annotation" / "golden-key.jsonl"
ANNOTATORS = ["annotator-01", "annotator-02", "annotator-03"]


def run(config: Path, module: str, task: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    """`luigi --module MODULE TASK --local-scheduler` with `config`, from its folder."""
    command = [sys.executable, "-m", "luigi", "--module", module, task, "--local-scheduler"]
    return subprocess.run(
        [*command, "--no-lock"],
        cwd=config.parent,
        env={**os.environ, "LUIGI_CONFIG_PATH": str(config), "HF_HUB_OFFLINE": "1", **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def golden_export(tmp_path: Path) -> tuple[AnnotationLayout, list[AnnotationItem]]:
    """The golden key exported for three annotators where the demo run `t` keeps it."""
    items = read_records(KEY, AnnotationItem)
    out = AnnotationLayout.of(tmp_path / "outputs" / "t", "dev")
    write_exports(Sample(items, ANNOTATORS), SamplingSettings(8, 4, 3), out, StageStats("t"))
    StageStats("annotation_export").write(out.stats)
    return out, items


def _config(tmp_path: Path, labelstudio: dict[str, str]) -> Path:
    return luigi_config(
        tmp_path,
        annotation={
            "annotators": "3",
            "bootstrap": "20",
            "completed_dir": str(tmp_path / "completed"),
        },
        labelstudio=labelstudio,
    )


@pytest.mark.slow
def test_a_misspelt_labelstudio_key_fails_the_task_naming_it(tmp_path: Path) -> None:
    golden_export(tmp_path)
    config = _config(tmp_path, {"projekt_prefix": "x"})
    done = run(config, "pipelines.labelstudio", "PushAnnotation", {})
    assert done.returncode == 30, done.stderr[-3000:]
    assert "[labelstudio] unknown key 'projekt_prefix'; did you mean 'project_prefix'?" in (
        done.stderr
    )


@pytest.mark.labelstudio
def test_push_pull_and_agreement_through_luigi(label_studio, tmp_path: Path) -> None:
    from label_studio_sdk import LabelStudio

    layout, items = golden_export(tmp_path)
    config = _config(tmp_path, {"project_prefix": f"luigi-{uuid.uuid4().hex[:6]}"})
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    outputs = []

    early = run(config, "pipelines.labelstudio", "PullAnnotation", env)
    outputs.append(early.stdout + early.stderr)
    assert early.returncode == 30, early.stderr[-3000:]
    assert "3 of 3 annotators are not complete" in early.stderr
    assert "not annotated yet" in early.stderr
    projects = read_json(layout.label_studio_projects)
    assert sorted(projects) == ANNOTATORS

    layout.push_stats.unlink()
    again = run(config, "pipelines.labelstudio", "PushAnnotation", env)
    outputs.append(again.stdout + again.stderr)
    assert again.returncode == 0, again.stderr[-3000:]
    assert read_json(layout.push_stats)["counts"] == {
        "projects": 3,
        "tasks_already_present": 12,
        "tasks_imported": 0,
    }
    assert read_json(layout.label_studio_projects) == projects

    client = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    judge = {i.item_id: i.judge_label for i in items}
    for annotator, entry in projects.items():
        for task in client.tasks.list(project=entry["project"], fields="task_only"):
            item = task.data["item_id"]
            label = judge[item]
            if (item, annotator) == ("it-g7", "annotator-01"):
                label = "no"
            client.annotations.create(
                id=task.id,
                result=[
                    {
                        "from_name": "relevant",
                        "to_name": "document",
                        "type": "choices",
                        "value": {"choices": [label]},
                    }
                ],
            )
    pulled = run(config, "pipelines.labelstudio", "PullAnnotation", env)
    outputs.append(pulled.stdout + pulled.stderr)
    assert pulled.returncode == 0, pulled.stderr[-3000:]
    completed = sorted(p.name for p in (tmp_path / "completed").iterdir())
    assert completed == [f"{a}.json" for a in ANNOTATORS]

    report = run(config, "pipelines.annotation", "AnnotationAgreement", {})
    assert report.returncode == 0, report.stderr[-3000:]
    agreement = read_json(layout.report_json)
    assert agreement["llm_human"]["pairs"] == 12
    assert agreement["llm_human"]["agreement"]["value"] == pytest.approx(100 * 11 / 12)
    assert [d["item_id"] for d in agreement["disagreements"]] == ["it-g7"]
    for text in [*outputs, layout.push_stats.read_text(), layout.pull_stats.read_text()]:
        assert label_studio.token not in text
