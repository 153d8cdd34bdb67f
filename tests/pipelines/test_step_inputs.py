"""Every task depends on exactly the steps whose fingerprints its plan record lists as inputs.

The plan (`tipqa.builder.plan`) says what each step is made from; the tasks (`pipelines`) say what
must run first. If a task required less, a step could run before its input exists; if it
required more (or its record listed less), a change upstream would not rerun it. A task may
also require a step upstream of its inputs whose stats it reads (the partition reads the
index builds' provenance): a change there reruns it already, through its inputs. The walk
covers every task reachable from the entry points, for an embedded build with a demo world,
one over files with the full vector index, a training order and annotation, and one whose
indexes are built in parts in Elasticsearch (no cluster needed: nothing runs but the
preparation of the questions, which dynamic dependencies need to count shards). Every step
names its main outputs, which its completion requires.
"""

from __future__ import annotations

import configparser
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import luigi
import pytest
from luigi.configuration import LuigiConfigParser
from luigi.task import flatten
from support.plan_support import write_inputs

import pipelines
from pipelines.base import StepTask
from pipelines.config import plan


def _use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **sections: dict[str, str]) -> None:
    """Make a config file of `sections` (a small build under `tmp_path`) Luigi's only one."""
    parser = configparser.ConfigParser(interpolation=None)
    build = {"name": "t", "shard_size": "7", "output_root": str(tmp_path / "outputs")}
    parser.read_dict({"core": {"log_level": "WARNING"}, "build": build, **sections})
    config = tmp_path / "luigi.cfg"
    with open(config, "w") as handle:
        parser.write(handle)
    monkeypatch.setattr(LuigiConfigParser, "_config_paths", [str(config)])
    monkeypatch.setattr(LuigiConfigParser, "_instance", None)
    LuigiConfigParser.reload()


def _dependencies(task: luigi.Task) -> list[luigi.Task]:
    dynamic = task.dynamic_requires() if isinstance(task, StepTask) else []
    return [*flatten(task.requires()), *dynamic]


def _graph(roots: list[luigi.Task]) -> list[StepTask]:
    """Every step reachable from `roots`."""
    seen: dict[str, luigi.Task] = {}
    waiting = list(roots)
    while waiting:
        task = waiting.pop()
        if task.task_id not in seen:
            seen[task.task_id] = task
            waiting.extend(_dependencies(task))
    return [task for task in seen.values() if isinstance(task, StepTask)]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _inputs(task: StepTask) -> dict[str, Any]:
    """The task's recorded inputs; Evaluate's include those of the predictions it makes."""
    inputs = dict(task.record().inputs)
    if isinstance(task, pipelines.Evaluate):
        predictions = plan().predictions(task.model_backend, task.split)
        inputs.pop("predictions")
        inputs.update(predictions.record.inputs)
    return inputs


def _upstream(fingerprints: set[str], steps: list[StepTask]) -> set[str]:
    """The steps (as inputs) that those of `fingerprints` are made from, directly or not."""
    by_input = {step.as_input(): step for step in steps}
    known = set(by_input)
    found: set[str] = set()
    waiting = list(fingerprints)
    while waiting:
        step = by_input[waiting.pop()]
        for value in set(_strings(_inputs(step))) & known - found - {step.as_input()}:
            found.add(value)
            waiting.append(value)
    return found


def _mismatches(roots: list[luigi.Task]) -> list[str]:
    steps = _graph(roots)
    known = {step.as_input() for step in steps}
    found = []
    for task in steps:
        assert all(isinstance(path, Path) for path in task.output().outputs), task
        own = task.record().fingerprint
        recorded = {v for v in _strings(_inputs(task)) if v in known} - {task.as_input()}
        steps_first = [d for d in _dependencies(task) if isinstance(d, StepTask)]
        parts = [d for d in steps_first if own in set(_strings(d.record().inputs))]
        required = {d.as_input() for d in steps_first if d not in parts}
        required -= _upstream(recorded, steps) - recorded
        if recorded != required:
            names = {step.as_input(): step.task_id for step in steps}
            found.append(
                f"{task.task_id}: required but not recorded "
                f"{sorted(names[f] for f in required - recorded)}, recorded but not required "
                f"{sorted(names[f] for f in recorded - required)}"
            )
    assert len(steps) > 10
    return found


def _prepare(pools: list[str]) -> None:
    tasks = [pipelines.PrepareQuestions(pool=pool) for pool in pools]
    assert luigi.build(tasks, local_scheduler=True, workers=1, log_level="WARNING")


def test_an_embedded_demo_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    demo = {"documents": "700", "seed": "5", "files": "3"}
    _use(tmp_path, monkeypatch, demo=demo, **{"pool.dev": {"source": "demo"}})
    _prepare(["dev"])
    roots = [pipelines.CreateDataset(), pipelines.PreviewCost(pool="dev")]
    assert _mismatches([*roots, pipelines.Evaluate(model_backend="openai", split="test")]) == []


def test_files_with_a_training_order_and_annotation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = write_inputs(tmp_path)
    for name in ("stream.idx", "stream.bin", "tokenizer.json"):
        (tmp_path / name).write_bytes(b"")
    _use(
        tmp_path,
        monkeypatch,
        corpus={"source": "files", "paths": str(inputs["corpus"])},
        vector_index={"backend": "faiss"},
        **{"pool.dev": {"source": "tipqa-jsonl", "paths": str(inputs["questions"])}},
        training_order={
            "backend": "megatron",
            "path": str(tmp_path / "stream"),
            "tokenizer": str(tmp_path / "tokenizer.json"),
        },
        boundary={"checkpoints": "1000"},
        annotation={"pool": "dev", "completed_dir": str(tmp_path / "done")},
    )
    _prepare(["dev"])
    roots = [pipelines.CreateDataset(), pipelines.AnnotationAgreement(), pipelines.PullAnnotation()]
    assert _mismatches(roots) == []


def test_an_audited_build_whose_annotations_are_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = tmp_path / "done"
    done.mkdir()
    (done / "annotator-01.csv").write_text("id,relevant\n")
    demo = {"documents": "700", "seed": "5", "files": "3"}
    annotation = {"pool": "dev", "completed_dir": str(done), "annotators": "1"}
    audit = {"apply": "true"}
    _use(tmp_path, monkeypatch, demo=demo, annotation=annotation, audit=audit,
         **{"pool.dev": {"source": "demo"}})  # fmt: skip
    _prepare(["dev"])
    hub = pipelines.BuildHubFolder()
    assert any(isinstance(task, pipelines.AnnotationAgreement) for task in hub.requires())
    assert _mismatches([pipelines.CreateDataset()]) == []


@pytest.mark.needs("elasticsearch")
def test_indexes_built_in_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = write_inputs(tmp_path)
    second = tmp_path / "corpus-2.jsonl"
    second.write_text('{"id": "d2", "text": "Varnholt is a town."}\n')
    _use(
        tmp_path,
        monkeypatch,
        corpus={"source": "files", "paths": f"{inputs['corpus']},{second}"},
        token_index={"backend": "elasticsearch", "bm25": "true"},
        vector_index={"backend": "elasticsearch"},
        elasticsearch={"url": "http://127.0.0.1:9"},
        **{"pool.dev": {"source": "tipqa-jsonl", "paths": str(inputs["questions"])}},
    )
    _prepare(["dev"])
    assert _mismatches([pipelines.CreateDataset()]) == []
