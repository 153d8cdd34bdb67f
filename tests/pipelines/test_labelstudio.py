"""PushAnnotation, PullAnnotation and AnnotationAgreement with the real `luigi` command.

The export is the golden key's, written where ExportAnnotation would, with a stats file that
records the export's fingerprint (so Luigi takes it as done and builds no partition); Label
Studio is the session's real one.
"""

from __future__ import annotations

import configparser
import uuid
from pathlib import Path

import pytest
from support.label_studio_server import refusing_server
from support.tests_support import luigi_config, run_luigi
from support.webdriver import free_port

from tipqa.annotation.export import write_exports
from tipqa.annotation.items import AnnotationItem
from tipqa.annotation.layout import AnnotationLayout
from tipqa.annotation.sampling import Sample, SamplingSettings
from tipqa.builder.plan import Plan
from tipqa.config import read_config
from tipqa.core.jsonl import read_json, read_records, write_json
from tipqa.core.stats import StepStats
from tipqa.core.steps import Step

KEY = Path(__file__).resolve().parents[1] / "data" / "annotation" / "golden-key.jsonl"
ANNOTATORS = ["annotator-01", "annotator-02", "annotator-03"]
FLIPPED = ("it-g7", "annotator-01")


def plan_of(config: Path) -> Plan:
    """The build plan of a config file, as the Luigi tasks compute it."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(config)
    return Plan(read_config({name: dict(parser[name]) for name in parser.sections()}))


def golden_export(config: Path) -> tuple[AnnotationLayout, list[AnnotationItem]]:
    """The golden key exported for three annotators where the run `t` keeps its export."""
    items = read_records(KEY, AnnotationItem)
    out = AnnotationLayout.of(config.parent / "outputs" / "t", "dev")
    write_exports(Sample(items, ANNOTATORS), SamplingSettings(8, 4, 3), out, StepStats("t"))
    record = plan_of(config).annotation_export.record
    StepStats(Step.ANNOTATION_EXPORT, provenance=record.provenance()).write(out.stats)
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


def _mtimes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}


@pytest.mark.slow
def test_a_misspelt_labelstudio_key_stops_the_task_naming_it(tmp_path: Path) -> None:
    config = _config(tmp_path, {"projekt_prefix": "x"})
    done = run_luigi(config, "PushAnnotation")
    assert done.returncode != 0, done.stderr[-3000:]
    message = "[labelstudio] unknown key 'projekt_prefix'; did you mean 'project_prefix'?"
    assert message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_push_is_done_only_for_the_server_it_went_to(tmp_path: Path) -> None:
    config = _config(tmp_path, {})
    layout, _ = golden_export(config)
    here, elsewhere = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    record = plan_of(config).annotation_push.record
    info = {"url": here}
    write_json(layout.label_studio_projects, {})
    StepStats(Step.ANNOTATION_PUSH, info=info, provenance=record.provenance()).write(
        layout.push_stats
    )
    pushed = layout.push_stats.stat().st_mtime_ns
    token = {"LABEL_STUDIO_API_KEY": "feedface" * 4}

    done = run_luigi(config, "PushAnnotation", env={"LABEL_STUDIO_URL": here, **token})
    assert done.returncode == 0, done.stderr[-3000:]
    assert layout.push_stats.stat().st_mtime_ns == pushed

    moved = run_luigi(config, "PushAnnotation", env={"LABEL_STUDIO_URL": elsewhere, **token})
    assert moved.returncode == 30, moved.stderr[-3000:]
    assert f"cannot reach Label Studio at {elsewhere} (checking the token)" in moved.stderr
    assert "feedface" not in moved.stderr
    assert layout.push_stats.stat().st_mtime_ns == pushed


@pytest.mark.slow
def test_a_refused_token_ends_the_run_in_one_paragraph_without_traceback(tmp_path: Path) -> None:
    config = _config(tmp_path, {})
    layout, _ = golden_export(config)
    token = "feedface" * 4
    with refusing_server() as url:
        env = {"LABEL_STUDIO_URL": url, "LABEL_STUDIO_API_KEY": token}
        done = run_luigi(config, "PushAnnotation", env=env)
    assert done.returncode == 30, done.stderr[-3000:]
    said = " ".join(done.stderr.split())
    assert (
        "tipqa: PushAnnotation failed while running (refused credentials): Label Studio at "
        f"{url} refused the API token in LABEL_STUDIO_API_KEY (checking the token: 401 Invalid "
        "token); set it to a current personal access token"
    ) in said
    assert "Traceback" not in done.stderr and "traceback is in the log" not in said
    assert token not in done.stdout + done.stderr and not layout.push_stats.exists()


@pytest.mark.labelstudio
def test_push_pull_and_agreement_through_luigi(label_studio, tmp_path: Path) -> None:
    from label_studio_sdk import LabelStudio

    config = _config(tmp_path, {"project_prefix": f"luigi-{uuid.uuid4().hex[:6]}"})
    layout, items = golden_export(config)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    outputs = []

    def luigi(task: str, code: int = 0) -> None:
        done = run_luigi(config, task, env=env)
        outputs.append(done.stdout + done.stderr)
        assert done.returncode == code, done.stderr[-3000:]
        if code:
            assert "3 of 3 annotators are not complete" in done.stderr
            assert "not annotated yet" in done.stderr

    luigi("PullAnnotation", 30)
    projects = read_json(layout.label_studio_projects)
    assert sorted(projects) == ANNOTATORS
    pushed = layout.push_stats.stat().st_mtime_ns
    record = plan_of(config).annotation_push.record
    assert read_json(layout.push_stats)["fingerprint"] == record.fingerprint
    luigi("PushAnnotation")
    assert layout.push_stats.stat().st_mtime_ns == pushed

    layout.push_stats.unlink()
    luigi("PushAnnotation")
    counts = {"projects": 3, "tasks_already_present": 12, "tasks_imported": 0}
    assert read_json(layout.push_stats)["counts"] == counts
    assert read_json(layout.label_studio_projects) == projects

    client = LabelStudio(base_url=label_studio.url, api_key=label_studio.token)
    judge = {i.item_id: i.judge_label for i in items}
    flipped_annotation = 0
    for annotator, entry in projects.items():
        for task in client.tasks.list(project=entry["project"], fields="task_only"):
            item = task.data["item_id"]
            flip = (item, annotator) == FLIPPED
            label = {"yes": "no", "no": "yes"}[judge[item]] if flip else judge[item]
            annotation = client.annotations.create(id=task.id, result=_relevant(label))
            if flip:
                flipped_annotation = annotation.id
    luigi("PullAnnotation")
    completed = tmp_path / "completed"
    assert sorted(completed.iterdir()) == [completed / f"{a}.json" for a in ANNOTATORS]
    assert read_json(layout.pull_stats)["step"] == Step.ANNOTATION_PULL

    luigi("AnnotationAgreement")
    agreement = read_json(layout.report_json)
    assert agreement["llm_human"]["pairs"] == 12
    assert agreement["llm_human"]["agreement"]["value"] == pytest.approx(100 * 11 / 12)
    assert [d["item_id"] for d in agreement["disagreements"]] == [FLIPPED[0]]

    files, reported = _mtimes(completed), layout.report_stats.stat().st_mtime_ns
    luigi("PullAnnotation")
    luigi("AnnotationAgreement")
    assert _mtimes(completed) == files
    assert layout.report_stats.stat().st_mtime_ns == reported

    client.annotations.update(flipped_annotation, result=_relevant(judge[FLIPPED[0]]))
    luigi("PullAnnotation")
    changed = {name for name, time in _mtimes(completed).items() if files[name] != time}
    assert changed == {f"{FLIPPED[1]}.json"}
    luigi("AnnotationAgreement")
    again = read_json(layout.report_json)
    assert again["llm_human"]["agreement"]["value"] == pytest.approx(100.0)
    assert read_json(layout.report_stats)["step"] == Step.ANNOTATION_AGREEMENT
    for text in [*outputs, layout.push_stats.read_text(), layout.pull_stats.read_text()]:
        assert label_studio.token not in text


def _relevant(label: str) -> list[dict]:
    return [
        {
            "from_name": "relevant",
            "to_name": "document",
            "type": "choices",
            "value": {"choices": [label]},
        }
    ]
