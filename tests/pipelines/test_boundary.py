"""The boundary over training time, end to end: the demo world with a synthetic training order.

The order is built the way GPT-NeoX builds Pythia's (`tipqa.training_order.synthetic`, two
epochs, so every document is read whole) from the demo world's own corpus, and the real
`luigi` command builds everything with `[boundary]` and `[training_order]` set.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from support.seed_support import DemoBuilds, seed_run
from support.tests_support import luigi_config, run_luigi

from tipqa.boundary.records import FirstSeen
from tipqa.core.jsonl import read_json, read_records
from tipqa.core.layout import RunLayout
from tipqa.core.records import LABELS, LabeledQuestion
from tipqa.core.steps import Step
from tipqa.sources.corpus.files import FileCorpus
from tipqa.training_order.synthetic import SyntheticOrder, write_training_order

pytestmark = pytest.mark.slow

SEQ_LENGTH, BATCH_SIZE = 257, 16


@dataclass
class Built:
    """A finished build and the training order it was dated with."""

    root: Path
    order: SyntheticOrder
    steps: list[int]

    @property
    def run(self) -> RunLayout:
        return RunLayout.of(self.root / "outputs", "t")

    def sections(self, **build: str) -> dict[str, dict[str, str]]:
        order = self.order
        return {
            "build": {"output_root": str(self.root / "outputs"), **build},
            "boundary": {
                "judge_all_candidates": "true",
                "checkpoints": f"0, 10, ..., {order.steps}",
            },
            "training_order": {
                "backend": "megatron",
                "path": str(order.prefix),
                "tokenizer": str(order.tokenizer),
                "seq_length": str(SEQ_LENGTH),
                "batch_size": str(BATCH_SIZE),
                "progress": "false",
            },
        }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, demo_builds: DemoBuilds) -> Built:
    """The demo world (the session's, with its indexes), its synthetic training order, then the
    whole build."""
    root = tmp_path_factory.mktemp("boundary")
    seed = demo_builds()
    corpus = FileCorpus.of(seed.world.corpus)
    order = write_training_order(
        corpus, root / "order", seq_length=SEQ_LENGTH, batch_size=BATCH_SIZE
    )
    steps = [*range(0, order.steps, 10), order.steps]
    done = Built(root, order, steps)
    config = luigi_config(root, **done.sections())
    seed_run(root, seed)
    result = run_luigi(config, "CreateDataset")
    assert result.returncode == 0, result.stderr[-3000:]
    return done


def checkpoint_rows(built: Built, step: int) -> dict[str, LabeledQuestion]:
    path = built.run.pool("dev").boundary.checkpoint(step)
    return {row.id: row for row in read_records(path, LabeledQuestion)}


def test_checkpoint_splits_are_nested_and_the_last_is_the_ordinary_split(built: Built) -> None:
    partition = built.run.pool("dev").partition
    ordinary = {
        row.id: row
        for label in LABELS
        for row in read_records(partition / f"{label}.jsonl", LabeledQuestion)
    }
    answerable = {qid for qid, row in ordinary.items() if row.label == "answerable"}
    assert len(answerable) >= 5
    previous: set[str] = set()
    for step in built.steps:
        rows = checkpoint_rows(built, step)
        assert rows.keys() == ordinary.keys()
        now = {qid for qid, row in rows.items() if row.label == "answerable"}
        assert previous <= now <= answerable, step
        for qid, row in rows.items():
            if ordinary[qid].label != "answerable":
                assert row == ordinary[qid]
        previous = now
    assert checkpoint_rows(built, built.steps[0]) != ordinary  # step 0 has read nothing
    assert checkpoint_rows(built, built.steps[-1]) == ordinary
    boundary = built.run.pool("dev").boundary
    seen = read_records(boundary.first_seen, FirstSeen)
    assert {s.question_id for s in seen} == answerable
    assert all(s.first_seen_step is not None for s in seen)
    assert all(1 <= s.first_seen_step <= built.order.steps for s in seen)  # type: ignore[operator]
    assert len({s.first_seen_step for s in seen}) > 1
    stats = read_json(boundary.stats)
    assert stats["step"] == Step.BOUNDARY and stats["counts"]["questions_seen"] == len(answerable)
    counts = stats["counts"]
    assert counts["training_order.joins_sharing_one"] > counts["training_order.joins_sharing_none"]
    assert "warnings" not in stats["info"]["training_order"]  # the default overlap is right
    upper = sum(not s.exact for s in seen)
    assert counts["questions_seen_upper_bound"] == upper
    summary = built.run.summary.read_text()
    never = counts.get("questions_never_seen", 0)
    assert (
        f"- boundary of pool **dev**: {counts['questions_seen']} answerable questions dated "
        f"({upper} of them not exact), {never} with no evidence found"
    ) in summary


def test_every_relevant_document_was_judged(built: Built) -> None:
    shards = sorted((built.run.pool("dev").shards).iterdir())
    infos = [read_json(shard / "token_judge.stats.json")["info"] for shard in shards]
    assert all(info.get("judge_all_candidates") is True for info in infos)


def test_the_hub_folder_has_a_configuration_per_checkpoint(built: Built) -> None:
    hub = built.run.hub
    card = (hub / "README.md").read_text(encoding="utf-8")
    assert "## Knowledge boundary over training time" in card
    assert "once s reaches every first-seen step the split is the ordinary one" in card
    for step in built.steps:
        assert f"config_name: questions_step{step}" in card
        assert (hub / f"questions_step{step}").is_dir()
    ordinary = pq.read_table(hub / "questions").to_pylist()
    last = pq.read_table(hub / f"questions_step{built.steps[-1]}").to_pylist()
    first = pq.read_table(hub / f"questions_step{built.steps[0]}").to_pylist()
    assert last == ordinary
    assert [r["id"] for r in first] == [r["id"] for r in ordinary]
    assert {r["label"] for r in first} <= {"unanswerable", "undetermined"}
    seen = pq.read_table(hub / "first_seen").to_pylist()
    assert sorted(r["question_id"] for r in seen) == sorted(
        r["id"] for r in ordinary if r["label"] == "answerable"
    )
    assert all(r["relevant"] and r["relevant"][0]["step"] for r in seen)


def test_the_report_and_the_index_shared_by_runs(built: Built) -> None:
    report = read_json(built.run.report / "report.json")
    test = report["boundary"]["test"]
    assert [entry["step"] for entry in test] == built.steps
    answerable = [entry["answerable"] for entry in test]
    assert answerable == sorted(answerable) and answerable[0] == 0
    assert (built.run.report / "boundary.png").stat().st_size > 0
    assert "## Answerable share over training" in (built.run.report / "report.md").read_text()
    [index] = (built.root / "outputs" / "training_index").iterdir()
    stats = index / "build.stats.json"
    assert read_json(stats)["step"] == Step.TRAINING_INDEX
    assert read_json(stats)["seconds"] > 0  # the pass itself is timed
    before = stats.stat().st_mtime_ns
    (built.root / "other").mkdir()
    other = luigi_config(built.root / "other", **built.sections(name="u"))
    again = run_luigi(other, "BuildTrainingIndex")
    assert again.returncode == 0, again.stderr[-3000:]
    assert stats.stat().st_mtime_ns == before  # another run over the same stream reuses it
